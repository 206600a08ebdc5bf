//! TOML files (Codex), edited with toml_edit: comments, blank lines, key order and the layout of
//! every table pegboard does not touch stay as they were.

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use super::order::ordered;
use crate::edit_error::EditError;
use crate::safe_write::line_col;

/// A parsed TOML file.
pub struct TomlDoc {
    doc: DocumentMut,
}

impl TomlDoc {
    /// Parse `text`; a syntax error names FILE:LINE:COL.
    pub fn parse(path: &Path, text: &str) -> Result<Self, EditError> {
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            let (line, column) = line_col(text, e.span().map_or(0, |s| s.start));
            EditError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        Ok(Self { doc })
    }

    /// The text as it is now.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }

    /// Whether the top-level `key` exists.
    pub fn has(&self, key: &str) -> bool {
        self.doc.contains_key(key)
    }

    fn container(
        &self,
        path: &Path,
        key: &str,
    ) -> Result<Option<&dyn toml_edit::TableLike>, EditError> {
        match self.doc.get(key) {
            None => Ok(None),
            Some(item) => item
                .as_table_like()
                .map(Some)
                .ok_or_else(|| EditError::Shape {
                    path: path.to_path_buf(),
                    message: format!("`{key}` is not a table"),
                }),
        }
    }

    /// The tables under top-level `key`, in file order.
    pub fn entries(&self, path: &Path, key: &str) -> Result<Vec<(String, Value)>, EditError> {
        let Some(table) = self.container(path, key)? else {
            return Ok(Vec::new());
        };
        Ok(table
            .iter()
            .map(|(name, item)| (name.to_string(), item_to_json(item)))
            .collect())
    }

    /// Add `[key.name]` (after the file's last table) or replace its contents.
    pub fn upsert(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
        value: &Value,
    ) -> Result<(), EditError> {
        if !self.doc.contains_key(key) {
            let mut parent = Table::new();
            // Only `[key.name]` headers are written, no empty `[key]` one.
            parent.set_implicit(true);
            self.doc.insert(key, Item::Table(parent));
        }
        let parent = self
            .doc
            .get_mut(key)
            .and_then(Item::as_table_mut)
            .ok_or_else(|| EditError::Shape {
                path: path.to_path_buf(),
                message: format!("`{key}` is not a table"),
            })?;
        let Value::Object(map) = value else {
            return Err(EditError::Shape {
                path: path.to_path_buf(),
                message: format!("entry `{name}` is not a table"),
            });
        };
        let mut table = Table::new();
        for (k, v) in ordered(map) {
            if let Some(item) = json_to_value(v) {
                table.insert(k, Item::Value(item));
            }
        }
        match parent.get_mut(name).and_then(Item::as_table_mut) {
            Some(existing) => {
                existing.clear();
                for (k, item) in table.iter() {
                    existing.insert(k, item.clone());
                }
            }
            None => {
                parent.insert(name, Item::Table(table));
            }
        }
        Ok(())
    }

    /// Take `[key.name]` out; `None` when it is not there.
    pub fn remove(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
    ) -> Result<Option<Value>, EditError> {
        self.container(path, key)?;
        let removed = self
            .doc
            .get_mut(key)
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.remove(name));
        Ok(removed.map(|item| item_to_json(&item)))
    }

    /// Remove the top-level `key` altogether.
    pub fn remove_key(&mut self, key: &str) {
        self.doc.remove(key);
    }
}

fn item_to_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_to_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_to_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| item_to_json(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn value_to_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match value {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::from(*i.value()),
        V::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        V::Boolean(b) => Value::Bool(*b.value()),
        V::Datetime(d) => Value::String(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(value_to_json).collect()),
        V::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_to_json(v)))
                .collect::<Map<String, Value>>(),
        ),
    }
}

/// A JSON value as a TOML value (objects become inline tables); `None` for `null`, which TOML
/// cannot say.
fn json_to_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or(0.0).into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut array = Array::new();
            for item in items.iter().filter_map(json_to_value) {
                array.push(item);
            }
            toml_edit::Value::Array(array)
        }
        Value::Object(map) => {
            let mut table = InlineTable::new();
            for (k, v) in ordered(map) {
                if let Some(v) = json_to_value(v) {
                    table.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX: &str = r#"# Codex settings
model = "o4-mini"

[mcp_servers.docs]
command = "npx"  # the docs server
args = ["-y", "mcp-docs"]

[profiles.fast]
model = "gpt-5-mini"
"#;

    #[test]
    fn an_entry_added_then_removed_leaves_the_text_as_it_was() {
        let path = Path::new("config.toml");
        let mut doc = TomlDoc::parse(path, CODEX).expect("parse");
        let entry =
            serde_json::json!({"command": "/bin/pegboard", "args": ["serve"], "env": {"A": "b"}});
        doc.upsert(path, "mcp_servers", "pegboard", &entry)
            .expect("upsert");
        let text = doc.text();
        assert!(text.contains("[mcp_servers.pegboard]"), "{text}");
        assert!(text.contains("# the docs server"), "{text}");
        let again = TomlDoc::parse(path, &text).expect("reparse");
        let entries = again.entries(path, "mcp_servers").expect("entries");
        assert_eq!(entries[1].0, "pegboard");
        assert_eq!(entries[1].1["env"]["A"], "b");
        doc.remove(path, "mcp_servers", "pegboard").expect("remove");
        assert_eq!(doc.text(), CODEX);
    }

    #[test]
    fn a_syntax_error_names_line_and_column() {
        let err = TomlDoc::parse(Path::new("/c.toml"), "a = 1\nb = [1,\n")
            .err()
            .expect("error");
        assert!(err.to_string().starts_with("/c.toml:"), "{err}");
    }
}
