//! `pegboard serve`: the merged board as one MCP server, over stdio or streamable HTTP.

use std::time::Duration;

use anyhow::{Context, Result};
use pegboard_gateway::http_serve::Timeouts;
use pegboard_gateway::search_mode::{SearchSettings, ToolSearch};
use pegboard_gateway::server::BoardServer;
use rmcp::ServiceExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{Loaded, fill_board, shutdown_signal};
use crate::cli::ServeArgs;
use crate::connect::{Progress, Started};
use crate::http::{HttpOptions, MCP_PATH, SessionLimits, router};
use crate::reload::{self, Fleet, Hangup};

/// How long open HTTP connections get to finish after a shutdown signal.
const HTTP_DRAIN: Duration = Duration::from_secs(5);

/// Exit code after a signal arrived while servers were still starting.
const INTERRUPTED: i32 = 130;

/// Run `pegboard serve`.
pub async fn run(args: ServeArgs, progress: Progress) -> Result<i32> {
    if args.http.is_none() && args.token.is_some() {
        tracing::warn!("--token / PEGBOARD_TOKEN only applies with --http; ignored for stdio");
    }
    if args.http.is_none() && args.replica_id.is_some() {
        tracing::debug!(
            "--replica-id / PEGBOARD_REPLICA_ID only applies with --http; ignored for stdio"
        );
    }
    if args.http.is_some() {
        crate::http::check_token(args.token.as_deref())?;
    }
    // Take the port before starting anything, so a port in use fails at once.
    let listener = match args.http {
        Some(addr) => Some(TcpListener::bind(addr).await.with_context(|| {
            format!("cannot listen on {addr} (is the port in use? pick another with --http)")
        })?),
        None => None,
    };

    // Listen for SIGHUP before anything starts: from then on it no longer kills the gateway, and one sent
    // during startup triggers a reload right after it.
    let mut hangup = Hangup::listen();

    // A signal while servers start drops the half-filled board: its children are killed with it.
    let loaded = tokio::select! {
        loaded = fill_board(&args.config, progress) => loaded?,
        () = shutdown_signal() => return Ok(INTERRUPTED),
    };
    let Loaded {
        board,
        started,
        config,
    } = loaded;
    let summary = summary(board.tool_count(), &started);
    let mut fleet = Fleet::new(
        &board,
        &config,
        started,
        args.config.startup_timeout,
        !args.no_restart,
    )
    .with_max_message(args.config.max_message());

    let server = BoardServer::new(board.clone())
        .with_info("pegboard", env!("CARGO_PKG_VERSION"))
        .with_tool_search(tool_search(&config.source, args.tool_search)?);
    let serving = async {
        match listener {
            None => {
                if progress == Progress::Stderr {
                    eprintln!("pegboard: serving {summary} over stdio");
                }
                serve_stdio(server).await
            }
            Some(listener) => {
                let options = HttpOptions {
                    bind: args.http,
                    token: args.token.clone(),
                    allow_origins: args.allow_origin.clone(),
                    allow_hosts: args.allow_host.clone(),
                    stateless: args.stateless,
                    sessions: SessionLimits {
                        max: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
                        idle: Duration::from_secs(args.session_idle),
                    },
                    replica_id: args.replica_id.clone(),
                };
                let timeouts = Timeouts {
                    header: Duration::from_secs(args.header_timeout),
                    body: Duration::from_secs(args.body_timeout),
                };
                serve_http(server, listener, &options, timeouts, &summary, progress).await
            }
        }
    };
    // Reloads run beside the serving, never in its way; when serving ends, a reload under way is dropped
    // (what it started is on the board or dies with its dropped connection, and is shut down below).
    let result = tokio::select! {
        r = serving => r,
        never = reload::on_hangup(&mut fleet, &mut hangup, &config.source, progress, args.config.strict) => match never {},
    };

    // Stop the supervisors first, so nothing is restarted while the board shuts down.
    fleet.shutdown().await;
    board.shutdown().await;
    tracing::debug!("all servers shut down");
    result.map(|()| 0)
}

/// The config's `toolSearch`, its mode overridden by `--tool-search`.
fn tool_search(source: &std::path::Path, flag: Option<ToolSearch>) -> Result<SearchSettings> {
    let settings = SearchSettings::from_config_file(source).map_err(anyhow::Error::msg)?;
    Ok(match flag {
        Some(mode) => settings.with_mode(mode),
        None => settings,
    })
}

fn summary(tools: usize, started: &Started) -> String {
    let failed = match started.failed() {
        0 => String::new(),
        n => {
            let names: Vec<&str> = started
                .outcomes
                .iter()
                .filter(|o| o.result.is_err())
                .map(|o| o.name.as_str())
                .collect();
            format!(" ({n} failed: {})", names.join(", "))
        }
    };
    format!(
        "{tools} tool{} from {} server{}{failed}",
        if tools == 1 { "" } else { "s" },
        started.ready(),
        if started.ready() == 1 { "" } else { "s" },
    )
}

async fn serve_stdio(server: BoardServer) -> Result<()> {
    let serving = async move {
        let running = match server.serve(rmcp::transport::stdio_pipes()).await {
            Ok(r) => r,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("stdin closed before an MCP client connected");
                return Ok(());
            }
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context("the MCP client on stdin/stdout did not complete the handshake"));
            }
        };
        let quit = running
            .waiting()
            .await
            .context("the stdio session ended abnormally")?;
        tracing::info!(?quit, "the MCP client closed the session");
        anyhow::Ok(())
    };
    tokio::select! {
        r = serving => r,
        () = shutdown_signal() => Ok(()),
    }
}

async fn serve_http(
    server: BoardServer,
    listener: TcpListener,
    options: &HttpOptions,
    timeouts: Timeouts,
    summary: &str,
    progress: Progress,
) -> Result<()> {
    let ct = CancellationToken::new();
    let app = router(server, options, ct.child_token())?;
    let local = listener.local_addr().context("no local address")?;
    if local.ip().is_unspecified() && options.allow_hosts.is_empty() {
        tracing::warn!(
            "listening on all interfaces: requests must use a loopback Host; add --allow-host NAME for each \
             name or IP clients use to reach this machine"
        );
    }
    if !local.ip().is_loopback() && options.token.is_none() {
        tracing::warn!(
            "listening beyond loopback without --token: anyone who can reach {local} can call every tool"
        );
    }
    if progress == Progress::Stderr {
        let auth = if options.token.is_some() {
            " (bearer token required)"
        } else {
            ""
        };
        eprintln!("pegboard: serving {summary} at http://{local}{MCP_PATH}{auth}");
    } else {
        tracing::info!("serving at http://{local}{MCP_PATH}");
    }
    let server = pegboard_gateway::http_serve::serve(listener, app, timeouts, ct.clone());
    let mut server = std::pin::pin!(server);
    tokio::select! {
        r = &mut server => return r.context("the HTTP server failed"),
        () = shutdown_signal() => ct.cancel(),
    }
    // Sessions end with `ct`; give open connections a moment to finish what they are sending.
    tokio::select! {
        r = &mut server => r.context("the HTTP server failed")?,
        () = tokio::time::sleep(HTTP_DRAIN) => {
            tracing::warn!("open HTTP connections did not close within {HTTP_DRAIN:?}; closing them");
        }
    }
    Ok(())
}
