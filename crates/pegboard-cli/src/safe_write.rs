//! Writing a config file without ever leaving it half-written or losing the user's version:
//! a one-time backup beside it, then a temporary file renamed over it, with the file's mode.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::edit_error::EditError;

/// The suffix of the backup written before pegboard first changes a file.
pub const BACKUP_SUFFIX: &str = ".pegboard-backup";

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The file's text, or `None` when it does not exist.
pub fn read_if_exists(path: &Path) -> Result<Option<String>, EditError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(EditError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Refuse a file without any write permission bit. Checked on the mode bits, not by trying:
/// root may write any file, and a file made read-only on purpose must stay as it is.
pub fn ensure_writable(path: &Path) -> Result<(), EditError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // a new file: its folder's permissions decide
    };
    #[cfg(unix)]
    let read_only = {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o222 == 0
    };
    #[cfg(not(unix))]
    let read_only = meta.permissions().readonly();
    if read_only {
        return Err(EditError::ReadOnly {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Write `text` to `path` atomically: when the file exists, copy it to `FILE.pegboard-backup`
/// first (only when there is no backup yet: the backup keeps the user's version from before
/// pegboard's first change), then write a temporary file beside it with the same mode and rename
/// it over the file. A symbolic link is followed: its target is replaced, the link kept.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), EditError> {
    write(path, text, true)
}

/// [`write_atomic`] without the backup (pegboard's own bookkeeping files).
pub fn replace(path: &Path, text: &str) -> Result<(), EditError> {
    write(path, text, false)
}

fn write(path: &Path, text: &str, backup: bool) -> Result<(), EditError> {
    ensure_writable(path)?;
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    };
    let write_err = |source| EditError::Write {
        path: path.to_path_buf(),
        source,
    };
    let existing = std::fs::metadata(&target).ok();
    if existing.is_some() && backup {
        let backup = with_suffix(&target, BACKUP_SUFFIX);
        if !backup.exists() {
            std::fs::copy(&target, &backup).map_err(write_err)?;
        }
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(write_err)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".pegboard-edit")
        .tempfile_in(&dir)
        .map_err(write_err)?;
    temp.write_all(text.as_bytes()).map_err(write_err)?;
    temp.as_file().sync_all().map_err(write_err)?;
    if let Some(meta) = existing {
        std::fs::set_permissions(temp.path(), meta.permissions()).map_err(write_err)?;
    }
    temp.persist(&target).map_err(|e| write_err(e.error))?;
    Ok(())
}

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_is_taken_once_and_mode_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.json");
        std::fs::write(&file, "one").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        }
        write_atomic(&file, "two").expect("first write");
        write_atomic(&file, "three").expect("second write");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "three");
        let backup = with_suffix(&file, BACKUP_SUFFIX);
        assert_eq!(std::fs::read_to_string(backup).expect("backup"), "one");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_without_write_bits_is_refused_even_for_root() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.json");
        std::fs::write(&file, "one").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        let err = write_atomic(&file, "two").expect_err("read-only");
        assert!(matches!(err, EditError::ReadOnly { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "one");
        assert!(!with_suffix(&file, BACKUP_SUFFIX).exists());
    }

    #[test]
    fn line_and_column_count_from_one() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab", 0), (1, 1));
    }
}
