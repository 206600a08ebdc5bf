//! The PegBoard gateway engine: config, connecting and supervising servers, reload, the MCP
//! handler and the HTTP front.

pub mod config;
pub mod connect;
pub mod http;
mod http_client;
pub mod reload;
pub mod server;
pub mod supervise;

use std::path::Path;

use anyhow::Result;

use crate::config::Config;

/// Locate and load the config, logging its warnings.
pub fn load_config(explicit: Option<&Path>) -> Result<Config> {
    let path = config::locate(explicit)?;
    let cfg = config::load(&path)?;
    for w in &cfg.warnings {
        tracing::warn!("{w}");
    }
    tracing::debug!(config = %path.display(), servers = cfg.servers.len(), "config loaded");
    Ok(cfg)
}
