//! Start or connect every configured server, concurrently, and put each on the board.
//!
//! One server failing never stops the others: what started is registered, the rest is reported with the
//! reason and, for a child process, the tail of its stderr.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use axum::http::{HeaderName, HeaderValue};
use pegboard::{PegBoard, ServiceOptions};
use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::Notify;

use crate::config::{Config, ServerConfig, SessionMode, Transport};

/// How many stderr lines of a child are kept for error messages.
pub const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept (longer ones are cut).
const STDERR_LINE_MAX: usize = 1_000;

/// The connected (rmcp client) end of one server, as the board stores it.
pub type DynService = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;

/// What happened to one server.
pub struct Outcome {
    /// The config entry's key.
    pub name: String,
    /// `Ok(tools registered)` or the reason it is not on the board.
    pub result: Result<usize, anyhow::Error>,
    /// Where it is on the board (`PegBoard::services` index), when it is.
    pub index: Option<usize>,
    /// Its stderr tail (stdio servers that started).
    pub stderr: Option<StderrTail>,
}

/// A summary of [`start_all`].
pub struct Started {
    /// One per configured server, in config order.
    pub outcomes: Vec<Outcome>,
}

impl Started {
    /// How many servers are on the board.
    pub fn ready(&self) -> usize {
        self.outcomes.iter().filter(|o| o.result.is_ok()).count()
    }

    /// How many failed.
    pub fn failed(&self) -> usize {
        self.outcomes.len() - self.ready()
    }
}

/// How to report progress while servers start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// "notes: ready, 3 tools" lines on stderr.
    Stderr,
    /// Nothing (errors still go to the log).
    Quiet,
}

