//! `pegboard serve`: the merged board as one MCP server, over stdio or streamable HTTP — a
//! [`Gateway`] built from the flags and served.

use std::time::Duration;

use anyhow::{Context, Result};
use pegboard_gateway::http::serve::Timeouts;
use pegboard_gateway::http::{HttpOptions, SessionLimits, check_token};
use pegboard_gateway::{Gateway, Progress};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{load_config, shutdown_signal};
use crate::cli::ServeArgs;

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
        check_token(args.token.as_deref())?;
    }
    // Take the port before starting anything, so a port in use fails at once.
    let listener = match args.http {
        Some(addr) => Some(TcpListener::bind(addr).await.with_context(|| {
            format!("cannot listen on {addr} (is the port in use? pick another with --http)")
        })?),
        None => None,
    };
    let config = load_config(args.config.config.as_deref(), args.config.strict)?;
    let mut builder = Gateway::builder(config)
        .startup_timeout(args.config.startup_timeout)
        .max_message(args.config.max_message())
        .wait(args.wait)
        .restart(!args.no_restart)
        .drain(Duration::from_secs(args.drain))
        .reload_on_hangup(true, args.config.strict)
        .follow_config(!args.no_follow)
        .express(!args.no_express)
        .max_result_tokens(args.max_result_tokens())
        .metrics(args.metrics)
        .stdio_client(args.client.clone())
        .progress(progress);
    if let Some(url) = args.store.as_deref() {
        // The error names the URL with its password hidden (`***`).
        let url: pegboard_gateway::config::StoreUrl = url
            .parse()
            .map_err(|e| anyhow::anyhow!("--store / PEGBOARD_STORE: {e}"))?;
        builder = builder.store(url);
    }
    if let Some(target) = args.audit_log.clone() {
        builder = builder.audit_log(target, args.audit_arguments_mode());
    }
    if let Some(mode) = args.tool_search {
        let search = builder.config().tool_search.clone().with_mode(mode);
        builder = builder.tool_search(search);
    }
    if args.code_mode {
        let settings = builder.config().code_mode.clone().unwrap_or_default();
        builder = builder.code_mode(settings);
    }
    let gateway = builder.build()?;
    let served = match listener {
        None => {
            tokio::select! {
                r = gateway.serve_stdio() => r,
                () = shutdown_signal() => Ok(()),
            }
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
            let stop = CancellationToken::new();
            let signal = stop.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                signal.cancel();
            });
            gateway
                .serve_http_on(listener, &options, timeouts, stop)
                .await
        }
    };
    gateway.shutdown().await;
    served?;
    Ok(0)
}
