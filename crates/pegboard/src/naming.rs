//! [`NamingPolicy`]: how a namespace and a tool name become the name the LLM sees.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::PegBoardError;

/// The longest name every major provider accepts (OpenAI, Bedrock: 64; Anthropic: 128).
pub const LLM_SAFE_MAX_LEN: usize = 64;

/// Hex digits of the hash appended to a name that had to be changed.
const HASH_LEN: usize = 8;

/// How names are built: `namespace` + separator + `tool`.
///
/// The default policy is LLM-safe: every name matches `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, the rule
/// that OpenAI, Anthropic, Gemini and Bedrock all accept. A name that does not fit is sanitised
/// (other characters become `_`, a leading digit or `-` gets a `_` in front) and shortened to a
/// readable head, and then gets a short hash of the *raw* full name appended, so that
///
/// - the same server always yields the same names, whatever the order of connection, and
/// - two raw names never collapse onto one board name (`a.b` and `a_b` stay apart).
///
/// [`NamingPolicy::verbatim`] keeps names exactly as `namespace-tool`, with no checks.
///
/// ```
/// use pegboard::NamingPolicy;
///
/// let policy = NamingPolicy::default();
/// assert_eq!(policy.full_name(Some("web"), "search").unwrap(), "web-search");
/// assert_eq!(policy.full_name(None, "search").unwrap(), "search");
///
/// // `.` is not allowed by OpenAI: sanitised, with a stable hash of the raw name.
/// let name = policy.full_name(Some("gh"), "repo.list").unwrap();
/// assert!(name.starts_with("gh-repo_list_"));
/// assert_eq!(name, policy.full_name(Some("gh"), "repo.list").unwrap());
///
/// let verbatim = NamingPolicy::verbatim();
/// assert_eq!(verbatim.full_name(Some("gh"), "repo.list").unwrap(), "gh-repo.list");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamingPolicy {
    separator: String,
    llm_safe: bool,
    max_len: usize,
}

impl Default for NamingPolicy {
    fn default() -> Self {
        Self {
            separator: "-".to_string(),
            llm_safe: true,
            max_len: LLM_SAFE_MAX_LEN,
        }
    }
}

impl NamingPolicy {
    /// The seed's exact behaviour: `namespace-tool`, no sanitising, no length limit.
    pub fn verbatim() -> Self {
        Self {
            separator: "-".to_string(),
            llm_safe: false,
            max_len: usize::MAX,
        }
    }

    /// Use another separator (`"_"`, `"__"`, `"."`, ...). An empty separator is refused when names are built.
    #[must_use]
    pub fn with_separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// Turn LLM-safe sanitising on or off.
    #[must_use]
    pub fn with_llm_safe(mut self, llm_safe: bool) -> Self {
        self.llm_safe = llm_safe;
        self
    }

