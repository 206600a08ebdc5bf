//! One module per subcommand, plus what they share: loading the config and filling the board.

pub mod call;
pub mod demo;
pub mod search;
pub mod serve;
pub mod tools;

use anyhow::{Result, bail};
use pegboard::PegBoard;

use crate::cli::ConfigArgs;
use crate::config::Config;
use crate::connect::{self, Progress, Started};

pub use pegboard_gateway::load_config;

/// A board with every server of the config that could be started.
pub struct Loaded {
    /// The board.
    pub board: PegBoard,
    /// What happened to each server.
    pub started: Started,
    /// The config used.
    pub config: Config,
}

/// Load the config, start every server concurrently, register what started.
/// Fails only when the config is unusable or has servers of which none started.
pub async fn fill_board(args: &ConfigArgs, progress: Progress) -> Result<Loaded> {
    let config =
        load_config(args.config.as_deref(), args.strict)?.with_max_message(args.max_message());
    fill_board_from(config, args.startup_timeout, progress).await
}

/// [`fill_board`] with a loaded config.
pub async fn fill_board_from(
    config: Config,
    startup_timeout: std::time::Duration,
    progress: Progress,
) -> Result<Loaded> {
    if config.servers.is_empty() {
        bail!(
            "{}: no enabled servers; add one under `mcpServers` (see `pegboard serve --help`)",
            config.source.display()
        );
    }
    // Listing a server's tools is part of starting it: the same timeout bounds both.
    let board = PegBoard::builder()
        .discovery_timeout(startup_timeout)
        .build();
    let started = connect::start_all(&board, &config, startup_timeout, progress).await;
    if started.ready() == 0 {
        board.shutdown().await;
        let which = match started.outcomes.len() {
            1 => "the configured server did not start".to_string(),
            n => format!("none of the {n} configured servers started"),
        };
        bail!("{which} (reasons above); fix {}", config.source.display());
    }
    Ok(Loaded {
        board,
        started,
        config,
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
