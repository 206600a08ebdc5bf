//! The config loader never panics, whatever the file holds: it parses, or says why not.

use std::path::Path;

use pegboard_gateway::config::{expand, parse, safe_namespace};
use proptest::prelude::*;

fn vars(name: &str) -> Option<String> {
    (name == "SET").then(|| "value".to_string())
}

/// Text near a config: JSON fragments, `${` forms, keys with odd characters, repeated keys.
fn configish() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just(r#"{"command": "x"}"#.to_string()),
        Just(r#"{"url": "http://h/mcp"}"#.to_string()),
        Just(r#"{"type": "sse", "url": "http://h/sse"}"#.to_string()),
        "\\PC{0,20}"
            .prop_map(|s| format!(r#"{{"command": "x", "args": [{}]}}"#, serde_json::json!(s))),
        "[${}:a-zA-Z_ -]{0,20}"
            .prop_map(|s| format!(r#"{{"command": "{s}", "env": {{"K": "{s}"}}}}"#)),
        Just(r#"{"command": "x", "timeout": -1e309}"#.to_string()),
        Just(r#"{"command": 1}"#.to_string()),
    ];
    let key = prop_oneof!["\\PC{0,12}", Just(String::new()), Just("a".to_string())];
    let section = prop_oneof![Just("mcpServers"), Just("servers"), Just("other")];
    prop::collection::vec((section, key, value), 0..6).prop_map(|entries| {
        let body: Vec<String> = entries
            .iter()
            .map(|(section, key, value)| {
                format!(
                    "{}: {{{}: {value}}}",
                    serde_json::json!(section),
                    serde_json::json!(key)
                )
            })
            .collect();
        format!("{{{}}}", body.join(", "))
    })
}

proptest! {
    #[test]
    fn any_text_parses_or_is_refused_without_panic(text in "\\PC{0,200}") {
        let _ = parse(&text, Path::new("fuzz.json"), &vars);
    }

    #[test]
    fn config_shaped_text_parses_or_is_refused_without_panic(text in configish()) {
        if let Ok(cfg) = parse(&text, Path::new("fuzz.json"), &vars) {
            for skipped in cfg.skipped() {
                prop_assert!(!skipped.to_string().is_empty());
            }
            for server in &cfg.servers {
                if let Some(ns) = &server.namespace {
                    prop_assert!(ns.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{ns}");
                }
            }
        }
    }

    #[test]
    fn expand_never_panics(text in "[${}:a-zA-Z_ -]{0,40}") {
        let _ = expand(&text, &vars);
    }

    #[test]
    fn safe_namespaces_keep_only_safe_characters(raw in "\\PC{0,40}") {
        let ns = safe_namespace(&raw);
        prop_assert!(ns.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{ns}");
    }
}
