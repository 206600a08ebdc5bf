//! JSON and JSONC files, edited on jsonc-parser's lossless tree: comments, key order, blank lines,
//! indentation and trailing commas elsewhere in the file stay as they were.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::order::ordered;
use crate::edit_error::EditError;

/// A parsed JSON(C) file.
pub struct JsonDoc {
    root: CstRootNode,
}

/// What a client file may hold (comments, trailing commas: VS Code, Zed, Gemini and opencode
/// read JSONC; the others never meet them unless the user wrote them).
pub fn lenient() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        ..strict()
    }
}

/// Plain JSON as serde_json reads it (pegboard's own config).
pub fn strict() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

impl JsonDoc {
    /// Parse `text` (an empty file is an empty object); a syntax error names FILE:LINE:COL.
    pub fn parse(path: &Path, text: &str, options: &ParseOptions) -> Result<Self, EditError> {
        let root = CstRootNode::parse(text, options).map_err(|e| EditError::Parse {
            path: path.to_path_buf(),
            line: e.line_display(),
            column: e.column_display(),
            message: e.kind().to_string(),
        })?;
        if root.value().is_some() && root.object_value().is_none() {
            return Err(EditError::Shape {
                path: path.to_path_buf(),
                message: "the file is not a JSON object".into(),
            });
        }
        Ok(Self { root })
    }

    /// The text as it is now.
    pub fn text(&self) -> String {
        self.root.to_string()
    }

    /// The whole file as a value (`Null` when empty).
    pub fn value(&self) -> Value {
        self.root.to_serde_value().unwrap_or(Value::Null)
    }

    fn container(&self, path: &Path, key: &str) -> Result<Option<CstObject>, EditError> {
        let Some(root) = self.root.object_value() else {
            return Ok(None);
        };
        let Some(prop) = root.get(key) else {
            return Ok(None);
        };
        match prop.object_value() {
            Some(obj) => Ok(Some(obj)),
            None => Err(EditError::Shape {
                path: path.to_path_buf(),
                message: format!("`{key}` is not an object"),
            }),
        }
    }

    /// Whether the top-level `key` exists.
    pub fn has(&self, key: &str) -> bool {
        self.root.object_value().and_then(|o| o.get(key)).is_some()
    }

    /// The entries of the object at top-level `key`, in file order (none when it is absent).
    pub fn entries(&self, path: &Path, key: &str) -> Result<Vec<(String, Value)>, EditError> {
        let Some(obj) = self.container(path, key)? else {
            return Ok(Vec::new());
        };
        Ok(obj
            .properties()
            .into_iter()
            .filter_map(|p| {
                let name = p.decoded_name()?;
                let value = p.value()?.to_serde_value()?;
                Some((name, value))
            })
            .collect())
    }

    /// Add `name` at the end of top-level object `key` (created when absent), or replace its value
    /// in place.
    pub fn upsert(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
        value: &Value,
    ) -> Result<(), EditError> {
        let root = self.root.object_value_or_set();
        let obj = root
            .object_value_or_create(key)
            .ok_or_else(|| EditError::Shape {
                path: path.to_path_buf(),
                message: format!("`{key}` is not an object"),
            })?;
        let input = to_input(value);
        match obj.get(name) {
            Some(prop) => prop.set_value(input),
            None => {
                obj.append(name, input);
            }
        }
        Ok(())
    }

    /// Take `name` out of top-level object `key`; `None` when it is not there.
    pub fn remove(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
    ) -> Result<Option<Value>, EditError> {
        let Some(obj) = self.container(path, key)? else {
            return Ok(None);
        };
        let Some(prop) = obj.get(name) else {
            return Ok(None);
        };
        let value = prop.value().and_then(|v| v.to_serde_value());
        prop.remove();
        Ok(Some(value.unwrap_or(Value::Null)))
    }

    /// Remove the top-level `key` altogether.
    pub fn remove_key(&mut self, key: &str) {
        if let Some(prop) = self.root.object_value().and_then(|o| o.get(key)) {
            prop.remove();
        }
    }

    /// Set (`Some`) or remove (`None`) one field of entry `name` of object `key`, leaving the
    /// entry's other fields as they are written.
    pub fn set_field(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
        field: &str,
        value: Option<&Value>,
    ) -> Result<bool, EditError> {
        let Some(obj) = self.container(path, key)? else {
            return Ok(false);
        };
        let Some(entry) = obj.get(name).and_then(|p| p.object_value()) else {
            return Ok(false);
        };
        match (entry.get(field), value) {
            (Some(prop), Some(v)) => prop.set_value(to_input(v)),
            (Some(prop), None) => prop.remove(),
            (None, Some(v)) => {
                entry.append(field, to_input(v));
            }
            (None, None) => {}
        }
        Ok(true)
    }
}

/// A value as the tree takes it, object keys in the order a reader expects (`type`, `command`,
/// `args`... first).
pub fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => CstInputValue::Object(
            ordered(map)
                .into_iter()
                .map(|(k, v)| (k.clone(), to_input(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VSCODE: &str = r#"{
  // Servers VS Code starts.
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    }
  },
  "inputs": []
}
"#;

    #[test]
    fn an_entry_added_then_removed_leaves_the_text_as_it_was() {
        let path = Path::new("mcp.json");
        let mut doc = JsonDoc::parse(path, VSCODE, &lenient()).expect("parse");
        let entry =
            serde_json::json!({"type": "stdio", "command": "/bin/pegboard", "args": ["serve"]});
        doc.upsert(path, "servers", "pegboard", &entry)
            .expect("upsert");
        let text = doc.text();
        assert!(text.contains("// Servers VS Code starts."), "{text}");
        let again = JsonDoc::parse(path, &text, &lenient()).expect("reparse");
        let names: Vec<String> = again
            .entries(path, "servers")
            .expect("entries")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["github", "pegboard"]);
        doc.remove(path, "servers", "pegboard").expect("remove");
        assert_eq!(doc.text(), VSCODE);
    }

    #[test]
    fn a_syntax_error_names_line_and_column() {
        let path = Path::new("/x/mcp.json");
        let err = JsonDoc::parse(path, "{\n  \"a\": [1,\n}", &lenient())
            .err()
            .expect("error");
        let text = err.to_string();
        assert!(text.starts_with("/x/mcp.json:3:"), "{text}");
    }
}
