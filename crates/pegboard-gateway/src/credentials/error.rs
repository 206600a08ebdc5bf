//! Why the credential store could not do something, in the words of the person who has to act.

use std::path::PathBuf;

/// A credential store failure. Never carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Neither `$XDG_DATA_HOME` nor `$HOME` says where the file goes.
    #[error(
        "cannot tell where to keep credentials: neither XDG_DATA_HOME nor HOME is set; set one of them"
    )]
    NoDataDir,
    /// A file or folder of the store could not be read or written.
    #[error("credential store `{}`: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The credential file is not what PegBoard writes; it is left as it is.
    #[error(
        "credential file `{}` is not valid ({message}); it was left untouched: move it away to start afresh",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The OS keyring was asked for (`"credentials": "keyring"`) and did not answer.
    #[error(
        "the OS keyring is not available ({0}); start one (on Linux, a Secret Service such as \
         gnome-keyring), or set `\"credentials\": \"file\"` in the config"
    )]
    NoKeyring(String),
    /// The keyring answered with an error.
    #[error("the OS keyring failed: {0}")]
    Keyring(String),
    /// A blocking store task did not finish (the runtime is shutting down).
    #[error("the credential store task ended early: {0}")]
    Task(String),
    /// `"credentials": "store"` without a store to keep them in.
    #[error(
        "`\"credentials\": \"store\"` keeps upstream credentials in the fleet's store, and none is \
         set: give `--store redis://HOST:PORT/DB` (or PEGBOARD_STORE, or the config's \
         `store.url`){}",
        if cfg!(feature = "store") { "" } else {
            "; this pegboard was also built without the `store` feature (build it with `--features store`)"
        }
    )]
    NoStore,
    /// The key that seals credentials in the store cannot be used, or does not open them.
    #[cfg(feature = "store")]
    #[error(transparent)]
    Seal(super::seal::SealError),
    /// The fleet's store failed (it is counted in `pegboard_store_errors_total` and logged).
    #[error("credentials in the store: {0}")]
    Shared(String),
}

impl StoreError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