/// Connect every server of `config` at once and register each on `board` as soon as it is up.
///
/// A server that hangs (in its handshake or its `tools/list`) costs one timeout in all, not one each,
/// and delays no other: servers land on the board in the order they answer, and each one's progress
/// line is printed when it is done. The outcomes come back in config order.
pub async fn start_all(
    board: &PegBoard,
    config: &Config,
    handshake_timeout: Duration,
    progress: Progress,
) -> Started {
    let starting = config.servers.iter().map(|server| async move {
        let name = server.name.clone();
        let (result, index, stderr) = match connect(server, handshake_timeout).await {
            Ok(conn) => {
                let stderr = conn.stderr.clone();
                match register(board, server, conn).await {
                    Ok(added) => (Ok(added.tools), Some(added.index), stderr),
                    Err(e) => (Err(e), None, None),
                }
            }
            Err(e) => (Err(e), None, None),
        };
        match (&result, progress) {
            (Ok(n), Progress::Stderr) => eprintln!("{name}: ready, {n} tool{}", plural(*n)),
            (Err(e), Progress::Stderr) => eprintln!("{name}: failed: {e:#}"),
            (Ok(n), Progress::Quiet) => tracing::debug!(server = %name, tools = n, "ready"),
            (Err(e), Progress::Quiet) => tracing::error!(server = %name, "failed: {e:#}"),
        }
        Outcome {
            name,
            result,
            index,
            stderr,
        }
    });
    Started {
        outcomes: futures::future::join_all(starting).await,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A live connection, not yet on the board.
pub struct Connection {
    /// The rmcp client.
    pub service: DynService,
    /// Hand to the board so `tools/list_changed` is followed.
    pub watch: pegboard::client::ToolListWatch,
    /// The child's stderr tail (stdio servers only).
    pub stderr: Option<StderrTail>,
    /// Ties the connection's in-flight calls to downstream sessions.
    pub hub: Arc<crate::upstream::Hub>,
}

/// Put a connection on the board; returns where it was stored and how many tools it brought.
pub async fn register(
    board: &PegBoard,
    server: &ServerConfig,
    conn: Connection,
) -> Result<pegboard::Added> {
    let mut options = ServiceOptions::new()
        .deny(server.deny.iter().cloned())
        .watch(conn.watch)
        .extension(conn.hub);
    if let Some(allow) = &server.allow {
        options = options.allow(allow.iter().cloned());
    }
    if let Some(t) = server.timeout {
        options = options.call_timeout(t);
    }
    match board
        .add_service_with(server.namespace.clone(), conn.service, options)
        .await
    {
        Ok(added) => Ok(added),
        Err(e) => {
            let mut msg = e.to_string();
            if let Some(tail) = &conn.stderr {
                let _ = tail.wait_closed(Duration::from_millis(300)).await;
                msg.push_str(&tail.render());
            }
            Err(anyhow!(msg))
        }
    }
}

/// Start (stdio) or connect (HTTP) one server and do the MCP handshake, within `handshake_timeout`;
/// then, for a stdio server, learn which protocol versions it supports (see
/// [`crate::upstream::Hub::learn_versions`]). For a `"session": "per-client"` server this is its
/// shared connection, which opens the sessions' own ones ([`crate::per_client`]).
pub async fn connect(server: &ServerConfig, handshake_timeout: Duration) -> Result<Connection> {
    let connection = handshake(server, handshake_timeout).await?;
    // Not over HTTP: rmcp's HTTP client would carry the probe's 2026-07-28 version in the
    // headers of every later request, and the server would then expect 2026 requests. An HTTP
    // server is taken at the version its handshake settled on.
    if matches!(server.transport, Transport::Stdio { .. }) {
        connection
            .hub
            .learn_versions(connection.service.peer())
            .await;
    }
    if server.session == SessionMode::PerClient {
        connection
            .hub
            .set_per_client(crate::per_client::PerClient::new(
                server.clone(),
                handshake_timeout,
            ));
    }
    Ok(connection)
}

/// Start or connect `server` and do the handshake, no more: a per-client session's own
/// connection needs no protocol versions (the shared one decides what the board offers).
///
/// The `initialize` handshake first; a server that answers it with an error (one of the
/// 2026-07-28 generation only refuses `initialize`) is tried again with `server/discover`
/// (spawned again for stdio, since the first try consumed its pipes). If that fails too, the
/// first error is the one reported.
pub(crate) async fn handshake(
    server: &ServerConfig,
    handshake_timeout: Duration,
) -> Result<Connection> {
    match handshake_with(server, handshake_timeout, ClientLifecycleMode::Initialize).await {
        Ok(connection) => Ok(connection),
        Err(Failed {
            error,
            refused: true,
        }) => {
            let discover = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            handshake_with(server, handshake_timeout, discover)
                .await
                .map_err(|second| {
                    tracing::debug!(server = %server.name, "server/discover failed too: {:#}", second.error);
                    error
                })
        }
        Err(Failed { error, .. }) => Err(error),
    }
}

/// Whether the server answered the handshake with a JSON-RPC error (it is there and speaks
/// MCP, but not this lifecycle).
fn answered_with_error(e: &rmcp::service::ClientInitializeError) -> bool {
    matches!(e, rmcp::service::ClientInitializeError::JsonRpcError(_))
}

/// Why a handshake failed; `refused`: the server answered the handshake with a JSON-RPC error
/// (such as "unsupported protocol version"), so another lifecycle may work.
struct Failed {
    error: anyhow::Error,
    refused: bool,
}

impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Self {
        Self {
            error,
            refused: false,
        }
    }
}

async fn handshake_with(
    server: &ServerConfig,
    handshake_timeout: Duration,
    lifecycle: ClientLifecycleMode,
) -> Result<Connection, Failed> {
    let (watching, watch) = pegboard::client::watch_tools();
    // Logs name the server either way; resource URIs carry the namespace only when it has one.
    let hub = match &server.namespace {
        Some(namespace) => crate::upstream::Hub::new(namespace.clone()),
        None => crate::upstream::Hub::unprefixed(server.name.clone()),
    };
    let handler = crate::upstream::UpstreamClient::new(watching, hub.clone(), true);
    match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            // The gateway's own bearer token is no business of the servers it starts (a config
            // that sets it for a server explicitly still can: `envs` comes after).
            cmd.env_remove("PEGBOARD_TOKEN");
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let (transport, stderr) =
                crate::upstream::child::spawn(cmd, server.message_limit(), hub.namespace())
                    .map_err(|e| spawn_error(command, cwd.as_deref(), &e))?;
            let tail = StderrTail::new(STDERR_TAIL_LINES);
            tail.follow(stderr, server.name.clone());
            match tokio::time::timeout(
                handshake_timeout,
                handler.into_dyn().serve_with_lifecycle(
                    crate::upstream::ProgressTap::new(transport, hub.clone()),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(service)) => Ok(Connection {
                    service,
                    watch,
                    stderr: Some(tail),
                    hub,
                }),
                Ok(Err(e)) => {
                    tracing::debug!(server = %server.name, "handshake error: {e:?}");
                    let refused = answered_with_error(&e);
                    let exited = tail.wait_closed(Duration::from_millis(500)).await;
                    if exited {
                        Err(Failed {
                            refused,
                            error: anyhow!(
                                "`{command}` exited during the MCP handshake ({}){}",
                                describe(&e),
                                tail.render()
                            ),
                        })
                    } else {
                        Err(Failed {
                            refused,
                            error: anyhow!(
                                "`{command}` started but the MCP handshake failed: {}{}",
                                describe(&e),
                                tail.render()
                            ),
                        })
                    }
                }
                Err(_) => {
                    // Dropping the serve future kills the child.
                    Err(anyhow!(
                        "`{command}` did not answer the MCP handshake within {}s (is it an MCP stdio server? \
                         raise --startup-timeout if it is slow){}",
                        handshake_timeout.as_secs_f64(),
                        tail.render()
                    )
                    .into())
                }
            }
        }
        Transport::Http { url, headers } => {
            let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .max_sse_event_size(server.message_limit())
                .max_json_response_size(server.message_limit());
            let mut custom = HashMap::new();
            for (k, v) in headers {
                if k.eq_ignore_ascii_case("authorization")
                    && let Some(token) = v
                        .strip_prefix("Bearer ")
                        .or_else(|| v.strip_prefix("bearer "))
                {
                    cfg = cfg.auth_header(token.trim());
                    continue;
                }
                let name = HeaderName::from_bytes(k.as_bytes())
                    .with_context(|| format!("header name `{k}` is not valid"))?;
                let value = HeaderValue::from_str(v)
                    .with_context(|| format!("value of header `{k}` is not valid"))?;
                custom.insert(name, value);
            }
            if !custom.is_empty() {
                cfg = cfg.custom_headers(custom);
            }
            let client =
                crate::http_client::client().context("cannot set up the HTTP client (TLS)")?;
            let client = crate::upstream::limit_http::LimitedHttpClient::new(
                client,
                hub.namespace(),
                server.message_limit(),
            );
            let transport = StreamableHttpClientTransport::with_client(client, cfg);
            match tokio::time::timeout(
                handshake_timeout,
                handler.into_dyn().serve_with_lifecycle(
                    crate::upstream::ProgressTap::new(transport, hub.clone()),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(service)) => Ok(Connection {
                    service,
                    watch,
                    stderr: None,
                    hub,
                }),
                Ok(Err(e)) => {
                    tracing::debug!(server = %server.name, "handshake error: {e:?}");
                    Err(Failed {
                        refused: answered_with_error(&e),
                        error: anyhow!(
                            "could not connect to {url}: {} (is the server running, and is this its streamable \
                             HTTP endpoint, usually ending in /mcp?)",
                            describe(&e)
                        ),
                    })
                }
                Err(_) => Err(anyhow!(
                    "{url} did not answer the MCP handshake within {}s",
                    handshake_timeout.as_secs_f64()
                )
                .into()),
            }
        }
    }
}

