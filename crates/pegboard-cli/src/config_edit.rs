//! Editing pegboard's own config file (`add`, `remove`, `enable`, `disable`, `import`,
//! `connect --move`): one entry at a time, everything else in the file kept as written, under a
//! lock so that two commands at once never lose one another's change.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use fs4::FileExt;
use serde_json::Value;

use crate::clients::format::json::{JsonDoc, strict};
pub use crate::edit_error::EditError;
use crate::safe_write::{read_if_exists, with_suffix, write_atomic};

/// The two keys a config keeps servers under (`servers`: VS Code's shape).
const SECTIONS: [&str; 2] = ["mcpServers", "servers"];

/// pegboard's config file, open for editing.
pub struct ConfigEdit {
    path: PathBuf,
    original: String,
    doc: JsonDoc,
    _lock: File,
}

impl ConfigEdit {
    /// Takes an exclusive lock (`FILE.lock` beside it) and reads the file. With `None`, finds
    /// the config as `serve` does; when there is none, creates
    /// `$XDG_CONFIG_HOME/pegboard/config.json` (`{"mcpServers": {}}`) and says so on stderr.
    /// An explicit path that does not exist is created the same way.
    pub fn open(path: Option<&Path>) -> Result<Self, EditError> {
        Self::open_with(path, true)
    }

    /// The config `open` would edit, or `None` when `open` would have to create it.
    pub fn existing(path: Option<&Path>) -> Option<PathBuf> {
        match path {
            Some(p) => p.is_file().then(|| absolute(p)),
            None => pegboard_gateway::config::locate(None)
                .ok()
                .map(|p| absolute(&p)),
        }
    }

    /// [`open`](Self::open) a scratch config at `path` (a dry run's stand-in for a config that
    /// does not exist yet), without a word on stderr.
    pub fn scratch(path: &Path) -> Result<Self, EditError> {
        Self::open_with(Some(path), false)
    }

    fn open_with(path: Option<&Path>, announce: bool) -> Result<Self, EditError> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => match pegboard_gateway::config::locate(None) {
                Ok(found) => found,
                Err(_) => default_path().ok_or(EditError::NoHome)?,
            },
        };
        let path = absolute(&path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| EditError::Write {
                path: path.clone(),
                source,
            })?;
        }
        let lock = lock(&path)?;
        let original = match read_if_exists(&path)? {
            Some(text) => text,
            None => {
                let text = "{\n  \"mcpServers\": {}\n}\n";
                write_atomic(&path, text)?;
                let _ = announce
                    && writeln!(
                        std::io::stderr(),
                        "pegboard: no config file found; created {}",
                        path.display()
                    )
                    .is_ok();
                text.to_string()
            }
        };
        let doc = JsonDoc::parse(&path, &original, &strict())?;
        for section in SECTIONS {
            doc.entries(&path, section)?;
        }
        Ok(Self {
            path,
            original,
            doc,
            _lock: lock,
        })
    }

    /// The file (absolute).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries under `mcpServers` (or `servers`), in file order.
    pub fn entries(&self) -> Vec<(String, Value)> {
        SECTIONS
            .iter()
            .flat_map(|s| self.doc.entries(&self.path, s).unwrap_or_default())
            .collect()
    }

    fn section_of(&self, name: &str) -> Option<&'static str> {
        SECTIONS.into_iter().find(|s| {
            self.doc
                .entries(&self.path, s)
                .is_ok_and(|e| e.iter().any(|(n, _)| n == name))
        })
    }

    fn main_section(&self) -> &'static str {
        if !self.doc.has("mcpServers") && self.doc.has("servers") {
            "servers"
        } else {
            "mcpServers"
        }
    }

    /// Adds or replaces one entry, keeping the rest of the file as it was.
    pub fn insert(&mut self, name: &str, entry: Value) -> Result<(), EditError> {
        let section = self.section_of(name).unwrap_or_else(|| self.main_section());
        self.doc.upsert(&self.path, section, name, &entry)
    }

    /// Removes one entry and returns it; a clear error when there is none.
    pub fn remove(&mut self, name: &str) -> Result<Value, EditError> {
        let section = self.section_of(name).ok_or_else(|| self.no_entry(name))?;
        self.doc
            .remove(&self.path, section, name)?
            .ok_or_else(|| self.no_entry(name))
    }

    /// Sets or clears the entry's `disabled` field.
    pub fn set_disabled(&mut self, name: &str, disabled: bool) -> Result<(), EditError> {
        let section = self.section_of(name).ok_or_else(|| self.no_entry(name))?;
        let value = Value::Bool(true);
        self.doc.set_field(
            &self.path,
            section,
            name,
            "disabled",
            disabled.then_some(&value),
        )?;
        Ok(())
    }

    fn no_entry(&self, name: &str) -> EditError {
        EditError::NoEntry {
            path: self.path.clone(),
            name: name.to_string(),
            names: self.entries().into_iter().map(|(n, _)| n).collect(),
        }
    }

    /// Whether an edit changed the text.
    pub fn changed(&self) -> bool {
        self.doc.text() != self.original
    }

    /// Writes atomically (temp file + rename, mode kept), a `FILE.pegboard-backup` before the
    /// first change; nothing written when nothing changed.
    pub fn save(self) -> Result<(), EditError> {
        if self.changed() {
            write_atomic(&self.path, &self.doc.text())?;
        }
        Ok(())
    }
}