    /// The longest name to produce in LLM-safe mode (at least 16; default 64).
    #[must_use]
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len.max(2 * HASH_LEN);
        self
    }

    /// The separator between namespace and tool name.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// Whether names are made LLM-safe.
    pub fn is_llm_safe(&self) -> bool {
        self.llm_safe
    }

    /// Check a namespace and return it trimmed; `None` or `""` mean "no namespace".
    ///
    /// # Errors
    /// [`PegBoardError::InvalidNamespace`] for a blank namespace, one made only of separators, or
    /// (LLM-safe mode) one with characters outside `[A-Za-z0-9_-]`.
    pub fn namespace<'a>(
        &self,
        namespace: Option<&'a str>,
    ) -> Result<Option<&'a str>, PegBoardError> {
        let Some(raw) = namespace else {
            return Ok(None);
        };
        if raw.is_empty() {
            return Ok(None);
        }
        let invalid = |reason: &str| PegBoardError::InvalidNamespace {
            namespace: raw.to_string(),
            reason: reason.to_string(),
        };
        let ns = raw.trim();
        if ns.is_empty() {
            return Err(invalid("it is blank; pass None (or \"\") for no namespace"));
        }
        if !self.separator.is_empty() && ns.split(self.separator.as_str()).all(str::is_empty) {
            return Err(invalid("it is made only of the separator"));
        }
        if let Some(bad) = ns.chars().find(|c| self.llm_safe && !is_safe_char(*c)) {
            return Err(invalid(&format!(
                "character {bad:?} is not allowed; use letters, digits, `_` and `-` (or NamingPolicy::with_llm_safe(false))"
            )));
        }
        Ok(Some(ns))
    }

    /// The full name of `tool` under `namespace`, as the LLM will see it.
    ///
    /// # Errors
    /// [`PegBoardError::InvalidName`] for an empty tool name or an empty separator,
    /// [`PegBoardError::InvalidNamespace`] as in [`NamingPolicy::namespace`].
    pub fn full_name(&self, namespace: Option<&str>, tool: &str) -> Result<String, PegBoardError> {
        if tool.is_empty() {
            return Err(PegBoardError::InvalidName {
                name: tool.to_string(),
                reason: "tool names cannot be empty".to_string(),
            });
        }
        let raw = match self.namespace(namespace)? {
            Some(ns) => {
                if self.separator.is_empty() {
                    return Err(PegBoardError::InvalidName {
                        name: tool.to_string(),
                        reason: "the naming policy's separator is empty".to_string(),
                    });
                }
                format!("{ns}{}{tool}", self.separator)
            }
            None => tool.to_string(),
        };
        Ok(if self.llm_safe {
            self.make_safe(raw)
        } else {
            raw
        })
    }

    fn make_safe(&self, raw: String) -> String {
        if is_llm_safe_within(&raw, self.max_len) {
            return raw;
        }
        let mut head = String::with_capacity(self.max_len);
        if !raw.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            head.push('_');
        }
        head.extend(raw.chars().map(|c| if is_safe_char(c) { c } else { '_' }));
        let keep = self.max_len - HASH_LEN - 1;
        head.truncate(keep); // ASCII only by now, so any index is a char boundary
        head.push('_');
        head.push_str(&short_hash(&raw));
        head
    }
}

/// Whether `name` is accepted by every major LLM provider: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
///
/// ```
/// assert!(pegboard::naming::is_llm_safe("web-search"));
/// assert!(!pegboard::naming::is_llm_safe("1password"));
/// assert!(!pegboard::naming::is_llm_safe("repo.list"));
/// ```
pub fn is_llm_safe(name: &str) -> bool {
    is_llm_safe_within(name, LLM_SAFE_MAX_LEN)
}

fn is_llm_safe_within(name: &str, max_len: usize) -> bool {
    !name.is_empty()
        && name.len() <= max_len
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(is_safe_char)
}

fn is_safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn short_hash(raw: &str) -> String {
    let digest = Sha256::digest(raw.as_bytes());
    let mut hex = String::with_capacity(HASH_LEN);
    for byte in digest.iter().take(HASH_LEN / 2) {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_examples_keep_their_names() {
        let p = NamingPolicy::default();
        assert_eq!(
            p.full_name(Some("web_search"), "search").unwrap(),
            "web_search-search"
        );
        assert_eq!(
            p.full_name(Some("file_search"), "search").unwrap(),
            "file_search-search"
        );
        assert_eq!(p.full_name(Some(""), "search").unwrap(), "search");
    }

    #[test]
    fn long_names_are_shortened_with_a_stable_hash() {
        let p = NamingPolicy::default();
        let tool = "a".repeat(100);
        let name = p.full_name(Some("ns"), &tool).unwrap();
        assert_eq!(name.len(), 64);
        assert!(is_llm_safe(&name));
        let other = p.full_name(Some("ns"), &format!("{tool}b")).unwrap();
        assert_ne!(name, other);
    }

    #[test]
    fn blank_or_separator_only_namespaces_are_refused() {
        let p = NamingPolicy::default();
        assert!(matches!(
            p.full_name(Some("  "), "t"),
            Err(PegBoardError::InvalidNamespace { .. })
        ));
        assert!(matches!(
            p.full_name(Some("--"), "t"),
            Err(PegBoardError::InvalidNamespace { .. })
        ));
        assert!(matches!(
            p.full_name(Some("a b"), "t"),
            Err(PegBoardError::InvalidNamespace { .. })
        ));
        assert!(matches!(
            p.full_name(Some("a"), ""),
            Err(PegBoardError::InvalidName { .. })
        ));
        assert_eq!(
            NamingPolicy::verbatim()
                .full_name(Some("a b"), "t")
                .unwrap(),
            "a b-t"
        );
    }
}
