//! Why a login, logout or connection could not go on, in words that say what to do.

use crate::credentials::StoreError;

/// A server needs a (new) login before it can be used: the message every call of its tools
/// gets, and the startup line on stderr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server `{server}` needs a login: run `pegboard login {server}`")]
pub struct NeedsLogin {
    /// The config entry's key.
    pub server: String,
}

/// Whether `error` (or one of its causes) is a [`NeedsLogin`].
pub fn needs_login(error: &anyhow::Error) -> Option<&NeedsLogin> {
    error.chain().find_map(|e| e.downcast_ref::<NeedsLogin>())
}

/// Why `pegboard login` / `logout` failed. Never carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoginError {
    /// The config entry is not a `url` server.
    #[error("server `{0}` is not a `url` server; only those log in with OAuth")]
    NotHttp(String),
    /// The config has an `Authorization` header for it.
    #[error(
        "server `{0}` has an `Authorization` header in the config, which is used as it is; remove it to log in with OAuth"
    )]
    StaticHeader(String),
    /// The server answered without asking for a login.
    #[error(
        "server `{server}` ({url}) did not ask for a login (no 401 with an OAuth challenge): nothing to do"
    )]
    NoAuthNeeded {
        /// The entry.
        server: String,
        /// Its URL.
        url: String,
    },
    /// The server could not be reached.
    #[error("could not reach {url}: {reason}")]
    Unreachable {
        /// Its URL.
        url: String,
        /// What the HTTP client said.
        reason: String,
    },
    /// Discovery, registration, the token exchange or a revocation failed (rmcp's words).
    #[error("{step}: {reason}")]
    OAuth {
        /// What was being done ("discovering the authorization server", ...).
        step: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The redirect listener could not be opened.
    #[error("cannot listen for the login's redirect on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The authorization server sent the browser back with an error.
    #[error("the authorization server refused the login: {0}")]
    Refused(String),
    /// Nobody completed the login in time.
    #[error("no login completed within {0} s; run `pegboard login` again")]
    TimedOut(u64),
    /// The credential store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl LoginError {
    /// An rmcp error during `step`.
    pub fn oauth(step: &'static str, error: impl std::fmt::Display) -> Self {
        Self::OAuth {
            step,
            reason: error.to_string(),
        }
    }
}
