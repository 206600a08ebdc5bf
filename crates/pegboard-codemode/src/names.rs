//! How board tool names become JavaScript: `tools.<namespace>.<name>` with every character
//! outside `[A-Za-z0-9_$]` mapped to `_` (and a leading digit prefixed with `_`), the rule the
//! declarations state.

use serde::Serialize;

/// A tool as a run can reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// The board name (`units-convert`), what `call(...)` takes.
    pub name: String,
    /// Its namespace (`units`), if it has one.
    pub namespace: Option<String>,
    /// The tool's own name on its server (`convert`).
    pub original: String,
}

/// `text` as a JavaScript identifier: characters outside `[A-Za-z0-9_$]` become `_`, and a
/// leading digit (or nothing at all) gets a `_` in front.
pub fn js_identifier(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Where a tool sits in the `tools` object: `tools[group][key]`, or `tools[key]` without a
/// namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolPath {
    /// The board name.
    pub name: String,
    /// The namespace's identifier.
    pub group: Option<String>,
    /// The tool's identifier.
    pub key: String,
}

/// The `tools` object's layout for `entries`. Two tools whose identifiers collide keep the first
/// in order; the later one is reachable through `call(name)` only (its path is `None`).
pub fn tool_paths(entries: &[ToolEntry]) -> Vec<(ToolEntry, Option<ToolPath>)> {
    let mut taken = std::collections::HashSet::new();
    entries
        .iter()
        .map(|entry| {
            let group = entry.namespace.as_deref().map(js_identifier);
            let key = js_identifier(&entry.original);
            let path = taken
                .insert((group.clone(), key.clone()))
                .then(|| ToolPath {
                    name: entry.name.clone(),
                    group,
                    key,
                });
            (entry.clone(), path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_keep_word_characters_and_map_the_rest() {
        assert_eq!(js_identifier("convert"), "convert");
        assert_eq!(js_identifier("resolve-library-id"), "resolve_library_id");
        assert_eq!(js_identifier("a.b:c d"), "a_b_c_d");
        assert_eq!(js_identifier("3d-print"), "_3d_print");
        assert_eq!(js_identifier(""), "_");
        assert_eq!(js_identifier("$ok_1"), "$ok_1");
        assert_eq!(js_identifier("é"), "_");
    }

    #[test]
    fn a_colliding_identifier_keeps_the_first_tool() {
        let entry = |name: &str, original: &str| ToolEntry {
            name: name.into(),
            namespace: Some("ns".into()),
            original: original.into(),
        };
        let paths = tool_paths(&[entry("ns-a-b", "a-b"), entry("ns-a_b", "a_b")]);
        assert_eq!(paths[0].1.as_ref().map(|p| p.key.as_str()), Some("a_b"));
        assert!(paths[1].1.is_none());
    }
}
