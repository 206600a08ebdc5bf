//! The PegBoard gateway engine: the servers of an `mcpServers` config, started, supervised and
//! put on one [`pegboard::PegBoard`], served as one MCP server over stdio or streamable HTTP, or
//! mounted in your own axum app. The `pegboard` binary (crate `pegboard-cli`) is argument parsing and
//! output over this crate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pegboard_gateway::GatewayError> {
//! use std::time::Duration;
//! use pegboard_gateway::{Gateway, HttpOptions};
//! use tokio_util::sync::CancellationToken;
//!
//! // Starts every server of ./pegboard.json (or the usual locations).
//! let gateway = Gateway::from_path(None, Duration::from_secs(30)).await?;
//! println!("{} tools", gateway.board().tool_count());
//!
//! // Serve it at http://127.0.0.1:8080/mcp until the token is cancelled ...
//! let stop = CancellationToken::new();
//! gateway.serve_http("127.0.0.1:8080".parse().unwrap(), &HttpOptions::default(), stop).await?;
//! // ... or mount `gateway.router(&options, token)?` in your own axum app,
//! // or `gateway.serve_stdio().await?`.
//! gateway.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Where everything lives
//! - [`Gateway`] (`gateway.rs`): start a config's servers on a board, serve it.
//! - [`GatewayError`] (`error.rs`): why starting or serving failed, in the config user's terms.
//! - [`config`]: locate and parse the `mcpServers` file (`${VAR}` expansion, per-server options).
//! - [`connect`]: start one server (child process or streamable HTTP) and register it.
//! - [`supervise`]: restart servers that die, with backoff.
//! - [`reload`]: apply an edited config to running servers (SIGHUP).
//! - [`server`]: [`BoardServer`], the board as an rmcp `ServerHandler`.
//! - [`startup`]: serve while servers start; `--wait` for the first `tools/list`.
//! - [`search_mode`]: `--tool-search`: `search_tools` and `call_tool` instead of every tool.
//! - [`http`]: the streamable HTTP front and its guards (Origin, Host, bearer token).
//! - `http_client.rs`: the client for upstream HTTP servers (rustls with ring, `TCP_NODELAY`).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod bridge;
mod catalog;
pub mod config;
pub mod connect;
mod downstream;
mod error;
pub mod express;
mod forward;
mod gateway;
pub mod http;
mod http_client;
pub mod http_serve;
mod mrtr;
pub mod per_client;
pub mod relay;
pub mod reload;
pub mod search_mode;
pub mod server;
pub mod startup;
mod subscriptions;
pub mod supervise;
mod tasks;
pub mod upstream;

use std::path::Path;

use anyhow::Result;

pub use crate::config::Config;
pub use crate::error::GatewayError;
pub use crate::gateway::Gateway;
pub use crate::http::{HttpOptions, MCP_PATH};
pub use crate::server::BoardServer;

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
