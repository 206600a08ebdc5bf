//! [`GatewayError`]: what went wrong, said to the person who wrote the config or runs the gateway.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why the gateway could not start or serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The config file could not be found, read or understood (the message names the file, and
    /// line and column for a syntax error).
    #[error("{0}")]
    Config(String),
    /// The config has no enabled server.
    #[error("{}: no enabled servers; add one under `mcpServers`", path.display())]
    NoServers {
        /// The config file.
        path: PathBuf,
    },
    /// Servers are configured but none of them started.
    #[error("{which} (reasons above); {what_to_do}")]
    NoneStarted {
        /// "the configured server did not start" or "none of the N configured servers started".
        which: String,
        /// "fix CONFIG", or the logins to do first.
        what_to_do: String,
    },
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr} (is the port in use? pick another): {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// An HTTP front option is not valid (for example an allowed origin that is not an origin).
    #[error("{0}")]
    HttpOption(String),
    /// Telemetry or the audit log could not be set up (an `OTEL_*` variable, the log's file).
    #[error("{0}")]
    Setup(String),
    /// Serving failed after it started.
    #[error("{0}")]
    Serve(String),
    /// Code mode was asked for (`--code-mode`, the config's `codeMode`) in a build without it
    /// (the `code-mode` cargo feature).
    #[error(
        "{asked_by} turns code mode on, but this pegboard was built without it. The pip and npm \
         packages (pegboard-mcp) include it; from source, build with the `code-mode` feature: \
         `cargo install --locked --path crates/pegboard-cli --features code-mode`"
    )]
    NoCodeMode {
        /// What asked for it: `--code-mode`, or the config file's `codeMode`.
        asked_by: String,
    },
}

impl GatewayError {
    /// An internal error chain, rendered whole (`a: b: c`).
    pub(crate) fn config(e: &anyhow::Error) -> Self {
        Self::Config(format!("{e:#}"))
    }
}
