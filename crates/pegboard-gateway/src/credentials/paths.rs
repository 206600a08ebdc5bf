//! Where the store's files live: `$XDG_DATA_HOME/pegboard/` (default `~/.local/share/pegboard/`),
//! a folder only its owner may enter (0700).

use std::path::{Path, PathBuf};

use super::error::StoreError;

/// `$XDG_DATA_HOME/pegboard`, else `$HOME/.local/share/pegboard`. An `XDG_DATA_HOME` that is not
/// absolute is ignored, as the XDG spec says.
pub fn data_dir() -> Result<PathBuf, StoreError> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or(StoreError::NoDataDir)?;
    Ok(base.join("pegboard"))
}

/// Create `dir` (and its parents) and make it private to its owner (0700 on Unix).
pub fn private_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| StoreError::io(dir, e))?;
    }
    Ok(())
}
