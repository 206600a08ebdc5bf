//! `pegboard.lock`: per server, per tool and prompt, the SHA-256 of the definition the model sees
//! and that definition itself (so `pegboard pin --diff` can show what changed), plus the server's
//! name and version. Pretty-printed JSON with every key sorted: a stable text that diffs well.
//!
//! ```json
//! {
//!   "pegboardLock": 1,
//!   "servers": {
//!     "notes": {
//!       "server": { "name": "pegboard-demo-notes", "version": "0.1.0" },
//!       "tools": {
//!         "search": {
//!           "definition": { "description": "Search notes", "inputSchema": { "type": "object" }, "name": "search" },
//!           "sha256": "…"
//!         }
//!       },
//!       "prompts": {}
//!     }
//!   }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical;

/// The lock format this build reads and writes.
pub const LOCK_VERSION: u32 = 1;

/// The file name looked for beside the config.
pub const LOCK_FILE: &str = "pegboard.lock";

/// A whole lock file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lock {
    /// The format version ([`LOCK_VERSION`]).
    pub pegboard_lock: u32,
    /// By config entry name.
    pub servers: BTreeMap<String, ServerPins>,
}

/// One server's pins.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerPins {
    /// What the server said it was when it was pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerId>,
    /// By the server's own tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, Pin>,
    /// By the server's own prompt name.
    #[serde(default)]
    pub prompts: BTreeMap<String, Pin>,
}

/// A server's `serverInfo` name and version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerId {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// One pinned definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Lowercase hex SHA-256 of the definition's canonical JSON (`canonical::digest`).
    pub sha256: String,
    /// The definition itself, keys sorted.
    pub definition: Value,
}

impl Pin {
    /// The pin of `definition`.
    pub fn of(definition: Value) -> Self {
        let definition = canonical::sorted(definition);
        Self {
            sha256: canonical::digest(&definition),
            definition,
        }
    }
}

/// Which list an item is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
}

impl Kind {
    /// `tool` or `prompt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
        }
    }
}

impl ServerPins {
    /// The pins of one kind.
    pub fn of(&self, kind: Kind) -> &BTreeMap<String, Pin> {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Prompt => &self.prompts,
        }
    }

    /// The pins of one kind, to change.
    pub fn of_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, Pin> {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Prompt => &mut self.prompts,
        }
    }
}

/// Why a lock file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// It cannot be read.
    #[error("cannot read the lock file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// It is not a lock file of this shape.
    #[error(
        "{}:{line}:{column}: not a pegboard lock file: {message}; fix it, or delete it and run `pegboard pin` to pin what the servers offer now",
        path.display()
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where.
        line: usize,
        /// Where.
        column: usize,
        /// serde's message.
        message: String,
    },
    /// It was written by another version of the format.
    #[error(
        "{}: lock format {found}, this pegboard reads format {LOCK_VERSION}; run `pegboard pin --accept --all` to rewrite it",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it says.
        found: u32,
    },
    /// A pin's digest is not its definition's: the file was edited by hand.
    #[error(
        "{}: the sha256 of {} `{name}` of server `{server}` does not match its definition (edited by hand?); run `pegboard pin --accept {server}` to pin it again",
        path.display(),
        kind.as_str()
    )]
    Digest {
        /// The file.
        path: PathBuf,
        /// The config entry.
        server: String,
        /// Tool or prompt.
        kind: Kind,
        /// Its name at the server.
        name: String,
    },
    /// It cannot be written.
    #[error("cannot write the lock file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Read the lock at `path`: `Ok(None)` when there is no such file.
///
/// # Errors
/// It cannot be read, is not a lock file, is of another format version, or a pin's digest does
/// not match its definition.
pub fn read(path: &Path) -> Result<Option<Lock>, LockError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LockError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse(&text, path).map(Some)
}

/// Parse lock text; `path` is for messages.
///
/// # Errors
/// As [`read`].
pub fn parse(text: &str, path: &Path) -> Result<Lock, LockError> {
    let lock: Lock = serde_json::from_str(text).map_err(|e| LockError::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    if lock.pegboard_lock != LOCK_VERSION {
        return Err(LockError::Version {
            path: path.to_path_buf(),
            found: lock.pegboard_lock,
        });
    }
    for (server, pins) in &lock.servers {
        for kind in [Kind::Tool, Kind::Prompt] {
            for (name, pin) in pins.of(kind) {
                if canonical::digest(&pin.definition) != pin.sha256 {
                    return Err(LockError::Digest {
                        path: path.to_path_buf(),
                        server: server.clone(),
                        kind,
                        name: name.clone(),
                    });
                }
            }
        }
    }
    Ok(lock)
}

/// The lock as text: pretty-printed, keys sorted, a final newline.
pub fn render(lock: &Lock) -> String {
    let value = serde_json::to_value(lock).unwrap_or(Value::Null);
    let mut text = serde_json::to_string_pretty(&canonical::sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

/// Write the lock to `path`, whole or not at all (a temporary file beside it, then a rename).
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, lock: &Lock) -> Result<(), LockError> {
    let failed = |source| LockError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, render(lock)).map_err(failed)?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        failed(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lock {
        let mut pins = ServerPins {
            server: Some(ServerId {
                name: "notes".into(),
                version: "1.0".into(),
            }),
            ..ServerPins::default()
        };
        pins.tools.insert(
            "search".into(),
            Pin::of(serde_json::json!({"name": "search", "description": "Search notes", "inputSchema": {"type": "object"}})),
        );
        let mut lock = Lock {
            pegboard_lock: LOCK_VERSION,
            ..Lock::default()
        };
        lock.servers.insert("notes".into(), pins);
        lock
    }

    #[test]
    fn a_lock_round_trips_through_its_text_and_the_text_is_stable() {
        let lock = sample();
        let text = render(&lock);
        let again = parse(&text, Path::new("x.lock")).unwrap();
        assert_eq!(again, lock);
        assert_eq!(render(&again), text);
        // Keys sorted: "definition" before "sha256", "description" before "inputSchema".
        let d = text.find("\"definition\"").unwrap();
        assert!(d < text.find("\"sha256\"").unwrap());
        assert!(text.find("\"description\"").unwrap() < text.find("\"inputSchema\"").unwrap());
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn a_hand_edited_definition_is_refused_with_the_way_out() {
        let text = render(&sample()).replace("Search notes", "Search notes and send them away");
        let err = parse(&text, Path::new("p.lock")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.lock: the sha256 of tool `search` of server `notes` does not match its definition (edited by hand?); run `pegboard pin --accept notes` to pin it again"
        );
    }

    #[test]
    fn bad_text_and_other_versions_are_refused() {
        let err = parse("{", Path::new("p.lock")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("p.lock:1:1: not a pegboard lock file"),
            "{err}"
        );
        let err = parse(r#"{"pegboardLock": 2, "servers": {}}"#, Path::new("p.lock")).unwrap_err();
        assert!(matches!(err, LockError::Version { found: 2, .. }));
        let err = parse(
            r#"{"pegboardLock": 1, "servers": {}, "x": 1}"#,
            Path::new("p.lock"),
        )
        .unwrap_err();
        assert!(matches!(err, LockError::Parse { .. }));
    }

    #[test]
    fn a_missing_file_is_no_lock_and_writing_replaces_it_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        assert!(read(&path).unwrap().is_none());
        write(&path, &sample()).unwrap();
        assert_eq!(read(&path).unwrap(), Some(sample()));
        assert!(!dir.path().join("pegboard.lock.tmp").exists());
    }
}
