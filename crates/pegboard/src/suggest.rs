//! Close matches for a tool name that is not on the board ("did you mean ...?").

/// At most this many suggestions.
const MAX_SUGGESTIONS: usize = 3;
/// Jaro-Winkler similarity below which a name is not worth suggesting.
const MIN_SIMILARITY: f64 = 0.8;

/// The board names closest to `wanted`, best first.
///
/// A name that ends with `wanted` (the LLM forgot the namespace: `search` for `web-search`) or
/// that `wanted` ends with (it added a wrong one) ranks first; then names by similarity.
pub(crate) fn close_matches<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|name| {
            let score = if name.ends_with(wanted) || wanted.ends_with(name) {
                2.0
            } else {
                strsim::jaro_winkler(wanted, name)
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
}
