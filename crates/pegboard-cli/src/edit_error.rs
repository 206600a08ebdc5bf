//! What can go wrong when pegboard edits a config file (its own or a client's). Every message
//! says which file, and that nothing was written.

use std::path::PathBuf;

/// An edit that could not be made. Whatever the variant, the file was left as it was.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not parse: it is never written.
    #[error("{}:{line}:{column}: {message} (the file was not changed; fix it, then run this again)", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's words.
        message: String,
    },
    /// The file has no write permission bit: pegboard refuses it even when it could write it
    /// (as root), because someone made it read-only on purpose.
    #[error("{} is read-only; nothing was changed (make it writable, e.g. `chmod u+w`, to let pegboard edit it)", path.display())]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// The file parses but is not shaped as expected (e.g. `mcpServers` is a list).
    #[error("{}: {message}; nothing was changed", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No entry by that name.
    #[error("{}: no server `{name}` (servers: {})", path.display(), if names.is_empty() { "none".to_string() } else { names.join(", ") })]
    NoEntry {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The names there are.
        names: Vec<String>,
    },
    /// Writing (the backup, the temporary file, the rename, the lock) failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Neither `--config` nor a home folder to find the default config in.
    #[error(
        "cannot find where the config goes: set HOME or XDG_CONFIG_HOME, or pass --config FILE"
    )]
    NoHome,
}
