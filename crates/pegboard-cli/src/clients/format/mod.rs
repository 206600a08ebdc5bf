//! The three file formats clients keep their servers in, each edited so that everything pegboard
//! does not change stays as the user wrote it.
//!
//! | format | kept | lost |
//! |---|---|---|
//! | JSON / JSONC | comments, key order, blank lines, indentation, trailing commas | nothing outside pegboard's entry |
//! | TOML | comments, key order, table layout, whitespace | nothing outside pegboard's table |
//! | YAML | comments, key order, quoting, blank lines | nothing outside pegboard's entry; an entry put back by `disconnect` is re-emitted as plain block YAML (its own comments and quoting are not kept) |

pub mod json;
mod order;
pub mod toml;
pub mod yaml;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::edit_error::EditError;

/// A file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, comments and trailing commas allowed.
    Json,
    /// TOML.
    Toml,
    /// YAML.
    Yaml,
}

/// Where in the file the servers are: a top-level map of entries by name, or (Continue) a
/// top-level list of entries, each with its `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// `{ KEY: { NAME: entry } }`
    Map(&'static str),
    /// `KEY: [ { name: NAME, ... } ]`
    List(&'static str),
}

impl Container {
    /// The top-level key.
    pub fn key(self) -> &'static str {
        match self {
            Container::Map(k) | Container::List(k) => k,
        }
    }
}

enum Inner {
    Json(json::JsonDoc),
    Toml(toml::TomlDoc),
    Yaml(yaml::YamlDoc),
}

/// A client's file, parsed, with the edits made so far.
pub struct ClientDoc {
    path: PathBuf,
    original: Option<String>,
    container: Container,
    inner: Inner,
}

impl ClientDoc {
    /// Read and parse the file at `path` (a missing file is an empty one).
    pub fn open(path: &Path, format: Format, container: Container) -> Result<Self, EditError> {
        let original = crate::safe_write::read_if_exists(path)?;
        let text = original.as_deref().unwrap_or("");
        Self::parse(path, text, original.clone(), format, container)
    }

    /// Parse `text` as the contents of `path`.
    pub fn parse(
        path: &Path,
        text: &str,
        original: Option<String>,
        format: Format,
        container: Container,
    ) -> Result<Self, EditError> {
        let inner = match format {
            Format::Json => Inner::Json(json::JsonDoc::parse(path, text, &json::lenient())?),
            Format::Toml => Inner::Toml(toml::TomlDoc::parse(path, text)?),
            Format::Yaml => Inner::Yaml(yaml::YamlDoc::parse(path, text)?),
        };
        Ok(Self {
            path: path.to_path_buf(),
            original,
            container,
            inner,
        })
    }

    /// Whether the file existed.
    pub fn existed(&self) -> bool {
        self.original.is_some()
    }

    /// Whether the servers' section exists.
    pub fn has_container(&self) -> bool {
        let key = self.container.key();
        match &self.inner {
            Inner::Json(d) => d.has(key),
            Inner::Toml(d) => d.has(key),
            Inner::Yaml(d) => d.has(key),
        }
    }

    /// The servers, by name, in file order, as the client writes them.
    pub fn entries(&self) -> Result<Vec<(String, Value)>, EditError> {
        let (key, list) = self.where_();
        match &self.inner {
            Inner::Json(d) if list => list_entries(&self.path, d.value().get(key)),
            Inner::Json(d) => d.entries(&self.path, key),
            Inner::Toml(d) => d.entries(&self.path, key),
            Inner::Yaml(d) => d.entries(&self.path, key, list),
        }
    }

    fn where_(&self) -> (&'static str, bool) {
        (
            self.container.key(),
            matches!(self.container, Container::List(_)),
        )
    }

    /// Add or replace entry `name` (for a list, `value` carries the `name`).
    pub fn upsert(&mut self, name: &str, value: &Value) -> Result<(), EditError> {
        let (key, list) = self.where_();
        match &mut self.inner {
            Inner::Json(_) if list => Err(unsupported(&self.path)),
            Inner::Json(d) => d.upsert(&self.path, key, name, value),
            Inner::Toml(d) => d.upsert(&self.path, key, name, value),
            Inner::Yaml(d) => d.upsert(&self.path, key, list, name, value),
        }
    }

    /// Take entry `name` out; `None` when there is none.
    pub fn remove(&mut self, name: &str) -> Result<Option<Value>, EditError> {
        let (key, list) = self.where_();
        match &mut self.inner {
            Inner::Json(_) if list => Err(unsupported(&self.path)),
            Inner::Json(d) => d.remove(&self.path, key, name),
            Inner::Toml(d) => d.remove(&self.path, key, name),
            Inner::Yaml(d) => d.remove(&self.path, key, list, name),
        }
    }

    /// Remove the servers' section altogether (when pegboard created it and it is empty again).
    pub fn remove_container(&mut self) -> Result<(), EditError> {
        let key = self.container.key();
        match &mut self.inner {
            Inner::Json(d) => {
                d.remove_key(key);
                Ok(())
            }
            Inner::Toml(d) => {
                d.remove_key(key);
                Ok(())
            }
            Inner::Yaml(d) => d.remove_key(&self.path, key),
        }
    }

    /// The text as it is now.
    pub fn text(&self) -> String {
        match &self.inner {
            Inner::Json(d) => d.text(),
            Inner::Toml(d) => d.text(),
            Inner::Yaml(d) => d.text(),
        }
    }

    /// Write the file (atomically, backup first) when its text changed; whether it was written.
    pub fn save(&self) -> Result<bool, EditError> {
        let text = self.text();
        if self.original.as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        crate::safe_write::write_atomic(&self.path, &text)?;
        Ok(true)
    }
}

fn list_entries(path: &Path, value: Option<&Value>) -> Result<Vec<(String, Value)>, EditError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items
            .iter()
            .map(|i| {
                let name = i.get("name").and_then(Value::as_str).unwrap_or_default();
                (name.to_string(), i.clone())
            })
            .collect()),
        Some(_) => Err(EditError::Shape {
            path: path.to_path_buf(),
            message: "the servers' section is not a list".into(),
        }),
    }
}

fn unsupported(path: &Path) -> EditError {
    EditError::Shape {
        path: path.to_path_buf(),
        message: "pegboard cannot edit a list of servers in a JSON file".into(),
    }
}
