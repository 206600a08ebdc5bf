//! What the telemetry tests share (the gateway's own, and the end-to-end tests of `pegboard
//! serve` in `crates/pegboard-cli/tests`, which include this file by its path): an in-process
//! driver that runs the telemetry hooks the way the call pipeline does, the `--metrics` listener
//! on a free port, the OTLP receiver, a real Prometheus ([`prometheus`]), headless Chromium
//! ([`chromium`]), and the test dependencies' paths.
#![allow(dead_code)]

pub mod chromium;
pub mod prometheus;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pegboard_gateway::testing::telemetry::{
    ErrorType, JsonRpcId, Method, MetricsListener, RequestInfo, Telemetry, TraceContext, Transport,
    UpstreamInfo,
};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};
use tokio_util::sync::CancellationToken;

/// Upper bound on every wait in these tests (never a sleep that must be long enough).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `$PEGBOARD_TEST_DEPS`, else `<workspace>/target/test-deps` (`scripts/setup-test-deps.sh`).
pub fn test_deps() -> PathBuf {
    match std::env::var_os("PEGBOARD_TEST_DEPS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"),
    }
}

/// `path`, which must exist: the tests fail, never skip, without their third-party parts.
pub fn installed(path: PathBuf, how: &str) -> PathBuf {
    assert!(path.exists(), "missing {}: {how}", path.display());
    path
}

/// A Debian program the test needs (`prometheus`, `chromium`): installed by `.ci/run`.
pub fn debian_program(name: &str) -> PathBuf {
    installed(
        PathBuf::from("/usr/bin").join(name),
        &format!("install Debian's `{name}` package (.ci/run does)"),
    )
}

/// One call the driver makes.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The board name (`None`: not on the board, as an unknown name).
    pub tool: Option<&'static str>,
    /// The server's own name of the tool.
    pub original: &'static str,
    /// The server.
    pub server: &'static str,
    /// How it ends.
    pub outcome: Option<ErrorType>,
    /// How long the "server" takes: both requests end this long after the upstream one began
    /// (given to the hooks as the end time, not waited for).
    pub latency: Duration,
    /// Whether the "server" lets other tasks run before it answers.
    pub yields: bool,
}

impl Call {
    /// A call of `tool` (board name `server-original`) ending with `outcome`.
    pub fn new(
        server: &'static str,
        original: &'static str,
        tool: &'static str,
        outcome: Option<ErrorType>,
    ) -> Self {
        Self {
            tool: Some(tool),
            original,
            server,
            outcome,
            latency: Duration::ZERO,
            yields: false,
        }
    }

    /// The same, taking `latency`.
    pub fn taking(self, latency: Duration) -> Self {
        Self { latency, ..self }
    }

    /// The same, letting other tasks run before the answer.
    pub fn yielding(self) -> Self {
        Self {
            yields: true,
            ..self
        }
    }
}

/// Run one call's hooks as the pipeline will: the downstream request starts (with the client's
/// trace context), the upstream request starts and carries a trace context, the "server"
/// answers its latency later, both end then with the outcome. Returns what the upstream request
/// carried in `params._meta`.
pub async fn drive_one(
    telemetry: &Telemetry,
    call: Call,
    id: i64,
    parent: Option<&TraceContext>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut info = RequestInfo::new(Method::ToolsCall, Transport::Tcp);
    info.tool = call.tool;
    info.server = call.tool.map(|_| call.server);
    info.session_id = Some("0f7c8d4a0c9e4b7f");
    info.request_id = Some(JsonRpcId::Number(id));
    info.parent = parent;
    let downstream = telemetry.start_request(&info);
    let mut meta = serde_json::Map::new();
    if call.tool.is_some() {
        let mut up = UpstreamInfo::new(Method::ToolsCall, call.server, Transport::Pipe);
        up.tool = Some(call.original);
        up.request_id = Some(JsonRpcId::Number(id));
        let upstream = downstream.upstream(&up, parent);
        if let Some(context) = upstream.trace_context() {
            context.write_meta(&mut meta);
        }
        if call.yields {
            tokio::task::yield_now().await;
        }
        upstream.finish_at(call.outcome, None, Instant::now() + call.latency);
    }
    let error = if call.tool.is_some() {
        call.outcome
    } else {
        Some(ErrorType::InvalidParams) // an unknown tool: -32602, never sent upstream
    };
    let end = Instant::now() + call.latency;
    downstream.finish_at(error, error.map(|_| "the tool failed"), end);
    meta
}

/// Run `calls` in order.
pub async fn drive(telemetry: &Telemetry, calls: &[Call]) {
    for (i, call) in calls.iter().enumerate() {
        drive_one(telemetry, *call, i64::try_from(i).unwrap_or(0), None).await;
    }
}

/// The `--metrics` listener on a free loopback port, serving until the token is cancelled.
pub async fn listen(telemetry: &Arc<Telemetry>) -> (std::net::SocketAddr, CancellationToken) {
    let listener = MetricsListener::bind("127.0.0.1:0".parse().expect("addr"), None)
        .await
        .expect("bind the metrics listener");
    let addr = listener.local_addr();
    let stop = CancellationToken::new();
    let serve = listener.serve(Arc::clone(telemetry), stop.clone());
    tokio::spawn(async move { serve.await.expect("metrics listener") });
    (addr, stop)
}

/// The OTLP receiver (`telemetry_support/otlp_receiver.py` on the official protobuf definitions).
pub struct Receiver {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    /// Its port.
    pub port: u16,
}

impl Receiver {
    /// Start it in `mode` (`http` or `grpc`) and wait until it listens.
    pub async fn start(mode: &str) -> Self {
        let python = installed(
            test_deps().join("venv/bin/python"),
            "run scripts/setup-test-deps.sh",
        );
        // From either crate's tests: both are folders of `crates/`.
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pegboard-gateway/tests/telemetry_support/otlp_receiver.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the OTLP receiver");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let first = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("the receiver says where it listens")
            .expect("read")
            .expect("a line");
        let port = first
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
        Self { child, lines, port }
    }

    /// The next `n` spans received (waits at most [`PATIENCE`] in all).
    pub async fn spans(&mut self, n: usize) -> Vec<serde_json::Value> {
        let mut spans = Vec::with_capacity(n);
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while spans.len() < n {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("only {} of {n} spans arrived", spans.len()))
                .expect("read")
                .expect("the receiver ended");
            spans.push(serde_json::from_str(&line).expect("a JSON span"));
        }
        spans
    }

    /// The next span, if one arrives within `within`.
    pub async fn next_span(&mut self, within: Duration) -> Option<serde_json::Value> {
        let line = tokio::time::timeout(within, self.lines.next_line())
            .await
            .ok()?
            .expect("read")
            .expect("the receiver ended");
        Some(serde_json::from_str(&line).expect("a JSON span"))
    }

    /// Stop it.
    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = tokio::time::timeout(PATIENCE, self.child.wait()).await;
    }
}

/// GET `url` with `accept` (and a bearer token); status and body.
pub async fn get(url: &str, accept: &str, token: Option<&str>) -> (u16, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let mut request = client.get(url).header("accept", accept);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("GET");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}
