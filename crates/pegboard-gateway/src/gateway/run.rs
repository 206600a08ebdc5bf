//! What a [`Gateway`] runs: a front (stdio, HTTP) beside the servers' startup, supervision and
//! reloads.

use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::{Gateway, report};
use crate::connect::{Progress, plural};
use crate::error::GatewayError;
use crate::http::{self, HttpOptions, MCP_PATH, serve::Timeouts};
use crate::reload::Fleet;
use crate::telemetry::MetricsListener;

/// How long open HTTP connections get to finish what they are sending once the sessions end.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The servers' startup, then supervision (by the fleet's own tasks) and, when asked, a reload
/// at each SIGHUP. Never ends but with an error: not one server started.
pub(super) async fn background(gateway: &Gateway) -> Result<(), GatewayError> {
    // The board-wide description scan (descriptions naming other servers' tools), logged at
    // every change of the board; the per-server scan and the pins run in each server's listing.
    let _scan = AbortOnDropHandle::new(tokio::spawn(crate::guards::board::watch(
        gateway.board.clone(),
    )));
    let observing = async {
        match gateway.server.hooks().telemetry.clone() {
            Some(telemetry) => super::observe::observe(gateway, &telemetry).await,
            None => std::future::pending().await,
        }
    };
    let running = async {
        gateway.start_servers().await?;
        announce(gateway);
        unmatched_patterns(gateway).await;
        reloads(gateway).await
    };
    tokio::select! {
        r = running => r,
        () = observing => std::future::pending().await,
    }
}

/// The `--metrics` listener, serving until `stop` is cancelled; nothing when not asked for.
pub(super) async fn metrics(
    gateway: &Gateway,
    token: Option<&str>,
    stop: CancellationToken,
) -> Result<(), GatewayError> {
    let (Some(addr), Some(telemetry)) = (
        gateway.settings.metrics,
        gateway.server.hooks().telemetry.clone(),
    ) else {
        return std::future::pending().await;
    };
    let listener = MetricsListener::bind(addr, token)
        .await
        .map_err(|e| GatewayError::Setup(format!("--metrics {addr}: {e}")))?;
    report(
        gateway.settings.progress,
        &format!(
            "metrics at http://{}/metrics, status at http://{0}/status",
            listener.local_addr()
        ),
    );
    listener
        .serve(telemetry, stop)
        .await
        .map_err(|e| GatewayError::Serve(format!("the metrics listener failed: {e}")))?;
    std::future::pending().await
}

/// At each SIGHUP: the audit log file reopened (for logrotate), and, when reloads are on, the
/// config read again and the servers brought in line; likewise at each edit of the config file
/// when it is followed.
async fn reloads(gateway: &Gateway) -> Result<(), GatewayError> {
    let mut hangup = gateway
        .hangup
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let mut follow = gateway
        .follow
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if hangup.is_none() && follow.is_none() {
        return std::future::pending().await;
    }
    let path = &gateway.config.source;
    loop {
        let signal = async {
            match hangup.as_mut() {
                Some(h) => h.recv().await,
                None => std::future::pending().await,
            }
        };
        let edit = async {
            match follow.as_mut() {
                Some(f) => f.changed().await,
                None => std::future::pending().await,
            }
        };
        let by_signal = tokio::select! {
            () = signal => true,
            () = edit => false,
        };
        if by_signal {
            if let Some(audit) = &gateway.server.hooks().audit {
                audit.reopen();
            }
            if !gateway.settings.reload_on_hangup {
                tracing::info!("SIGHUP: audit log reopened");
                continue;
            }
            if let Some(f) = follow.as_mut() {
                f.mark_applied();
            }
            tracing::info!("SIGHUP: reloading {}", path.display());
        } else {
            tracing::info!("config file changed: reloading {}", path.display());
        }
        reload_once(gateway, path).await;
    }
}

/// Read the config at `path` again and bring the servers in line; a config that does not load
/// is logged and changes nothing.
async fn reload_once(gateway: &Gateway, path: &std::path::Path) {
    let config = match crate::load_config(Some(path), gateway.settings.strict) {
        Ok(config) => config,
        Err(e) => {
            let running = gateway
                .fleet
                .lock()
                .await
                .as_ref()
                .map_or(0, Fleet::running);
            tracing::error!(
                "reload: {e:#}; keeping the {running} running server{} as they are",
                plural(running)
            );
            return;
        }
    };
    if config.servers.is_empty() {
        tracing::warn!(
            "reload: {} has no enabled servers; stopping all of them",
            path.display()
        );
    }
    let changes = gateway.reload(&config).await;
    let tools = gateway.board.tool_count();
    let servers = gateway.board.service_count();
    tracing::info!(
        "reload: {changes}; now {tools} tool{} from {servers} server{}",
        plural(tools),
        plural(servers)
    );
}

/// "(starting 3 servers)", while they start.
fn pending(gateway: &Gateway) -> String {
    match gateway.config.servers.len() {
        1 => "(starting 1 server)".to_string(),
        n => format!("(starting {n} servers)"),
    }
}

