//! The definition of a tool or prompt as the model sees it, in one canonical JSON text, and its
//! SHA-256: what a pin holds.
//!
//! A tool's definition is its `name`, `title`, `description`, `inputSchema`, `outputSchema` and
//! `annotations`; a prompt's its `name`, `title`, `description` and `arguments` (fields the
//! server leaves out stay out; `_meta`, `icons` and the like are not part of it). The canonical
//! text has every object's keys sorted (by their UTF-8 bytes) and no whitespace, as serde_json
//! writes strings and numbers: the same definition always gives the same text, whatever the order
//! or spacing the server sent. (This is RFC 8785's key order; numbers are written as serde_json
//! writes them, not re-encoded as RFC 8785 asks, which makes no difference for the integers and
//! short decimals schemas use.)

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The fields of a tool that reach the model.
pub const TOOL_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// The fields of a prompt that reach the model.
pub const PROMPT_FIELDS: &[&str] = &["name", "title", "description", "arguments"];

/// A tool's definition (see the module docs), keys sorted at every depth.
pub fn tool_definition(tool: &rmcp::model::Tool) -> Value {
    pick(
        serde_json::to_value(tool).unwrap_or(Value::Null),
        TOOL_FIELDS,
    )
}

/// A prompt's definition (see the module docs), keys sorted at every depth.
pub fn prompt_definition(prompt: &rmcp::model::Prompt) -> Value {
    pick(
        serde_json::to_value(prompt).unwrap_or(Value::Null),
        PROMPT_FIELDS,
    )
}

fn pick(value: Value, fields: &[&str]) -> Value {
    let Value::Object(mut all) = value else {
        return Value::Object(Map::new());
    };
    let mut kept = Map::new();
    for field in fields {
        if let Some(v) = all.remove(*field) {
            kept.insert((*field).to_string(), v);
        }
    }
    sorted(Value::Object(kept))
}

/// `value` with the keys of every object in sorted order (whatever map serde_json was built with).
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The canonical text of a definition: keys sorted, no whitespace.
pub fn canonical(definition: &Value) -> String {
    // A `Value` always serialises; sorting first makes the order independent of the map type.
    serde_json::to_string(&sorted(definition.clone())).unwrap_or_default()
}

/// The lowercase hex SHA-256 of a definition's canonical text.
pub fn digest(definition: &Value) -> String {
    let hash = Sha256::digest(canonical(definition).as_bytes());
    hash.iter()
        .fold(String::with_capacity(64), |mut out, byte| {
            use std::fmt::Write as _;
            let _ = write!(out, "{byte:02x}");
            out
        })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_same_definition_in_any_key_order_has_one_digest() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":"s"}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{ "a": {"x": "s", "y": [1, {"c": 3, "d": 2}]}, "b": 1 }"#)
                .unwrap();
        assert_eq!(
            canonical(&a),
            r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(digest(&a).len(), 64);
    }

    #[test]
    fn a_tool_definition_keeps_only_what_the_model_sees() {
        let schema: Arc<serde_json::Map<String, Value>> = Arc::new(
            serde_json::from_str(r#"{"type":"object","properties":{"q":{"type":"string"}}}"#)
                .unwrap(),
        );
        let mut tool = rmcp::model::Tool::new("search", "Search notes", schema);
        tool.meta = Some(rmcp::model::MetaObject(serde_json::Map::from_iter([(
            "x".to_string(),
            Value::from(1),
        )])));
        let definition = tool_definition(&tool);
        let keys: Vec<&String> = definition.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["description", "inputSchema", "name"]);
        // The empty-string SHA-256 is never what a definition hashes to.
        assert_ne!(
            digest(&definition),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let mut changed = tool.clone();
        changed.description = Some("Search notes.".into());
        assert_ne!(digest(&tool_definition(&changed)), digest(&definition));
    }

    #[test]
    fn a_known_digest() {
        // printf '{"name":"a"}' | sha256sum
        assert_eq!(
            digest(&serde_json::json!({"name": "a"})),
            "d9d719b27480b55cd4918020e7473e716ed3569c8adafe926cf9b10b4f8ef064"
        );
    }
}
