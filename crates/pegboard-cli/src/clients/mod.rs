//! The MCP clients pegboard can import servers from and connect to itself: where their files
//! are ([`known`]), how to edit those files without losing a line ([`format`]), their entries'
//! shapes ([`convert`]), and the two operations ([`import`], [`connect`]).

pub mod connect;
pub mod convert;
pub mod format;
pub mod import;
pub mod known;
pub mod moved;

use std::path::PathBuf;

use crate::edit_error::EditError;
use known::ClientId;

/// What a client command could not do. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No client by that name.
    #[error("unknown client `{0}` (known: {known})", known = known::names().join(", "))]
    Unknown(String),
    /// `--scope project` for a client without a project file.
    #[error(
        "{client} has no project-scope file (clients that have one: {which}); use --scope user"
    )]
    NoProjectScope {
        /// The client.
        client: &'static str,
        /// Those that have one.
        which: String,
    },
    /// No home folder to find the client's file in.
    #[error("cannot find {0}'s config file: set HOME")]
    NoHome(&'static str),
    /// The client cannot take the entry asked for.
    #[error("{0}")]
    Launcher(String),
    /// `disconnect` with nothing to undo.
    #[error("{client} is not connected: {} has no `pegboard` entry", path.display())]
    NotConnected {
        /// The client.
        client: &'static str,
        /// Its file.
        path: PathBuf,
    },
    /// The path of this binary is unknown (`connect` writes it into the client's file).
    #[error("cannot tell where this pegboard binary is: {0}")]
    CurrentExe(std::io::Error),
    /// A file could not be read, parsed or written.
    #[error(transparent)]
    Edit(#[from] EditError),
}

/// The client called `name`.
pub fn client_named(name: &str) -> Result<ClientId, ClientError> {
    ClientId::parse(name).ok_or_else(|| ClientError::Unknown(name.to_string()))
}
