//! The file store: one JSON file, `credentials.json`, in the store's private folder. Created with
//! mode 0600; every write goes to a temporary file in the same folder, is synced, then renamed
//! over the old one (and the folder synced), so a reader sees the old file or the new one, never
//! half of one, and a crash loses at most the write under way.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::StoreError;
use super::lock::LockGuard;
use super::record::CredentialRecord;

/// The file's name in the store's folder.
pub const FILE_NAME: &str = "credentials.json";

/// The file as written.
#[derive(Default, Serialize, Deserialize)]
struct Contents {
    version: u32,
    /// By [`super::StoreKey::account`].
    entries: BTreeMap<String, CredentialRecord>,
}

/// The credential file of one folder.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// The store in `dir` (created, private, on the first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The credential file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// The record under `account` (blocking).
    pub fn load(&self, account: &str) -> Result<Option<CredentialRecord>, StoreError> {
        Ok(self.read()?.entries.remove(account))
    }

    /// Replace (`Some`) or remove (`None`) the record under `account`, keeping every other one
    /// (blocking). The file is read and written under its own lock, so two processes updating
    /// different servers at once both keep their change.
    pub fn put(&self, account: &str, record: Option<CredentialRecord>) -> Result<(), StoreError> {
        super::paths::private_dir(&self.dir)?;
        let _guard = LockGuard::acquire(&self.dir.join(format!("{FILE_NAME}.lock")))?;
        let mut contents = self.read()?;
        contents.version = 1;
        match record {
            Some(record) => {
                contents.entries.insert(account.to_string(), record);
            }
            None => {
                contents.entries.remove(account);
            }
        }
        let text = serde_json::to_vec_pretty(&contents).map_err(|e| StoreError::Corrupt {
            path: self.path(),
            message: e.to_string(),
        })?;
        write_atomically(&self.path(), &text)
    }

    fn read(&self) -> Result<Contents, StoreError> {
        let path = self.path();
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
            path,
            message: e.to_string(),
        })
    }
}

/// Write `bytes` to `path` through a synced temporary file (0600) renamed over it.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // tempfile creates the file with mode 0600 on Unix, before anything is written to it.
    let mut temp = tempfile::Builder::new()
        .prefix(".credentials-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| StoreError::io(dir, e))?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| StoreError::io(temp.path(), e))?;
    temp.persist(path)
        .map_err(|e| StoreError::io(path, e.error))?;
    // The rename itself is made durable by syncing the folder.
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(dir, e))?;
    Ok(())
}
