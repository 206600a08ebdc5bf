//! An exclusive lock across processes (`flock` on Unix, `LockFileEx` on Windows) on a file of the
//! store's folder, released when the guard is dropped.
//!
//! `flock` locks belong to an open file, not to a process: two guards on the same path conflict
//! inside one process too, so a holder must never take the same lock again before dropping it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use fs4::FileExt;

use super::error::StoreError;

/// A held lock. Dropping it closes the file, which releases the lock.
#[derive(Debug)]
pub struct LockGuard {
    _file: File,
}

impl LockGuard {
    /// Wait until the lock on `path` is ours (blocking: call from a blocking thread).
    pub fn acquire(path: &Path) -> Result<Self, StoreError> {
        let file = open(path)?;
        FileExt::lock(&file).map_err(|e| StoreError::io(path, e))?;
        Ok(Self { _file: file })
    }

    /// [`acquire`](Self::acquire) on a blocking thread.
    pub async fn acquire_async(path: PathBuf) -> Result<Self, StoreError> {
        tokio::task::spawn_blocking(move || Self::acquire(&path))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// When the lock file at `path` was last stamped (`None` when it does not exist yet).
pub fn changed_at(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn open(path: &Path) -> Result<File, StoreError> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map_err(|e| StoreError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let first = LockGuard::acquire(&path).expect("first");
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn({
            let path = path.clone();
            move || {
                let second = LockGuard::acquire(&path).expect("second");
                tx.send(()).expect("send");
                drop(second);
            }
        });
        // While the first guard is held the second cannot have it: nothing arrives. This is a
        // bounded check that something does NOT happen, not a wait for an event.
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(first);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the second holder got the lock once the first let go");
        waiter.join().expect("join");
    }
}