/// The innermost cause of an error: rmcp's outer messages name transport types, the inner ones say what
/// actually happened ("Connection refused", "Broken pipe", an HTTP status).
fn describe(e: &rmcp::service::ClientInitializeError) -> String {
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            format!("{}, when trying to {context}", root_cause(error))
        }
        other => other.to_string(),
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

fn spawn_error(command: &str, cwd: Option<&std::path::Path>, e: &std::io::Error) -> anyhow::Error {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => match cwd {
            Some(dir) if !dir.is_dir() => format!(
                " (the working directory `{}` does not exist)",
                dir.display()
            ),
            _ if command.contains('/') => " (no such file; check the path)".to_string(),
            _ => " (not found on PATH; install it or give the full path)".to_string(),
        },
        std::io::ErrorKind::PermissionDenied => {
            " (not executable; check its permissions)".to_string()
        }
        _ => String::new(),
    };
    anyhow!("could not start `{command}`: {e}{hint}")
}

/// The last lines a child wrote to stderr, for error messages.
#[derive(Clone)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    cap: usize,
    closed: Arc<Notify>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    /// An empty tail keeping `cap` lines.
    pub fn new(cap: usize) -> Self {
        Self {
            lines: Arc::new(Mutex::new(VecDeque::with_capacity(cap))),
            cap,
            closed: Arc::new(Notify::new()),
            done: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    /// Read `reader` line by line in a task: keep the tail, forward each line to the log at debug level.
    pub fn follow<R: AsyncRead + Unpin + Send + 'static>(&self, reader: R, server: String) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(reader).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        tracing::debug!(target: "pegboard::server_stderr", server = %server, "{line}");
                        tail.push(line);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(server = %server, "stderr unreadable: {e}");
                        break;
                    }
                }
            }
            tail.mark_closed();
        });
    }

    fn mark_closed(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.closed.notify_waiters();
    }

    fn push(&self, mut line: String) {
        if line.len() > STDERR_LINE_MAX {
            let mut cut = STDERR_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == self.cap {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// Wait (at most `max`) until the child's stderr is closed, so the tail is complete; true if it is.
    pub async fn wait_closed(&self, max: Duration) -> bool {
        let notified = self.closed.notified();
        if self.done.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::timeout(max, notified).await.is_ok()
    }

    /// Wait until the child's stderr is closed (it exited, or closed it).
    pub async fn closed(&self) {
        let notified = self.closed.notified();
        if self.done.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        notified.await;
    }

    /// The kept lines.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// "\n  its stderr (last N lines):\n    ..." or "" when it wrote nothing.
    pub fn render(&self) -> String {
        let lines = self.lines();
        if lines.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "\n  its stderr (last {} line{}):",
            lines.len(),
            plural(lines.len())
        );
        for l in lines {
            let _ = write!(out, "\n    {l}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stderr_tail_keeps_the_last_lines() {
        let tail = StderrTail::new(3);
        let text: String = (1..=5).map(|i| format!("line {i}\n")).collect();
        tail.follow(std::io::Cursor::new(text.into_bytes()), "t".into());
        assert!(tail.wait_closed(Duration::from_secs(2)).await);
        assert_eq!(tail.lines(), vec!["line 3", "line 4", "line 5"]);
        assert!(tail.render().contains("last 3 lines"));
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_with_a_hint() {
        let server = ServerConfig {
            name: "ghost".into(),
            namespace: Some("ghost".into()),
            transport: Transport::Stdio {
                command: "pegboard-no-such-program-xyz".into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            },
            allow: None,
            deny: vec![],
            timeout: None,
            max_message: None,
            session: Default::default(),
        };
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_secs(5))
                .await
                .err()
                .expect("must fail")
        );
        assert!(msg.contains("not found on PATH"), "{msg}");
    }

    /// A stdio server that is a shell script.
    fn sh_server(name: &str, script: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            namespace: Some(name.into()),
            transport: Transport::Stdio {
                command: "sh".into(),
                args: vec!["-c".into(), script.into()],
                env: Default::default(),
                cwd: None,
            },
            allow: None,
            deny: vec![],
            timeout: None,
            max_message: None,
            session: Default::default(),
        }
    }

    #[tokio::test]
    async fn a_crashing_server_shows_its_stderr() {
        let server = sh_server("crash", "echo 'boom: missing API key' >&2; exit 3");
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_secs(5))
                .await
                .err()
                .expect("must fail")
        );
        assert!(
            msg.contains("exited during the MCP handshake")
                && msg.contains("boom: missing API key"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn a_silent_server_times_out() {
        let server = sh_server("mute", "echo waiting >&2; sleep 30");
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_millis(500))
                .await
                .err()
                .expect("must fail")
        );
        assert!(
            msg.contains("did not answer") && msg.contains("waiting"),
            "{msg}"
        );
    }
}
