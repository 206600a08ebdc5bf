//! `pegboard serve`: the merged board as one MCP server, over stdio or streamable HTTP.

use std::time::Duration;

use anyhow::{Context, Result};
use pegboard_gateway::http_serve::Timeouts;
use pegboard_gateway::search_mode::{SearchSettings, ToolSearch};
use pegboard_gateway::server::BoardServer;
use pegboard_gateway::startup::{self, Startup};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{empty_board, load_config, none_started, shutdown_signal};
use crate::cli::ServeArgs;
use crate::connect::{Progress, Started};
use crate::http::{HttpOptions, MCP_PATH, SessionLimits, front};
use crate::reload::{self, Fleet, Hangup};

/// How long open HTTP connections get to finish after a shutdown signal.
const HTTP_DRAIN: Duration = Duration::from_secs(5);

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

    let config = load_config(args.config.config.as_deref(), args.config.strict)?
        .with_max_message(args.config.max_message());
    let board = empty_board(&config, args.config.startup_timeout)?;
    // Serve at once; the servers start beside the serving and join the board as they come up.
    let (startup, starting) = Startup::begin(args.wait);
    let server = BoardServer::new(board.clone())
        .with_info("pegboard", env!("CARGO_PKG_VERSION"))
        .with_tool_search(tool_search(&config.source, args.tool_search)?)
        .with_startup(startup)
        .with_express(!args.no_express);
    let pending = match config.servers.len() {
        1 => "(starting 1 server)".to_string(),
        n => format!("(starting {n} servers)"),
    };
    let serving = async {
        match listener {
            None => {
                if progress == Progress::Stderr {
                    eprintln!("pegboard: serving over stdio {pending}");
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
                serve_http(server, listener, &options, timeouts, &pending, progress).await
            }
        }
    };

    // Startup, then reloads, run beside the serving, never in its way. When serving ends first, a
    // startup or reload under way is dropped (what it started is on the board or dies with its dropped
    // connection, and is shut down below).
    let mut fleet = None;
    let background = async {
        let started = startup::start_all(
            &board,
            &config,
            args.config.startup_timeout,
            progress,
            starting,
        )
        .await;
        // Nothing to serve, and nothing will come by itself: stop, as when this happened before serving.
        if started.ready() == 0 {
            return Err(none_started(&started, &config));
        }
        let summary = summary(board.tool_count(), &started);
        if progress == Progress::Stderr {
            eprintln!("pegboard: serving {summary}");
        } else {
            tracing::info!("serving {summary}");
        }
        let fleet = fleet.insert(
            Fleet::new(
                &board,
                &config,
                started,
                args.config.startup_timeout,
                !args.no_restart,
            )
            .with_max_message(args.config.max_message()),
        );
        match reload::on_hangup(
            fleet,
            &mut hangup,
            &config.source,
            progress,
            args.config.strict,
        )
        .await {}
    };
    let result = tokio::select! {
        // Serving first: its first poll prints the "serving" line, before a startup that fails at once
        // can end everything (which it may within one poll, other workers finishing its tasks).
        biased;
        r = serving => r,
        r = background => r,
    };

    // Stop the supervisors first, so nothing is restarted while the board shuts down.
    if let Some(fleet) = fleet {
        fleet.shutdown().await;
    }
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
        pegboard_gateway::express::pipe::widen(std::io::stdout());
        let (reader, writer) = rmcp::transport::stdio_pipes();
        let running = match pegboard_gateway::express::serve(server, reader, writer).await {
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
    pending: &str,
    progress: Progress,
) -> Result<()> {
    let ct = CancellationToken::new();
    let app = front(server, options, ct.child_token())?;
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
        eprintln!("pegboard: serving at http://{local}{MCP_PATH}{auth} {pending}");
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
