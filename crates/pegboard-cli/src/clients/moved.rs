//! What `connect` did to a client's file, so that `disconnect` can undo it: the servers
//! `--move` took out, and whether pegboard created the servers' section or the file. Kept in
//! `pegboard-connections.json` beside pegboard's config, by the client file's path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::edit_error::EditError;
use crate::safe_write::{read_if_exists, replace};

/// One client file's record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The client's name.
    pub client: String,
    /// The file did not exist before `connect`.
    #[serde(default)]
    pub created_file: bool,
    /// The servers' section did not exist before `connect`.
    #[serde(default)]
    pub created_section: bool,
    /// The entries `--move` took out, as the client wrote them, in file order.
    #[serde(default)]
    pub moved: Vec<(String, Value)>,
}

/// All records, by client file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Connections {
    #[serde(flatten)]
    by_file: BTreeMap<PathBuf, Connection>,
}

/// The records' file beside pegboard's config `config`.
pub fn file_for(config: &Path) -> PathBuf {
    config.parent().map_or_else(
        || PathBuf::from("pegboard-connections.json"),
        |d| d.join("pegboard-connections.json"),
    )
}

impl Connections {
    /// Read the records (none when the file does not exist).
    pub fn load(path: &Path) -> Result<Self, EditError> {
        match read_if_exists(path)? {
            None => Ok(Self::default()),
            Some(text) => serde_json::from_str(&text).map_err(|e| EditError::Parse {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }),
        }
    }

    /// The record of `file`.
    pub fn get(&self, file: &Path) -> Option<&Connection> {
        self.by_file.get(file)
    }

    /// Set the record of `file`.
    pub fn set(&mut self, file: &Path, connection: Connection) {
        self.by_file.insert(file.to_path_buf(), connection);
    }

    /// Forget `file`'s record.
    pub fn forget(&mut self, file: &Path) -> Option<Connection> {
        self.by_file.remove(file)
    }

    /// Write the records (the file is removed when there are none).
    pub fn save(&self, path: &Path) -> Result<(), EditError> {
        if self.by_file.is_empty() {
            return match std::fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(source) => Err(EditError::Write {
                    path: path.to_path_buf(),
                    source,
                }),
            };
        }
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        replace(path, &text)
    }
}
