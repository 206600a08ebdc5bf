//! YAML files (Goose, Continue). Read with serde_norway (the serde_yaml fork: the same reading
//! Goose's own serde_yaml gives), edited with yaml-edit's lossless tree: comments, blank lines,
//! key order and quoting of everything pegboard does not touch stay as they were. What pegboard
//! writes itself (its entry, an entry put back by `disconnect`) is emitted as plain block YAML.

use std::path::Path;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use yaml_edit::Document;

use super::order::ordered;
use crate::edit_error::EditError;

/// A parsed YAML file.
pub struct YamlDoc {
    text: String,
    value: Value,
}

impl YamlDoc {
    /// Parse `text`; a syntax error names FILE:LINE:COL.
    pub fn parse(path: &Path, text: &str) -> Result<Self, EditError> {
        let value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_norway::from_str::<Value>(text).map_err(|e| {
                let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
                EditError::Parse {
                    path: path.to_path_buf(),
                    line,
                    column,
                    message: e.to_string(),
                }
            })?
        };
        if !matches!(value, Value::Null | Value::Object(_)) {
            return Err(shape(path, "the file is not a YAML mapping"));
        }
        Ok(Self {
            text: text.to_string(),
            value,
        })
    }

    /// The text as it is now.
    pub fn text(&self) -> String {
        self.text.clone()
    }

    /// Whether the top-level `key` exists.
    pub fn has(&self, key: &str) -> bool {
        self.value.get(key).is_some()
    }

    /// The entries of the mapping at `key` (`list`: of the list at `key`, each item named by its
    /// `name`), in file order.
    pub fn entries(
        &self,
        path: &Path,
        key: &str,
        list: bool,
    ) -> Result<Vec<(String, Value)>, EditError> {
        match (self.value.get(key), list) {
            (None | Some(Value::Null), _) => Ok(Vec::new()),
            (Some(Value::Object(map)), false) => {
                Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            (Some(Value::Array(items)), true) => Ok(items
                .iter()
                .map(|item| {
                    let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                    (name.to_string(), item.clone())
                })
                .collect()),
            _ => Err(shape(
                path,
                &format!("`{key}` is not a {}", if list { "list" } else { "mapping" }),
            )),
        }
    }

    fn edit(
        &mut self,
        path: &Path,
        f: impl FnOnce(&Document) -> Result<(), EditError>,
    ) -> Result<(), EditError> {
        let doc: Document = self.text.parse().map_err(|e: yaml_edit::YamlError| {
            shape(path, &format!("cannot edit the YAML: {e}"))
        })?;
        f(&doc)?;
        let text = doc.to_string();
        let reparsed = Self::parse(path, &text)?;
        *self = reparsed;
        Ok(())
    }

    /// Add `name` to the mapping (or list) at `key`, created when absent, or replace it.
    pub fn upsert(
        &mut self,
        path: &Path,
        key: &str,
        list: bool,
        name: &str,
        value: &Value,
    ) -> Result<(), EditError> {
        let index = self.index_of(path, key, list, name)?;
        let empty = match self.value.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            Some(_) => false,
        };
        if empty {
            // A new (or empty) section: written as block YAML, not as yaml-edit's flow style.
            let section = if list {
                emit(&serde_json::json!({ key: [value] }))
            } else {
                emit(&serde_json::json!({ key: { name: value } }))
            };
            let mut text = self.text.clone();
            if self.value.get(key).is_some() {
                // `key:` with nothing under it: set it through the tree.
                return self.edit(path, |doc| {
                    let root = doc
                        .as_mapping()
                        .ok_or_else(|| shape(path, "the file is not a YAML mapping"))?;
                    let generated: Document = section
                        .parse()
                        .map_err(|e: yaml_edit::YamlError| shape(path, &e.to_string()))?;
                    let gen_root = generated
                        .as_mapping()
                        .ok_or_else(|| shape(path, "internal: no mapping"))?;
                    if list {
                        let seq = gen_root
                            .get_sequence(key)
                            .ok_or_else(|| shape(path, "internal: no list"))?;
                        root.set(key, seq);
                    } else {
                        let map = gen_root
                            .get_mapping(key)
                            .ok_or_else(|| shape(path, "internal: no mapping"))?;
                        root.set(key, map);
                    }
                    Ok(())
                });
            }
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&section);
            *self = Self::parse(path, &text)?;
            return Ok(());
        }
        let generated_text = emit(value);
        self.edit(path, |doc| {
            let root = doc
                .as_mapping()
                .ok_or_else(|| shape(path, "the file is not a YAML mapping"))?;
            let generated: Document = generated_text
                .parse()
                .map_err(|e: yaml_edit::YamlError| shape(path, &e.to_string()))?;
            let node = generated
                .as_mapping()
                .ok_or_else(|| shape(path, "internal: no mapping"))?;
            if list {
                let seq = root
                    .get_sequence(key)
                    .ok_or_else(|| shape(path, &format!("`{key}` is not a list")))?;
                match index {
                    Some(i) => {
                        seq.set(i, node);
                    }
                    None => seq.push(node),
                }
            } else {
                let map = root
                    .get_mapping(key)
                    .ok_or_else(|| shape(path, &format!("`{key}` is not a mapping")))?;
                map.set(name, node);
            }
            Ok(())
        })
    }

    fn index_of(
        &self,
        path: &Path,
        key: &str,
        list: bool,
        name: &str,
    ) -> Result<Option<usize>, EditError> {
        Ok(self
            .entries(path, key, list)?
            .iter()
            .position(|(n, _)| n == name))
    }

    /// Take `name` out of the mapping (or list) at `key`; `None` when it is not there.
    pub fn remove(
        &mut self,
        path: &Path,
        key: &str,
        list: bool,
        name: &str,
    ) -> Result<Option<Value>, EditError> {
        let entries = self.entries(path, key, list)?;
        let Some(index) = entries.iter().position(|(n, _)| n == name) else {
            return Ok(None);
        };
        let removed = entries[index].1.clone();
        self.edit(path, |doc| {
            let root = doc
                .as_mapping()
                .ok_or_else(|| shape(path, "the file is not a YAML mapping"))?;
            if list {
                let seq = root
                    .get_sequence(key)
                    .ok_or_else(|| shape(path, &format!("`{key}` is not a list")))?;
                seq.remove(index);
            } else {
                let map = root
                    .get_mapping(key)
                    .ok_or_else(|| shape(path, &format!("`{key}` is not a mapping")))?;
                map.remove(name);
            }
            Ok(())
        })?;
        Ok(Some(removed))
    }

    /// Remove the top-level `key` altogether.
    pub fn remove_key(&mut self, path: &Path, key: &str) -> Result<(), EditError> {
        self.edit(path, |doc| {
            if let Some(root) = doc.as_mapping() {
                root.remove(key);
            }
            Ok(())
        })
    }
}

