//! Edits of PegBoard's own config file under an exclusive lock: entries added, removed,
//! disabled; written atomically with a backup of the file as it was before the first change.
//!
//! The document is read as ordered maps of raw JSON at three levels (the top, the server section,
//! each entry), so the order of keys is kept everywhere: other top-level values are written back
//! as they were, and each entry field on one line with its keys in their order.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use fs4::FileExt;
use indexmap::IndexMap;
use serde_json::Value;
use serde_json::value::RawValue;

/// An entry: its fields in file order, each as written.
type Entry = IndexMap<String, Box<RawValue>>;
/// The file's top level, in file order; the server section is kept apart in [`ConfigEdit`].
type TopLevel = IndexMap<String, Box<RawValue>>;

/// The order of a new entry's fields.
const FIELD_ORDER: [&str; 7] = ["type", "command", "args", "env", "cwd", "url", "headers"];

/// What can go wrong while editing the config.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Reading, locking or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a JSON object with a server section; it is left as it is.
    #[error("{}: {message}; fix the file first, it was not changed", path.display())]
    Parse {
        /// The config file.
        path: PathBuf,
        /// What is wrong (with line and column where known).
        message: String,
    },
    /// No config location could be worked out.
    #[error(
        "cannot tell where the config goes: neither XDG_CONFIG_HOME nor HOME is set; pass --config FILE"
    )]
    NoConfigDir,
    /// `insert` of a name already taken.
    #[error("{}: a server named `{name}` already exists; remove it first or pick another name", path.display())]
    Exists {
        /// The config file.
        path: PathBuf,
        /// The name.
        name: String,
    },
    /// `remove` / `set_disabled` of a name not in the file.
    #[error("{}: no server named `{name}` (servers: {known})", path.display())]
    Unknown {
        /// The config file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The names there are, comma-separated.
        known: String,
    },
    /// The entry given is not a JSON object.
    #[error("the entry for `{0}` must be a JSON object")]
    NotAnObject(String),
}

/// An open, locked config file and its parsed document.
#[derive(Debug)]
pub struct ConfigEdit {
    path: PathBuf,
    top: TopLevel,
    /// `mcpServers` or `servers`.
    section: String,
    servers: IndexMap<String, Entry>,
    changed: bool,
    _lock: File,
}

