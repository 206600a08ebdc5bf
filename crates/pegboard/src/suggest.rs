//! Close matches for a name that is not on the board ("did you mean ...?").
//!
//! The name asked for is the caller's input and may be huge; board names may be long too
//! (verbatim naming has no length limit). Similarity is therefore scored on the first
//! `SCORED_CHARS` (128) characters of each, so the work per board name is bounded whatever the
//! lengths: O(`SCORED_CHARS`²) for the score plus one linear suffix check.

/// At most this many suggestions.
const MAX_SUGGESTIONS: usize = 3;
/// Jaro-Winkler similarity below which a name is not worth suggesting.
const MIN_SIMILARITY: f64 = 0.8;
/// Characters of each name that take part in the similarity score (LLM-safe names have at most 64).
const SCORED_CHARS: usize = 128;

/// The board names closest to `wanted`, best first.
///
/// A name that ends with `wanted` (the LLM forgot the namespace: `search` for `web-search`) or
/// that `wanted` ends with (it added a wrong one) ranks first; then names by similarity. This is
/// how every "not on the board" error picks its suggestions; callers that answer for a client
/// who may see only some names pass only those.
///
/// ```
/// let close = pegboard::suggest::close_matches("search", ["web-search", "notes-add"].into_iter());
/// assert_eq!(close, ["web-search"]);
/// ```
pub fn close_matches<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted_head = head(wanted);
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|name| {
            let score = if name.ends_with(wanted) || wanted.ends_with(name) {
                2.0
            } else {
                strsim::jaro_winkler(wanted_head, head(name))
            };
            (score >= MIN_SIMILARITY).then_some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name.to_string())
        .collect()
}

/// The first [`SCORED_CHARS`] characters of `name`.
fn head(name: &str) -> &str {
    name.char_indices()
        .nth(SCORED_CHARS)
        .map_or(name, |(cut, _)| &name[..cut])
}

#[cfg(test)]
mod tests {
    use super::close_matches;

    #[test]
    fn a_missing_namespace_suggests_the_namespaced_tools() {
        let names = ["web-search", "docs-search", "units-convert"];
        assert_eq!(
            close_matches("search", names.into_iter()),
            vec!["docs-search", "web-search"]
        );
        assert_eq!(
            close_matches("units-cnvert", names.into_iter()),
            vec!["units-convert"]
        );
        assert!(close_matches("zzz", names.into_iter()).is_empty());
    }

    /// Unbounded, this is 10^6 x 10^6 character comparisons per board name (minutes); bounded,
    /// it is a few thousand. No timing is asserted: an unbounded version does not finish.
    #[test]
    fn a_huge_name_against_huge_board_names_costs_bounded_work() {
        let huge_board: Vec<String> = (0..4)
            .map(|i| format!("{}{i}", "ab".repeat(500_000)))
            .collect();
        let wanted = format!("{}x", "ab".repeat(500_000));
        let matches = close_matches(&wanted, huge_board.iter().map(String::as_str));
        // The first 128 characters agree: all four are close.
        assert_eq!(matches.len(), 3);

        let wanted = format!("{}units-convert", "z".repeat(1 << 20));
        let names = ["units-convert", "web-search"];
        assert_eq!(close_matches(&wanted, names.into_iter()), ["units-convert"]);
    }
}
