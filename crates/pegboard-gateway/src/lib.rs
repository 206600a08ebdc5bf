//! The PegBoard gateway engine: the servers of an `mcpServers` config, started, supervised and
//! put on one [`pegboard::PegBoard`], served as one MCP server over stdio or streamable HTTP, or
//! mounted in your own axum app. The `pegboard` binary (crate `pegboard-cli`) is argument parsing and
//! output over this crate: `pegboard serve` is a [`Gateway`], built and served as below.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::time::Duration;
//! use pegboard_gateway::{Gateway, HttpOptions, Progress};
//! use tokio_util::sync::CancellationToken;
//!
//! // ./pegboard.json (or the usual locations), as `pegboard serve` reads it.
//! let config = pegboard_gateway::load_config(None, false)?;
//! let gateway = Gateway::builder(config)
//!     .startup_timeout(Duration::from_secs(30))
//!     .progress(Progress::Stderr)
//!     .build()?;
//!
//! // Serve at http://127.0.0.1:8080/mcp until the token is cancelled; the servers start beside
//! // the serving, and are restarted when they die.
//! let stop = CancellationToken::new();
//! gateway.serve_http("127.0.0.1:8080".parse()?, &HttpOptions::default(), stop).await?;
//! // ... or `gateway.serve_stdio().await?`, or `gateway.start_servers().await?` and mount
//! // `gateway.router(&options, token)?` in your own axum app.
//! gateway.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # The public surface
//! - [`Gateway`], [`GatewayBuilder`]: start a config's servers, serve them, reload, shut down;
//!   [`ServerStart`] and [`Changes`] report what happened; [`GatewayError`] says why not.
//! - [`config`]: the `mcpServers` file, parsed once ([`Config`], [`config::ServerConfig`], its
//!   errors, [`config::SearchSettings`] for `toolSearch`).
//! - [`http`]: [`HttpOptions`] and their parts, [`http::router`] to mount in your own app.
//! - [`BoardServer`]: a board as an rmcp handler, for any other transport.
//!
//! # Where everything lives (layers: each uses only those below it)
//! 0. `protocol/` (why a call has no result and its one wording, the one deadline, `_meta` on
//!    its way upstream, protocol generations, header names), `config/`, `error.rs`;
//! 1. `io/`: bytes — pipes shared by two writers, message-size limits, spans of raw JSON, the
//!    upstream HTTP client;
//! 2. `upstream/`: one server connection's client handler, calls in flight, express lane, child
//!    process; it reaches the layers above only through traits it owns (`upstream/sides.rs`).
//!    `connect/`: start or reach a server, do its handshake, open per-client connections;
//! 3. `call/`: the one call pipeline, for rmcp's typed way and the express lane alike;
//! 4. `session/`: downstream sessions, the relay to all of them, subscriptions, the startup wait;
//! 5. `server/` (the rmcp handler, prompts/resources/completions, change feeds),
//!    `search_mode/`, `code_mode/`, `express/` (the lane's fronts: stdio and HTTP), `http/` (the
//!    front), `definitions/` (the tool definitions every one of them lists, as the servers sent them);
//! 6. `gateway/` (start and serve), `reload.rs`, `supervise.rs`.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// Layer 0: protocol types and errors, config data.
pub mod config;
mod error;
mod protocol;
// Layer 1: bytes.
mod io;
// Layer 2: upstream connections, and connecting them.
mod connect;
mod upstream;
// Layer 3: the one call pipeline.
mod call;
// Layer 4: downstream sessions.
mod session;
// Layer 5: serving: the MCP handler, tool search, code mode, the express lane, the HTTP front,
// and the tool definitions all of them list.
mod code_mode;
mod definitions;
mod express;
pub mod http;
mod search_mode;
mod server;
// Layer 6: the gateway: start, serve, supervise, reload.
mod follow;
mod gateway;
mod reload;
mod supervise;
// Beside the layers, called by them: pinned definitions and guards on what servers send.
pub mod audit;
mod credentials;
pub mod guards;
mod identity;
mod limits;
pub mod oauth;
pub mod pins;
mod policy;
#[cfg(feature = "store")]
// Its parts are used as the sessions, limits and credentials move to it.
#[allow(dead_code)]
mod store;
mod telemetry;

/// A running gateway's status, as its metrics listener serves it (`GET /status`): what
/// `pegboard status` reads and prints.
pub mod status {
    pub use crate::telemetry::{
        ServerStatus, StatusReport, TelemetryError, default_url, fetch_status,
    };
}

/// Named secrets in the credential store (the OS keyring, else a 0600 file): what a config's
/// `${secret:ENTRY.VAR}` is filled from, and what `pegboard secret set|list|rm` edits.
pub mod secrets {
    pub use crate::credentials::{Secrets, StoreError, is_secret_name};
}

#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing;

use std::path::Path;

use anyhow::Result;

pub use crate::config::Config;
pub use crate::connect::Progress;
pub use crate::error::GatewayError;
pub use crate::gateway::{DEFAULT_DRAIN, Gateway, GatewayBuilder, ServerStart};
pub use crate::http::{HttpOptions, MCP_PATH};
pub use crate::reload::Changes;
pub use crate::server::BoardServer;
pub use crate::session::startup::DEFAULT_WAIT;

/// Locate and load the config (`explicit`, or the first of the usual locations), logging its
/// warnings and each skipped entry (with its line). With `strict`, a skipped entry is an error.
///
/// # Errors
/// The file is missing or not a valid config, or (`strict`) has an unusable entry; the message
/// names the file.
pub fn load_config(explicit: Option<&Path>, strict: bool) -> Result<Config> {
    let path = config::locate(explicit)?;
    let cfg = config::load_strict(&path, strict)?;
    for w in &cfg.warnings {
        tracing::warn!("{w}");
    }
    for skipped in cfg.skipped() {
        tracing::error!("{skipped}");
    }
    tracing::debug!(config = %path.display(), servers = cfg.servers.len(), "config loaded");
    Ok(cfg)
}
