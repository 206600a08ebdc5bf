//! Result caps (`"maxResultTokens": N` per server, `--max-result-tokens N` for all; off by
//! default): one tool result of 300k tokens ends an agent's context, so a result over the cap is
//! cut before it reaches the client.
//!
//! Tokens are *estimated* as UTF-8 bytes / 4 (rounded up), the usual rule of thumb for English
//! text and JSON; no tokenizer is run. A block's size is its text, or its base64 data for images,
//! audio and blobs.
//!
//! - Content blocks are kept in order while they fit; the text block that crosses the cap is cut
//!   at a character boundary; what follows is dropped (images, audio and embedded resources
//!   beyond the cap included), and a last text block says
//!   `[pegboard: result cut at N of about M tokens; ask for less]`.
//! - `structuredContent` larger than the cap makes the result an `isError` result that says so:
//!   JSON is never cut silently (a cut object would not parse, or would parse as something else).
//!
//! [`cap`] works on rmcp's typed [`CallToolResult`]; [`may_exceed`] tells from a raw answer's
//! length alone whether it may need cutting (a JSON text is never shorter than the strings it
//! holds), so the express lane parses only answers that might be over.

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Bytes counted as one token.
pub const BYTES_PER_TOKEN: usize = 4;

static CUT: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// Results cut so far in this process.
pub fn cut_count() -> u64 {
    CUT.load(Ordering::Relaxed)
}

/// Results refused (structured content over the cap) so far in this process.
pub fn refused_count() -> u64 {
    REFUSED.load(Ordering::Relaxed)
}

/// The estimated tokens of `bytes` bytes of text.
pub fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// Whether a raw answer (the whole JSON-RPC message) of `raw_len` bytes may hold a result over
/// a cap of `max_tokens`: `false` means it certainly does not, and need not be parsed for it.
pub fn may_exceed(raw_len: usize, max_tokens: usize) -> bool {
    raw_len > max_tokens.saturating_mul(BYTES_PER_TOKEN)
}

/// What [`cap`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capped {
    /// The result fits; it is unchanged.
    Within,
    /// Its content was cut at the cap (`total`: its estimated tokens before).
    Cut {
        /// The cap, in tokens.
        cap: usize,
        /// The content's estimated tokens before the cut.
        total: usize,
    },
    /// Its `structuredContent` is over the cap: it is now an `isError` result saying so.
    Refused {
        /// The cap, in tokens.
        cap: usize,
        /// The structured content's estimated tokens.
        structured: usize,
    },
}

/// Cut `result` to `max_tokens` (see the module docs); returns what was done.
pub fn cap(result: &mut CallToolResult, max_tokens: usize) -> Capped {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    if let Some(structured) = &result.structured_content {
        let size = serde_json::to_string(structured).map_or(0, |s| s.len());
        if size > budget {
            let structured = tokens(size);
            *result = CallToolResult::error(vec![ContentBlock::text(format!(
                "[pegboard: the result's structuredContent is about {structured} tokens, over the cap of {max_tokens} tokens (maxResultTokens); it was not passed on, as JSON is never cut; ask for less]"
            ))]);
            REFUSED.fetch_add(1, Ordering::Relaxed);
            return Capped::Refused {
                cap: max_tokens,
                structured,
            };
        }
    }
    let total: usize = result.content.iter().map(size).sum();
    if total <= budget {
        return Capped::Within;
    }
    let mut used = 0usize;
    let mut kept = Vec::with_capacity(result.content.len() + 1);
    for mut block in std::mem::take(&mut result.content) {
        let size = size(&block);
        if used.saturating_add(size) <= budget {
            used += size;
            kept.push(block);
            continue;
        }
        if let ContentBlock::Text(text) = &mut block
            && used < budget
        {
            let at = floor_boundary(&text.text, budget - used);
            text.text.truncate(at);
            used = budget;
            if at > 0 {
                kept.push(block);
            }
        }
        // Anything else past the cap (more text, images, audio, resources) is left out; the
        // notice below stands for it.
    }
    let total = tokens(total);
    kept.push(ContentBlock::text(format!(
        "[pegboard: result cut at {max_tokens} of about {total} tokens; ask for less]"
    )));
    result.content = kept;
    CUT.fetch_add(1, Ordering::Relaxed);
    Capped::Cut {
        cap: max_tokens,
        total,
    }
}

/// A block's size in bytes: its text, or its base64 data.
fn size(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(t) => t.text.len(),
        ContentBlock::Image(i) => i.data.len(),
        ContentBlock::Audio(a) => a.data.len(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { text, .. } => text.len(),
            ResourceContents::BlobResourceContents { blob, .. } => blob.len(),
            other => json_len(other),
        },
        other => json_len(other),
    }
}

