//! The phrases, tags and paths the description scan looks for ([`super::scan`]): data, kept
//! apart from the scanning. Each pattern is matched case-insensitively.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// The patterns, case-insensitive. They are constants: the tests check that each compiles.
fn compiled(sources: &[&str]) -> Vec<Regex> {
    sources
        .iter()
        .filter_map(|source| {
            RegexBuilder::new(source)
                .case_insensitive(true)
                .build()
                .ok()
        })
        .collect()
}

pub(super) const OVERRIDE_SOURCES: &[&str] = &[
    r"\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*(previous|prior|above|earlier|preceding|other|existing|original|system)\s+(instructions?|prompts?|directions?|rules|guidelines|context)",
    r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|notify|alert|reveal|disclose|show)\b[^.\n]{0,40}?\b(user|human)s?\b",
    r"\b(do\s+not|don'?t|never)\s+(mention|tell|reveal|disclose)\s+(this|that|it)\b",
    r"\bwithout\s+(telling|informing|notifying|alerting|asking)\s+(the\s+)?(user|human)",
    r"\b(no\s+need|not\s+necessary)\s+to\s+(mention|tell|inform|notify|explain)",
    r"\b(silently|secretly|covertly|quietly)\s+(send|post|upload|forward|copy|call|read|include|add|exfiltrate|transmit|append)",
    r"\btakes?\s+precedence\s+over\s+(all\s+|any\s+|the\s+)?(other|previous|prior|user|system|your)\b",
    r"\b(you\s+are\s+now\s+(a|an|in)|from\s+now\s+on,?\s+you|developer\s+mode|jailbreak)\b",
    r"\bsystem\s+prompt\b",
    r"\bbefore\s+(using|calling|invoking|running)\s+(this|any|the)\s+tool,?\s+(you\s+must\s+|please\s+|first\s+|always\s+)*(read|pass|send|upload|include|cat|copy)\b",
    r"\botherwise\s+the\s+(tool|system|application|request)\s+will\s+(not\s+work|crash|fail|be\s+blocked)",
    r"\bthe\s+(system|application)\s+will\s+crash\b",
    r"\b(change|set|override|replace)\s+the\s+(recipient|destination|receiver)\b",
    r"\bsend\s+all\s+(e-?mails|messages|data|files)\s+to\b",
    r"\bwhen\s+this\s+tool\s+is\s+(available|present|loaded)",
    r"\b(very\s+)?important\s+side\s+effect\b",
];

pub(super) const MODEL_TAG_SOURCES: &[&str] = &[
    r"<\s*/?\s*(important|system|system[-_ ]?(prompt|message)|instructions?|admin|assistant|hidden|secret|critical|ai|llm|model)\s*>",
    r"<\|\s*(im_start|im_end|system|user|assistant|endoftext)\s*\|>",
    r"\[/?INST\]",
    r"<<\s*/?SYS\s*>>",
];

pub(super) const SECRET_PATH_SOURCES: &[&str] = &[
    r"~/\.ssh\b|\.ssh/|(^|[^a-z0-9])id_(rsa|dsa|ecdsa|ed25519)\b",
    r"\bmcp\.json\b|\bclaude_desktop_config\.json\b|\.cursor/",
    r"\.aws/credentials|\.git-credentials|\.netrc\b|\.npmrc\b|\.pypirc\b",
    r"/etc/(passwd|shadow)\b",
    r"(^|[\s`'(~/])\.env\b",
];

pub(super) static OVERRIDE: LazyLock<Vec<Regex>> = LazyLock::new(|| compiled(OVERRIDE_SOURCES));
pub(super) static MODEL_TAG: LazyLock<Vec<Regex>> = LazyLock::new(|| compiled(MODEL_TAG_SOURCES));
pub(super) static SECRET_PATH: LazyLock<Vec<Regex>> =
    LazyLock::new(|| compiled(SECRET_PATH_SOURCES));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(OVERRIDE.len(), OVERRIDE_SOURCES.len());
        assert_eq!(MODEL_TAG.len(), MODEL_TAG_SOURCES.len());
        assert_eq!(SECRET_PATH.len(), SECRET_PATH_SOURCES.len());
    }
}