/// `$XDG_CONFIG_HOME/pegboard/config.json`, else `~/.config/pegboard/config.json`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("pegboard").join("config.json"))
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path))
}

/// Wait for the exclusive lock on `FILE.lock` (released when the file is dropped).
fn lock(path: &Path) -> Result<File, EditError> {
    let lock_path = with_suffix(path, ".lock");
    let err = |source| EditError::Write {
        path: lock_path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .map_err(err)?;
    FileExt::lock(&file).map_err(err)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CONFIG: &str = r#"{
  "toolSearch": {"enabled": true},
  "mcpServers": {
    "notes": {"command": "notes-server", "args": ["--db", "n.db"]},
    "units": {
      "command": "units-server"
    }
  }
}
"#;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join("pegboard.json");
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn insert_remove_and_disable_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), CONFIG);
        let mut edit = ConfigEdit::open(Some(&path)).expect("open");
        let names: Vec<String> = edit.entries().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["notes", "units"]);
        edit.insert("docs", json!({"command": "docs-server"}))
            .expect("insert");
        edit.set_disabled("units", true).expect("disable");
        edit.save().expect("save");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with("{\n  \"toolSearch\": {\"enabled\": true},"),
            "{text}"
        );
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value["mcpServers"]["units"]["disabled"], true);
        assert_eq!(value["mcpServers"]["docs"]["command"], "docs-server");

        let mut edit = ConfigEdit::open(Some(&path)).expect("open");
        edit.set_disabled("units", false).expect("enable");
        assert_eq!(
            edit.remove("docs").expect("remove"),
            json!({"command": "docs-server"})
        );
        edit.save().expect("save");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), CONFIG);
        let backup = with_suffix(&path, crate::safe_write::BACKUP_SUFFIX);
        assert_eq!(std::fs::read_to_string(backup).expect("backup"), CONFIG);
    }

    #[test]
    fn bad_names_and_bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), CONFIG);
        let mut edit = ConfigEdit::open(Some(&path)).expect("open");
        let err = edit.remove("nope").expect_err("no entry");
        assert!(
            err.to_string()
                .contains("no server `nope` (servers: notes, units)"),
            "{err}"
        );
        drop(edit);
        let bad = write(dir.path(), "{\n  \"mcpServers\": {,}\n}\n");
        let err = ConfigEdit::open(Some(&bad)).err().expect("parse error");
        assert!(
            err.to_string()
                .starts_with(&format!("{}:2:", bad.display())),
            "{err}"
        );
    }

    #[test]
    fn edits_at_once_never_lose_one_another() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), CONFIG);
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut edit = ConfigEdit::open(Some(&path)).expect("open");
                    edit.insert(&format!("s{i}"), json!({"command": format!("server-{i}")}))
                        .expect("insert");
                    edit.save().expect("save");
                })
            })
            .collect();
        for t in threads {
            t.join().expect("join");
        }
        let edit = ConfigEdit::open(Some(&path)).expect("open");
        assert_eq!(edit.entries().len(), 10);
    }

    #[test]
    fn a_missing_config_is_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("config.json");
        let mut edit = ConfigEdit::open(Some(&path)).expect("open");
        assert!(edit.entries().is_empty());
        edit.insert("a", json!({"command": "a"})).expect("insert");
        edit.save().expect("save");
        let value: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(value, json!({"mcpServers": {"a": {"command": "a"}}}));
    }

    #[test]
    fn nothing_is_written_when_nothing_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), CONFIG);
        let edit = ConfigEdit::open(Some(&path)).expect("open");
        edit.save().expect("save");
        assert!(!with_suffix(&path, crate::safe_write::BACKUP_SUFFIX).exists());
    }
}
