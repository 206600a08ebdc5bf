//! Following the config file: `pegboard serve` reloads when the file's content changes (an
//! edit by `pegboard add`/`remove`/`enable`/`disable`, or by hand), as SIGHUP would.
//!
//! The file is polled (one `stat` every [`POLL`]) rather than watched through inotify/FSEvents:
//! editors and `pegboard` itself replace the file by renaming a new one over it, which a watch on
//! the old inode misses, and a poll needs no platform code. A change counts once the file has
//! stayed the same for [`SETTLE`] (an editor writing in several steps, several commands in a
//! row: one reload) and its content differs from what was last applied (a `touch` is no edit).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// How often the file's metadata is looked at.
pub const POLL: Duration = Duration::from_millis(250);
/// How long the file must stay unchanged before it is reloaded.
pub const SETTLE: Duration = Duration::from_millis(300);

/// What tells one state of the file from another without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&meta),
    })
}

fn digest(path: &Path) -> Option<[u8; 32]> {
    std::fs::read(path).ok().map(|b| Sha256::digest(&b).into())
}

/// The followed file and what of it was last applied.
#[derive(Debug)]
pub struct ConfigFollow {
    path: PathBuf,
    stamp: Option<Stamp>,
    applied: Option<[u8; 32]>,
}

impl ConfigFollow {
    /// Follow `path` from its content now (taken as the one the gateway runs).
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            stamp: stamp(path),
            applied: digest(path),
        }
    }

    /// Take the file's content now as applied (after a reload for another reason: SIGHUP).
    pub fn mark_applied(&mut self) {
        self.stamp = stamp(&self.path);
        self.applied = digest(&self.path);
    }

    /// Resolves once the file's content differs from the one applied and has settled; that
    /// content counts as applied from then on. A missing file is waited out.
    pub async fn changed(&mut self) {
        loop {
            tokio::time::sleep(POLL).await;
            let now = stamp(&self.path);
            if now == self.stamp {
                continue;
            }
            // Moving: wait until it stays put for SETTLE.
            let mut last = now;
            loop {
                tokio::time::sleep(SETTLE).await;
                let again = stamp(&self.path);
                if again == last {
                    break;
                }
                last = again;
            }
            self.stamp = last;
            if self.stamp.is_none() {
                continue;
            }
            let content = digest(&self.path);
            if content.is_some() && content != self.applied {
                self.applied = content;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_edit_is_seen_once_and_a_touch_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.json");
        std::fs::write(&path, "{}").expect("write");
        let mut follow = ConfigFollow::new(&path);
        // Replaced by rename, as pegboard and editors do.
        let next = dir.path().join("c.json.tmp");
        std::fs::write(&next, "{\"mcpServers\": {}}").expect("write");
        std::fs::rename(&next, &path).expect("rename");
        tokio::time::timeout(Duration::from_secs(10), follow.changed())
            .await
            .expect("the edit was seen");
        // Same content written again: not a change.
        std::fs::write(&path, "{\"mcpServers\": {}}").expect("rewrite");
        let same = tokio::time::timeout(POLL * 4 + SETTLE * 2, follow.changed()).await;
        assert!(same.is_err(), "unchanged content counted as an edit");
    }
}