/// The length of a value's JSON: the size of a kind of block this build does not know.
fn json_len(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// The largest character boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, ResourceContents};

    use super::*;

    fn notice(result: &CallToolResult) -> String {
        result
            .content
            .last()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn may_exceed_is_bytes_over_four_per_token() {
        assert!(!may_exceed(4_000, 1_000));
        assert!(may_exceed(4_001, 1_000));
    }

    #[test]
    fn a_long_text_is_cut_with_the_notice_last() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("x".repeat(1_000))]);
        assert_eq!(
            cap(&mut result, 100),
            Capped::Cut {
                cap: 100,
                total: 250
            }
        );
        assert_eq!(result.content[0].as_text().map(|t| t.text.len()), Some(400));
        assert_eq!(
            result.content[1].as_text().map(|t| t.text.as_str()),
            Some("[pegboard: result cut at 100 of about 250 tokens; ask for less]")
        );
    }

    #[test]
    fn a_2_mb_text_result_is_cut_at_a_character_boundary_with_a_notice() {
        // 2 MiB of 3-byte characters: the cut must not split one.
        let text = "€".repeat((2 << 20) / 3);
        let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        let outcome = cap(&mut result, 25_000);
        let total = tokens(text.len());
        assert_eq!(outcome, Capped::Cut { cap: 25_000, total });
        assert_eq!(result.content.len(), 2);
        let kept = &result.content[0].as_text().unwrap().text;
        assert!(
            kept.len() <= 100_000 && kept.len() > 99_996,
            "{}",
            kept.len()
        );
        assert!(kept.chars().all(|c| c == '€'));
        assert_eq!(
            notice(&result),
            format!("[pegboard: result cut at 25000 of about {total} tokens; ask for less]")
        );
        assert_ne!(result.is_error, Some(true));
    }

    #[test]
    fn a_result_within_the_cap_is_untouched() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("small")]);
        let before = result.clone();
        assert_eq!(cap(&mut result, 2), Capped::Within);
        assert_eq!(result, before);
    }

    #[test]
    fn images_and_resources_past_the_cap_are_replaced_by_the_notice() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("a".repeat(30)),
            ContentBlock::image("A".repeat(400), "image/png"),
            ContentBlock::resource(ResourceContents::text("r".repeat(50), "file:///x")),
            ContentBlock::text("b".repeat(10)),
        ]);
        let outcome = cap(&mut result, 10);
        assert_eq!(
            outcome,
            Capped::Cut {
                cap: 10,
                total: 123
            }
        );
        // 40 bytes: the first text (30), then the image does not fit and the text after it
        // gets the 10 left.
        assert_eq!(result.content.len(), 3);
        assert_eq!(result.content[0].as_text().unwrap().text.len(), 30);
        assert_eq!(result.content[1].as_text().unwrap().text, "b".repeat(10));
        assert!(notice(&result).starts_with("[pegboard: result cut at 10 of about 123 tokens"));
    }

    #[test]
    fn large_structured_content_makes_an_error_result_never_a_cut_json() {
        let rows: Vec<serde_json::Value> = (0..20_000)
            .map(|i| serde_json::json!({"row": i, "name": format!("item {i}")}))
            .collect();
        let structured = serde_json::json!({"rows": rows});
        let size = serde_json::to_string(&structured).unwrap().len();
        let mut result = CallToolResult::structured(structured);
        let outcome = cap(&mut result, 1_000);
        assert_eq!(
            outcome,
            Capped::Refused {
                cap: 1_000,
                structured: tokens(size)
            }
        );
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None);
        assert_eq!(result.content.len(), 1);
        assert!(
            notice(&result).contains("structuredContent is about"),
            "{}",
            notice(&result)
        );
        // Under the cap it passes whole.
        let mut small = CallToolResult::structured(serde_json::json!({"ok": true}));
        assert_eq!(cap(&mut small, 1_000), Capped::Within);
    }

    #[test]
    fn the_raw_check_never_says_no_to_a_result_that_needs_cutting() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("\u{1}\"é".repeat(300))]);
        let raw = serde_json::to_string(&result).unwrap();
        for cap_tokens in [1, 100, 400, 450, 10_000] {
            let before = result.clone();
            let needed = cap(&mut result, cap_tokens) != Capped::Within;
            result = before;
            if needed {
                assert!(may_exceed(raw.len(), cap_tokens), "cap {cap_tokens}");
            }
        }
    }
}