/// Serve one client on stdin/stdout until it closes the session.
pub(super) async fn stdio(gateway: &Gateway) -> Result<(), GatewayError> {
    if gateway.settings.progress == Progress::Stderr {
        report(
            Progress::Stderr,
            &format!("serving over stdio {}", pending(gateway)),
        );
    }
    crate::io::pipe::widen(std::io::stdout());
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let running = match crate::express::serve(gateway.handler(), reader, writer).await {
        Ok(running) => running,
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before an MCP client connected");
            return Ok(());
        }
        Err(e) => {
            return Err(GatewayError::Serve(format!(
                "the MCP client on stdin/stdout did not complete the handshake: {e}"
            )));
        }
    };
    let quit = running
        .waiting()
        .await
        .map_err(|e| GatewayError::Serve(format!("the stdio session ended abnormally: {e}")))?;
    tracing::info!(?quit, "the MCP client closed the session");
    Ok(())
}

/// Serve streamable HTTP on `listener` until `ct` is cancelled; then give open connections a
/// moment to finish what they are sending.
pub(super) async fn http(
    gateway: &Gateway,
    listener: TcpListener,
    options: &HttpOptions,
    timeouts: Timeouts,
    ct: CancellationToken,
) -> Result<(), GatewayError> {
    // Sessions end only after the drain: `ct` starts it.
    let sessions = CancellationToken::new();
    let _end_sessions = sessions.clone().drop_guard();
    let app = http::front_with(
        gateway.handler(),
        options,
        sessions.clone(),
        gateway.config.access.as_ref(),
    )
    .map_err(|e| GatewayError::HttpOption(format!("{e:#}")))?;
    let health = app.health.clone();
    #[cfg(feature = "store")]
    if let Some(store) = &gateway.server.hooks().store {
        // Said once at startup; a store that is down is not fatal: sessions held here are served,
        // and the store is used again as soon as it answers.
        match store.ping().await {
            Ok(()) => tracing::info!("store {} answers", store.url()),
            Err(e) => tracing::warn!("{e}; serving on, and using the store once it answers"),
        }
    }
    let local = listener
        .local_addr()
        .map_err(|e| GatewayError::Serve(format!("the listener has no local address: {e}")))?;
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
    let auth = if options.token.is_some() {
        " (bearer token required)"
    } else {
        ""
    };
    report(
        gateway.settings.progress,
        &format!(
            "serving at http://{local}{MCP_PATH}{auth} {}",
            pending(gateway)
        ),
    );
    let stop_accepting = CancellationToken::new();
    let server = http::serve::serve(listener, app, timeouts, stop_accepting.clone());
    let mut server = std::pin::pin!(server);
    let failed = |e: std::io::Error| GatewayError::Serve(format!("the HTTP server failed: {e}"));
    tokio::select! {
        r = &mut server => return r.map_err(failed),
        () = ct.cancelled() => {}
    }
    // The drain: still accepting (a request of a session held here is served; one opening a
    // session is sent elsewhere), until the calls in flight have finished or the time is up.
    if let Some(health) = health {
        let limit = gateway.settings.drain;
        tracing::info!(
            in_flight = health.in_flight(),
            "draining: /readyz answers 503, new sessions go elsewhere; waiting up to {} s for the calls in flight",
            limit.as_secs_f64()
        );
        let drained = async {
            match health.drain_for(limit).await {
                0 => tracing::info!("drained: no call in flight"),
                left => tracing::warn!(
                    "the drain's {} s are over with {left} request{} still in flight; ending them",
                    limit.as_secs_f64(),
                    plural(left)
                ),
            }
        };
        tokio::select! {
            r = &mut server => return r.map_err(failed),
            () = drained => {}
        }
    }
    stop_accepting.cancel();
    sessions.cancel();
    // Give open connections a moment to finish what they are sending.
    tokio::select! {
        r = &mut server => r.map_err(failed)?,
        () = tokio::time::sleep(CLOSE_GRACE) => {
            tracing::warn!("open HTTP connections did not close within {CLOSE_GRACE:?}; closing them");
        }
    }
    Ok(())
}

/// A warning for each client `tools` pattern that matches no tool or prompt on the board once
/// the servers have started: a typo, or a server that joins later (so not an error).
async fn unmatched_patterns(gateway: &Gateway) {
    let Some(access) = gateway.config.access.as_ref() else {
        return;
    };
    let prompts = gateway.board.list_prompts().await;
    let tools = gateway.board.list_all_tools();
    let names = tools
        .iter()
        .map(String::as_str)
        .chain(prompts.iter().map(|p| &*p.name));
    for warning in access.unmatched_patterns(names) {
        tracing::warn!("{warning}");
    }
}

/// "serving 7 tools from 3 servers (1 failed: x)", once every server has started or failed.
fn announce(gateway: &Gateway) {
    let started = gateway.started().unwrap_or_default();
    let names = |login: bool| -> Vec<&str> {
        started
            .iter()
            .filter(|s| s.result.is_err() && s.needs_login == login)
            .map(|s| s.name.as_str())
            .collect()
    };
    let ready = started.iter().filter(|s| s.result.is_ok()).count();
    let mut failed = String::new();
    for (login, what) in [(false, "failed"), (true, "waiting for a login")] {
        let names = names(login);
        if !names.is_empty() {
            failed.push_str(&format!(" ({} {what}: {})", names.len(), names.join(", ")));
        }
    }
    let tools = gateway.board.tool_count();
    report(
        gateway.settings.progress,
        &format!(
            "serving {tools} tool{} from {ready} server{}{failed}",
            plural(tools),
            plural(ready),
        ),
    );
}