impl ConfigEdit {
    /// Takes an exclusive lock (a `FILE.lock` beside it), reads the file; with `None` resolves the default config location like `serve` does, and when no file exists creates `$XDG_CONFIG_HOME/pegboard/config.json` (`{"mcpServers": {}}`) and says so on stderr.
    pub fn open(path: Option<&Path>) -> Result<Self, EditError> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => default_path()?,
        };
        let io = |source| EditError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let lock_path = lock_path(&path);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&lock_path)
            .map_err(|source| EditError::Io {
                path: lock_path.clone(),
                source,
            })?;
        FileExt::lock(&lock).map_err(|source| EditError::Io {
            path: lock_path,
            source,
        })?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let text = "{\n  \"mcpServers\": {}\n}\n".to_string();
                write_atomically(&path, text.as_bytes())?;
                let _ = writeln!(
                    std::io::stderr(),
                    "created {} (there was no config)",
                    path.display()
                );
                text
            }
            Err(e) => return Err(io(e)),
        };
        let parse_error = |message: String| EditError::Parse {
            path: path.clone(),
            message,
        };
        let mut top: TopLevel = serde_json::from_str(&text).map_err(|e| {
            parse_error(format!(
                "line {}, column {}: not a JSON object: {e}",
                e.line(),
                e.column()
            ))
        })?;
        let section = if top.contains_key("mcpServers") || !top.contains_key("servers") {
            "mcpServers"
        } else {
            "servers"
        }
        .to_string();
        let servers = match top.get(&section) {
            None => IndexMap::new(),
            Some(value) => serde_json::from_str::<IndexMap<String, Entry>>(value.get())
                .map_err(|e| parse_error(format!("`{section}` must map names to objects: {e}")))?,
        };
        if !top.contains_key(&section) {
            top.insert(section.clone(), raw("{}")?);
        }
        Ok(Self {
            path,
            top,
            section,
            servers,
            changed: false,
            _lock: lock,
        })
    }

    /// The config file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries under `mcpServers` (or `servers`), in file order.
    #[allow(dead_code)] // `import` and `connect` read them.
    pub fn entries(&self) -> Vec<(String, Value)> {
        self.servers
            .iter()
            .map(|(name, entry)| (name.clone(), entry_value(entry)))
            .collect()
    }

    /// Add the entry `name`; a name already there is refused.
    pub fn insert(&mut self, name: &str, entry: Value) -> Result<(), EditError> {
        if self.servers.contains_key(name) {
            return Err(EditError::Exists {
                path: self.path.clone(),
                name: name.to_string(),
            });
        }
        let Value::Object(map) = entry else {
            return Err(EditError::NotAnObject(name.to_string()));
        };
        // A `Value`'s object is sorted; the fields every host knows go first, as people write them.
        let mut fields = Entry::new();
        let mut rest: Vec<(String, Value)> = map.into_iter().collect();
        rest.sort_by_key(|(field, _)| {
            FIELD_ORDER
                .iter()
                .position(|f| f == field)
                .unwrap_or(FIELD_ORDER.len())
        });
        for (field, value) in rest {
            fields.insert(field, raw(&value.to_string())?);
        }
        self.servers.insert(name.to_string(), fields);
        self.changed = true;
        Ok(())
    }

    /// Take the entry `name` out; returns it.
    pub fn remove(&mut self, name: &str) -> Result<Value, EditError> {
        let entry = self
            .servers
            .shift_remove(name)
            .ok_or_else(|| self.unknown(name))?;
        self.changed = true;
        Ok(entry_value(&entry))
    }

    /// Set (`true`) or take away (`false`) the entry's `"disabled": true`.
    pub fn set_disabled(&mut self, name: &str, disabled: bool) -> Result<(), EditError> {
        let unknown = self.unknown(name);
        let entry = self.servers.get_mut(name).ok_or(unknown)?;
        if disabled {
            entry.insert("disabled".to_string(), raw("true")?);
        } else {
            entry.shift_remove("disabled");
        }
        self.changed = true;
        Ok(())
    }

    /// Atomic write (temp + rename), `FILE.pegboard-backup` before the first change.
    pub fn save(mut self) -> Result<(), EditError> {
        if !self.changed {
            return Ok(());
        }
        // The top level keeps its order through an IndexMap; each entry its fields likewise.
        let mut out = String::from("{\n");
        let count = self.top.len();
        let section = std::mem::take(&mut self.section);
        for (i, (key, value)) in self.top.iter().enumerate() {
            let key_text = to_json(&Value::String(key.clone()));
            let value_text = if *key == section {
                servers_text(&self.servers)
            } else {
                value.get().to_string()
            };
            out.push_str(&format!("  {key_text}: {value_text}"));
            out.push_str(if i + 1 < count { ",\n" } else { "\n" });
        }
        out.push_str("}\n");
        let backup = backup_path(&self.path);
        if !backup.exists() {
            std::fs::copy(&self.path, &backup).map_err(|source| EditError::Io {
                path: backup.clone(),
                source,
            })?;
        }
        write_atomically(&self.path, out.as_bytes())
    }

    fn unknown(&self, name: &str) -> EditError {
        let known: Vec<&str> = self.servers.keys().map(String::as_str).collect();
        EditError::Unknown {
            path: self.path.clone(),
            name: name.to_string(),
            known: if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            },
        }
    }
}

fn entry_value(entry: &Entry) -> Value {
    Value::Object(
        entry
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    serde_json::from_str(v.get()).unwrap_or(Value::Null),
                )
            })
            .collect(),
    )
}

fn raw(text: &str) -> Result<Box<RawValue>, EditError> {
    RawValue::from_string(text.to_string()).map_err(|e| EditError::NotAnObject(e.to_string()))
}

fn to_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `json` on one line: whitespace outside strings dropped, everything else (key order
/// included) as written.
fn one_line(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
            if c == ',' || c == ':' {
                out.push(' ');
            }
        }
    }
    out
}

/// The server section, entries and their fields in order.
fn servers_text(servers: &IndexMap<String, Entry>) -> String {
    if servers.is_empty() {
        return "{}".to_string();
    }
    let mut out = String::from("{\n");
    for (i, (name, entry)) in servers.iter().enumerate() {
        out.push_str(&format!("    {}: ", to_json(&Value::String(name.clone()))));
        if entry.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{\n");
            for (j, (field, value)) in entry.iter().enumerate() {
                let value = one_line(value.get());
                out.push_str(&format!(
                    "      {}: {value}",
                    to_json(&Value::String(field.clone()))
                ));
                out.push_str(if j + 1 < entry.len() { ",\n" } else { "\n" });
            }
            out.push_str("    }");
        }
        out.push_str(if i + 1 < servers.len() { ",\n" } else { "\n" });
    }
    out.push_str("  }");
    out
}

fn default_path() -> Result<PathBuf, EditError> {
    if let Ok(found) = pegboard_gateway::config::locate(None) {
        return Ok(found);
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or(EditError::NoConfigDir)?;
    Ok(base.join("pegboard").join("config.json"))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

fn lock_path(path: &Path) -> PathBuf {
    with_suffix(path, ".lock")
}

fn backup_path(path: &Path) -> PathBuf {
    with_suffix(path, ".pegboard-backup")
}

/// Write to a temp file in the same folder, sync it, rename it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EditError> {
    let io = |source| EditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut temp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(path) {
        temp.as_file()
            .set_permissions(meta.permissions())
            .map_err(io)?;
    }
    temp.write_all(bytes).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
