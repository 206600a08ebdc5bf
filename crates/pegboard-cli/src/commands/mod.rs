//! One module per subcommand, plus what they share: loading the config and filling the board.

pub mod add;
pub mod auth;
pub mod call;
pub mod clients;
pub mod connect;
pub mod demo;
pub mod disconnect;
pub mod find;
pub mod findings;
pub mod import;
pub mod login;
pub mod pin;
pub mod search;
pub mod secret;
pub mod serve;
pub mod servers;
pub mod status;
pub mod tools;

use anyhow::{Result, anyhow};
use pegboard_gateway::{Gateway, GatewayBuilder, Progress};

use crate::cli::ConfigArgs;
use crate::config::Config;

pub use pegboard_gateway::load_config;

/// Load the config, start every server concurrently, register what started (not served, not
/// restarted), as the config's client `client` sees it (`None`: everything). Fails only when the
/// config is unusable, names no such client, or has servers of which none started.
pub async fn fill_board(
    args: &ConfigArgs,
    progress: Progress,
    client: Option<String>,
) -> Result<Gateway> {
    let config = load_config(args.config.as_deref(), args.strict)?;
    fill_board_from(gateway_for(config, args, progress).stdio_client(client)).await
}

/// The gateway of `config` as the command line sets it up, not restarting servers (the
/// commands that start one run only while they need it).
pub fn gateway_for(config: Config, args: &ConfigArgs, progress: Progress) -> GatewayBuilder {
    Gateway::builder(config)
        .startup_timeout(args.startup_timeout)
        .max_message(args.max_message())
        .restart(false)
        .progress(progress)
}

/// Build `builder`'s gateway and start its servers.
pub async fn fill_board_from(builder: GatewayBuilder) -> Result<Gateway> {
    let gateway = builder.build()?;
    if let Err(e) = gateway.start_servers().await {
        gateway.shutdown().await;
        return Err(e.into());
    }
    Ok(gateway)
}

/// The server entry `name` of the config at `path`, with a clear error when there is none.
pub fn server_named(
    path: Option<&std::path::Path>,
    name: &str,
) -> Result<crate::config::ServerConfig> {
    let config = load_config(path, false)?;
    config
        .servers
        .iter()
        .find(|s| s.name == name)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
            anyhow!(
                "{}: no enabled server `{name}` (servers: {})",
                config.source.display(),
                names.join(", ")
            )
        })
}

/// Resolves on Ctrl-C, or SIGTERM on Unix.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C: shutting down"),
        () = term => tracing::info!("SIGTERM: shutting down"),
    }
}