fn shape(path: &Path, message: &str) -> EditError {
    EditError::Shape {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// `value` as block YAML, keys in [`ordered`] order.
fn emit(value: &Value) -> String {
    serde_norway::to_string(&Ordered(value)).unwrap_or_default()
}

struct Ordered<'a>(&'a Value);

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let pairs = ordered(map);
                let mut out = serializer.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    out.serialize_entry(k, &Ordered(v))?;
                }
                out.end()
            }
            Value::Array(items) => serializer.collect_seq(items.iter().map(Ordered)),
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOSE: &str = "# Goose\nGOOSE_PROVIDER: openai  # provider\nextensions:\n  developer:\n    bundled: true\n    enabled: true\n    name: developer\n    timeout: 300\n    type: builtin\n  # memory server\n  memory:\n    cmd: npx\n    args:\n    - -y\n    - '@modelcontextprotocol/server-memory'\n    enabled: true\n    type: stdio\nGOOSE_MODEL: gpt-4o\n";

    const CONTINUE: &str = "name: Local Config\nversion: 1.0.0\nschema: v1\n# servers\nmcpServers:\n  - name: fs\n    command: npx\n    args:\n      - -y\n      - '@modelcontextprotocol/server-filesystem'\nmodels: []\n";

    #[test]
    fn a_map_entry_added_then_removed_leaves_the_text_as_it_was() {
        let path = Path::new("config.yaml");
        let mut doc = YamlDoc::parse(path, GOOSE).expect("parse");
        let entry = serde_json::json!({"type": "stdio", "cmd": "/bin/pegboard", "args": ["serve"], "enabled": true});
        doc.upsert(path, "extensions", false, "pegboard", &entry)
            .expect("upsert");
        let names: Vec<String> = doc
            .entries(path, "extensions", false)
            .expect("entries")
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["developer", "memory", "pegboard"]);
        assert!(doc.text().contains("# memory server"));
        doc.remove(path, "extensions", false, "pegboard")
            .expect("remove");
        assert_eq!(doc.text(), GOOSE);
    }

    #[test]
    fn a_list_item_added_then_removed_leaves_the_text_as_it_was() {
        let path = Path::new("config.yaml");
        let mut doc = YamlDoc::parse(path, CONTINUE).expect("parse");
        let entry =
            serde_json::json!({"name": "pegboard", "command": "/bin/pegboard", "args": ["serve"]});
        doc.upsert(path, "mcpServers", true, "pegboard", &entry)
            .expect("upsert");
        let entries = doc.entries(path, "mcpServers", true).expect("entries");
        assert_eq!(entries[1].0, "pegboard");
        assert_eq!(entries[1].1["command"], "/bin/pegboard");
        doc.remove(path, "mcpServers", true, "pegboard")
            .expect("remove");
        assert_eq!(doc.text(), CONTINUE);
    }

    #[test]
    fn a_syntax_error_names_line_and_column() {
        let err = YamlDoc::parse(Path::new("/c.yaml"), "a: 1\nb: [1, 2\n")
            .err()
            .expect("error");
        assert!(err.to_string().starts_with("/c.yaml:"), "{err}");
    }
}
