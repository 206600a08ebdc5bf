//! Shared plumbing for the binaries: flag parsing, logging, stdio and streamable HTTP serving.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context as _;
use rmcp::{
    RoleServer, ServerHandler, Service, ServiceExt,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio_util::sync::CancellationToken;

/// How a binary should expose its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// JSON-RPC over stdin/stdout (the default).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`.
    Http(SocketAddr),
}

/// Installs a `tracing` subscriber that writes ONLY to stderr (stdout carries the protocol).
///
/// The filter comes from `RUST_LOG` and defaults to `warn`. Calling it twice is harmless.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(false)
        // A closed stderr drops the line; reporting that on stderr would panic.
        .log_internal_errors(false)
        .try_init();
}

/// Parses `--http ADDR` / `--http=ADDR` out of `args`, returning the mode.
///
/// Recognised arguments are removed from `args`; anything else is left for the caller.
pub fn take_mode(args: &mut Vec<String>) -> anyhow::Result<Mode> {
    let mut mode = Mode::Stdio;
    let mut i = 0;
    while i < args.len() {
        let value = if args[i] == "--http" {
            if i + 1 >= args.len() {
                anyhow::bail!("--http needs an address, e.g. --http 127.0.0.1:8000");
            }
            let v = args.remove(i + 1);
            args.remove(i);
            v
        } else if let Some(v) = args[i].strip_prefix("--http=") {
            let v = v.to_string();
            args.remove(i);
            v
        } else {
            i += 1;
            continue;
        };
        let addr: SocketAddr = value
            .parse()
            .with_context(|| format!("invalid --http address {value:?} (want IP:PORT)"))?;
        mode = Mode::Http(addr);
    }
    Ok(mode)
}

/// Returns true if `args` asks for help (`--help` or `-h`).
pub fn wants_help(args: &[String]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-h")
}

/// Serves `server` (a [`ServerHandler`], or any rmcp server [`Service`]) over stdio until stdin
/// reaches EOF (or the service is cancelled).
pub async fn serve_stdio<S: Service<RoleServer>>(server: S) -> anyhow::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .context("MCP initialization over stdio failed")?;
    let reason = running.waiting().await?;
    tracing::info!(?reason, "stdio session ended");
    Ok(())
}

/// A streamable HTTP server started by [`spawn_http`].
#[derive(Debug)]
pub struct HttpHandle {
    /// The bound address (useful when binding port 0).
    pub addr: SocketAddr,
    /// Cancel this to shut the server down gracefully.
    pub shutdown: CancellationToken,
    /// The server task; resolves once the server has stopped.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpHandle {
    /// The MCP endpoint URL, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// Binds `addr` and serves `server` as streamable HTTP at path `/mcp` in a background task.
///
/// Sessions are stateful ([`LocalSessionManager`]); every session gets a clone of `server`, so
/// servers whose state is behind an `Arc` share it across sessions.
pub async fn spawn_http<S>(server: S, addr: SocketAddr) -> anyhow::Result<HttpHandle>
where
    S: ServerHandler + Clone,
{
    let shutdown = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    let service: StreamableHttpService<S, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot bind {addr}"))?;
    let addr = listener.local_addr()?;
    let ct = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(ct.cancelled_owned())
            .await
    });
    Ok(HttpHandle {
        addr,
        shutdown,
        task,
    })
}

/// Serves `server` as streamable HTTP at `http://addr/mcp` until Ctrl-C.
pub async fn serve_http<S>(server: S, addr: SocketAddr) -> anyhow::Result<()>
where
    S: ServerHandler + Clone,
{
    let handle = spawn_http(server, addr).await?;
    eprintln!("listening on {}", handle.url());
    tokio::signal::ctrl_c().await?;
    handle.shutdown.cancel();
    handle.task.await??;
    Ok(())
}

/// Serves `server` in the given mode (see [`serve_stdio`] and [`serve_http`]).
pub async fn run<S>(server: S, mode: Mode) -> anyhow::Result<()>
where
    S: ServerHandler + Clone,
{
    match mode {
        Mode::Stdio => serve_stdio(server).await,
        Mode::Http(addr) => serve_http(server, addr).await,
    }
}

/// The whole `main` of a simple demo binary: parses `--help` / `--http`, sets up logging and
/// serves the server built by `make`.
pub async fn simple_main<S, F>(bin: &str, about: &str, make: F) -> anyhow::Result<()>
where
    S: ServerHandler + Clone,
    F: FnOnce() -> S,
{
    simple_with_args(bin, about, std::env::args().skip(1).collect(), make).await
}

/// [`simple_main`] with the arguments given rather than read from the process.
pub async fn simple_with_args<S, F>(
    bin: &str,
    about: &str,
    mut args: Vec<String>,
    make: F,
) -> anyhow::Result<()>
where
    S: ServerHandler + Clone,
    F: FnOnce() -> S,
{
    if wants_help(&args) {
        eprintln!(
            "{bin}: {about}\n\nUSAGE:\n    {bin} [--http IP:PORT]\n\nOPTIONS:\n    \
             --http IP:PORT   serve streamable HTTP at http://IP:PORT/mcp instead of stdio\n    \
             -h, --help       print this help\n\nLogs go to stderr (RUST_LOG, default warn)."
        );
        return Ok(());
    }
    let mode = take_mode(&mut args)?;
    if let Some(extra) = args.first() {
        anyhow::bail!("unexpected argument {extra:?} (see --help)");
    }
    init_logging();
    run(make(), mode).await
}
