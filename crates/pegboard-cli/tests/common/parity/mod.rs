//! The harness of the parity suites (`tests/parity_stdio.rs`, `tests/parity_http.rs`): one board
//! served by `pegboard serve` twice — with the express lane and with `--no-express` — and a raw
//! JSON-RPC client of each, over stdio or streamable HTTP, that records what it sees of a call
//! (every message on the call's stream before its answer, the answer, over HTTP the response's
//! status and kind) and answers the server's requests during a call as one client would
//! ([`client_answer`]). Which way a call went is read from the gateway's trace log: the lane logs
//! `express call` once per call it carries ([`Gateway::lane_calls`]).
//!
//! The gateways start once per test binary, on one runtime that outlives the tests (a static),
//! and the tests take turns on them ([`paths`] hands out a lock): the log counts a test reads are
//! its own. The scenarios are written once for both fronts: [`scenarios`] (progress,
//! cancellation, the server's requests during a call, timeouts, `_meta`), [`checks`] (what
//! rmcp's way refuses or filters, the lane must too) and, for HTTP only, [`connection`] (a
//! dropped connection, the end of a session).

pub mod checks;
pub mod connection;
pub mod exchange;
pub mod gateway;
pub mod http;
pub mod scenarios;
pub mod stdio;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard, OnceCell};

pub use exchange::Exchange;
pub use gateway::Gateway;

/// The upper bound on any one wait of the suites (an answer, a log line).
pub const WAIT: Duration = Duration::from_secs(30);

/// How the client reaches the gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    /// The client is `pegboard serve`'s parent, on its stdin and stdout.
    Stdio,
    /// Streamable HTTP (`pegboard serve --http`), with no standalone GET stream.
    Http,
}

/// Which of the gateway's two paths a `pegboard serve` may take for a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// `pegboard serve`: a tool's first call goes rmcp's way, later plain calls of a stdio
    /// server's tool take the express lane.
    Express,
    /// `pegboard serve --no-express`: every call goes rmcp's way.
    NoExpress,
}

impl Way {
    /// The flags of `pegboard serve` for this way.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Way::Express => &[],
            Way::NoExpress => &["--no-express"],
        }
    }
}

/// The log filter of every parity gateway: the lane's calls (trace) and the servers' stderr
/// (the test server says `sleep started`, `sleep finished`, `sleep cancelled by the client`).
pub const LOG: &str =
    "warn,pegboard_gateway::express=trace,pegboard::server_stderr=debug,demo_servers=info";

/// The board of the parity suites, written into `dir`: the test server with its parity and ask
/// tools (`t`), the test server again with a one-second call timeout (`slow`), and
/// server-everything (`everything`), all over stdio (the lane carries calls of stdio servers).
pub fn write_board(dir: &Path) -> Result<PathBuf> {
    let mut slow = super::demo_server("test", &[]);
    slow["timeout"] = json!(1);
    let config = json!({"mcpServers": {
        "t": super::demo_server("test", &["--ask-tool", "--parity-tools"]),
        "slow": slow,
        "everything": super::everything_entry(),
    }});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// Tools that must be on the board before a suite begins (one of each server).
pub const BOARD_TOOLS: [&str; 3] = ["t-echo_meta", "slow-sleep", "everything-echo"];

/// The roots the client has (its answer to `roots/list`).
pub fn client_roots() -> Value {
    json!([{"uri": "file:///tmp/pegboard-parity/a", "name": "parity-a"}])
}

/// What the client answers to a request of the server's (`message`): a JSON-RPC response. The
/// same answers on every path, so the results that depend on them compare equal.
pub fn client_answer(message: &Value) -> Value {
    let result = match message["method"].as_str().unwrap_or_default() {
        "sampling/createMessage" => json!({
            "role": "assistant", "model": "parity-model", "stopReason": "endTurn",
            "content": {"type": "text", "text": "sampled by the parity client"}
        }),
        "elicitation/create" => json!({
            "action": "accept",
            "content": {"name": "Ada Lovelace", "check": true, "integer": 7}
        }),
        "roots/list" => json!({"roots": client_roots()}),
        "ping" => json!({}),
        other => {
            return json!({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": format!("the parity client has no {other}")
            }});
        }
    };
    json!({"jsonrpc": "2.0", "id": message["id"], "result": result})
}

/// The capabilities the client declares: every server-to-client request a call may make.
pub fn client_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

/// The protocol version the client speaks (a handshake-era one: the lane's).
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The runtime of a parity suite: it outlives its tests, so the gateways started on it serve
/// them all.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Run `test` on the suite's runtime (what a `#[test]` of a parity suite does).
pub fn block_on<F: std::future::Future<Output = Result<()>>>(test: F) -> Result<()> {
    runtime().block_on(test)
}

/// The two gateways of a front, one per [`Way`].
pub struct Paths {
    /// The front they serve.
    pub front: Front,
    /// `[express, no-express]`.
    pub all: Vec<Gateway>,
}

/// The gateways of `front`, started on first use; the lock is the caller's until it drops it.
pub async fn paths(front: Front) -> Result<MutexGuard<'static, Paths>> {
    static STDIO: OnceCell<Mutex<Paths>> = OnceCell::const_new();
    static HTTP: OnceCell<Mutex<Paths>> = OnceCell::const_new();
    let cell = match front {
        Front::Stdio => &STDIO,
        Front::Http => &HTTP,
    };
    let paths = cell
        .get_or_try_init(|| async {
            let (express, plain) = tokio::try_join!(
                Gateway::start(front, Way::Express),
                Gateway::start(front, Way::NoExpress)
            )?;
            anyhow::Ok(Mutex::new(Paths {
                front,
                all: vec![express, plain],
            }))
        })
        .await?;
    Ok(paths.lock().await)
}
