//! The guard fields of a config: `onChange`, `onNew`, `stripInvisible`, `maxResultTokens` (per
//! entry, or at the top of the file for every entry), `lockFile` (top only), and the lock itself,
//! read beside the config. See [`crate::pins`] and [`crate::guards`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::pins::lock::{self, LOCK_FILE, Lock};
use crate::pins::{Guards, OnChange, OnNew};

/// The guard fields as written (top of the file, or one entry).
#[derive(Clone, Debug, Default)]
pub(super) struct RawGuards {
    pub(super) on_change: Option<String>,
    pub(super) on_new: Option<String>,
    pub(super) strip_invisible: Option<bool>,
    pub(super) max_result_tokens: Option<f64>,
}

/// The largest `maxResultTokens` accepted.
const MAX_RESULT_TOKENS: f64 = 1e9;

impl RawGuards {
    /// These fields over `defaults` (the file's, for an entry; [`Guards::default`] for the file).
    pub(super) fn over(&self, defaults: &Guards) -> Result<Guards, String> {
        let mut guards = defaults.clone();
        if let Some(text) = &self.on_change {
            guards.on_change = text.parse::<OnChange>()?;
        }
        if let Some(text) = &self.on_new {
            guards.on_new = text.parse::<OnNew>()?;
        }
        if let Some(strip) = self.strip_invisible {
            guards.strip_invisible = strip;
        }
        if let Some(n) = self.max_result_tokens {
            if !(n.fract() == 0.0 && (1.0..=MAX_RESULT_TOKENS).contains(&n)) {
                return Err(format!(
                    "`maxResultTokens` must be a whole number of tokens between 1 and {MAX_RESULT_TOKENS} (got {n})"
                ));
            }
            // A whole number up to 1e9 fits in usize.
            guards.max_result_tokens = Some(n as usize);
        }
        // Each entry gets a record of its own.
        guards.report = crate::pins::Report::default();
        Ok(guards)
    }
}

/// Where the lock of the config at `source` is: `lockFile` (relative to the config's folder),
/// else `pegboard.lock` beside the config.
pub(super) fn lock_path(source: &Path, lock_file: Option<&str>) -> PathBuf {
    let folder = source.parent().unwrap_or(Path::new(""));
    match lock_file {
        Some(file) => folder.join(file),
        None => folder.join(LOCK_FILE),
    }
}

/// Give each server its section of `lock` (an empty one when the lock has none for it).
pub(super) fn attach(servers: &mut [super::ServerConfig], lock: Option<&Lock>) {
    for server in servers {
        server.guards.pins =
            lock.map(|lock| Arc::new(lock.servers.get(&server.name).cloned().unwrap_or_default()));
    }
}

/// Read the lock at `path` (`None`: no such file).
pub(super) fn read_lock(path: &Path) -> Result<Option<Lock>, lock::LockError> {
    lock::read(path)
}
