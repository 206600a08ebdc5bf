//! The harness of the telemetry end-to-end tests (`e2e_metrics.rs`, `e2e_traces.rs`,
//! `e2e_status.rs`): one `pegboard serve` with `--metrics` on a free port, on the stdio or the
//! HTTP front, with or without the express lane, and a raw JSON-RPC client session on it that can
//! also send thousands of requests at once. The clients are the parity suites' (`parity/`), with
//! a stdio client of its own here for requests pipelined on the one pipe.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{Mutex, mpsc, watch};

pub use super::parity::{Exchange, Front, WAIT, Way};

/// The log filter of these gateways: the lane says `express call` for each call it carries,
/// and [`SESSION_UP`] once a session's calls may take it.
pub const LOG: &str = "warn,pegboard_gateway::express=trace,\
                       pegboard_gateway::session::http_sessions=debug,\
                       pegboard_gateway::telemetry::session=debug,\
                       pegboard_gateway::gateway::observe=debug";

/// What the gateway logs once the lane knows a session (stdio: after rmcp answered
/// `initialize`; HTTP: once rmcp handled `initialized`). Before, the session's calls go rmcp's
/// way whatever they are.
const SESSION_UP: &str = "express: the session is up";

/// `tests/python/NAME` (a server written with the official Python SDK).
pub fn python_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name)
}

/// The test dependencies' Python (with the `mcp` SDK).
pub fn python() -> PathBuf {
    super::installed(super::test_deps().join("venv/bin/python"))
}

/// A config entry running `tests/python/meta_server.py` (answers the `_meta` it receives).
pub fn meta_server() -> Value {
    json!({"command": python(), "args": [python_script("meta_server.py")]})
}

/// Write `servers` (an `mcpServers` object) as `dir/pegboard.json`: its path.
pub fn write_config(dir: &Path, servers: Value) -> Result<PathBuf> {
    let path = dir.join("pegboard.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
    Ok(path)
}

/// How a gateway is started.
pub struct Setup<'a> {
    /// The front the client uses.
    pub front: Front,
    /// With or without the express lane.
    pub way: Way,
    /// The config.
    pub config: &'a Path,
    /// More flags of `pegboard serve`.
    pub flags: &'a [&'a str],
    /// Its environment, added.
    pub env: &'a [(&'a str, &'a str)],
}

/// A `pegboard serve --metrics 127.0.0.1:0` with a client session on it; killed when dropped.
pub struct Served {
    /// Its front.
    pub front: Front,
    /// Its way.
    pub way: Way,
    /// Where `/metrics` and `/status` are.
    pub metrics: SocketAddr,
    /// Over HTTP: the front's `http://ADDR/mcp`.
    pub url: Option<String>,
    session: Session,
    log: watch::Receiver<Vec<String>>,
    ids: u64,
    _child: Child,
}

enum Session {
    Stdio(Pipelined),
    Http(super::parity::http::Client),
}

/// The address in `pegboard: metrics at http://ADDR/metrics, ...`.
fn metrics_addr(line: &str) -> Option<SocketAddr> {
    let rest = line.split("metrics at http://").nth(1)?;
    rest.split('/').next()?.parse().ok()
}

impl Served {
    /// Start it as `setup` says and wait until every server of the config has started (or
    /// failed) and the client's session is open.
    pub async fn start(setup: Setup<'_>) -> Result<Self> {
        let mut command = tokio::process::Command::new(super::pegboard());
        command.args(["serve", "--metrics", "127.0.0.1:0"]);
        if setup.front == Front::Http {
            command.args(["--http", "127.0.0.1:0"]);
        }
        command
            .args(setup.way.flags())
            .args(setup.flags)
            .arg("--config")
            .arg(setup.config)
            .env("RUST_LOG", LOG)
            .env_remove("PEGBOARD_TOKEN")
            .envs(setup.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().context("spawn pegboard serve")?;
        let mut log = super::collect_lines(child.stderr.take().context("stderr")?);
        // "serving N tools from M servers": every server has started or failed.
        let lines = tokio::time::timeout(
            WAIT,
            log.wait_for(|lines| {
                lines
                    .iter()
                    .any(|l| l.contains("pegboard: serving ") && l.contains(" tool"))
            }),
        )
        .await
        .context("the gateway never said it serves its servers' tools")??
        .clone();
        let metrics = lines
            .iter()
            .find_map(|l| metrics_addr(l))
            .context("no `metrics at` line")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let (session, url) = match setup.front {
            Front::Stdio => {
                let mut client = Pipelined::new(stdin, stdout);
                client.handshake().await?;
                (Session::Stdio(client), None)
            }
            Front::Http => {
                // Its stdin stays open (dropped with the child): nothing reads it.
                std::mem::forget(stdin);
                let url = lines
                    .iter()
                    .find_map(|l| super::serving_url(l))
                    .context("no `serving at URL` line")?;
                let client = super::parity::http::Client::open(&url).await?;
                (Session::Http(client), Some(url))
            }
        };
        // Which way a call goes is then up to the lane alone, not to when the session got there.
        super::wait_for_lines(&mut log, SESSION_UP, 1).await?;
        Ok(Self {
            front: setup.front,
            way: setup.way,
            metrics,
            url,
            session,
            log,
            ids: 0,
            _child: child,
        })
    }

    /// A request of `method` with `params`, and what the client saw of it.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Exchange> {
        self.ids += 1;
        let request = json!({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params});
        match &mut self.session {
            Session::Stdio(client) => client.call(&request).await,
            Session::Http(client) => client.call(&request).await,
        }
    }

    /// `tools/call` of `name` with `arguments`, and `meta` as its `params._meta` if given.
    pub async fn call(
        &mut self,
        name: &str,
        arguments: Value,
        meta: Option<Value>,
    ) -> Result<Exchange> {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        self.request("tools/call", params).await
    }

    /// `n` `tools/call`s of `name` with `arguments`, all sent before any answer is read (over
    /// stdio pipelined on the one pipe, over HTTP one POST each, all at once): their answers.
    pub async fn call_at_once(
        &mut self,
        name: &str,
        arguments: &Value,
        n: usize,
    ) -> Result<Vec<Value>> {
        let first = self.ids + 1;
        self.ids += n as u64;
        let requests: Vec<Value> = (first..first + n as u64)
            .map(|id| {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}})
            })
            .collect();
        match &mut self.session {
            Session::Stdio(client) => client.all_at_once(&requests).await,
            Session::Http(client) => {
                let tasks: Vec<_> = requests
                    .into_iter()
                    .map(|request| {
                        let client = client.clone();
                        tokio::spawn(async move { client.call(&request).await })
                    })
                    .collect();
                let mut answers = Vec::with_capacity(n);
                for task in tasks {
                    let exchange = task.await??;
                    answers.push(exchange.answer.context("a call got no answer")?);
                }
                Ok(answers)
            }
        }
    }

    /// The HTTP session's id (`Mcp-Session-Id`).
    pub fn session_id(&self) -> Option<&str> {
        match &self.session {
            Session::Http(client) => Some(client.session_id()),
            Session::Stdio(_) => None,
        }
    }

    /// End the HTTP session (`DELETE`).
    pub async fn end_session(&self) -> Result<()> {
        match &self.session {
            Session::Http(client) => {
                let status = client.delete().await?;
                if !status.is_success() {
                    bail!("DELETE of the session: HTTP {status}");
                }
                Ok(())
            }
            Session::Stdio(_) => bail!("a stdio session ends with the gateway"),
        }
    }

    /// How many calls the express lane has carried.
    pub fn lane_calls(&self) -> usize {
        super::count_lines(&self.log.borrow(), "express call")
    }

    /// Wait until the lane has carried `n` calls.
    pub async fn wait_lane_calls(&mut self, n: usize) -> Result<()> {
        super::wait_for_lines(&mut self.log, "express call", n).await
    }

    /// Wait until it has logged `n` lines that contain `needle`.
    pub async fn wait_log(&mut self, needle: &str, n: usize) -> Result<()> {
        super::wait_for_lines(&mut self.log, needle, n).await
    }

    /// Everything it has logged so far.
    pub fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    /// `GET /metrics`: the text.
    pub async fn metrics_text(&self) -> Result<String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = format!("http://{}/metrics", self.metrics);
        Ok(reqwest::get(url).await?.error_for_status()?.text().await?)
    }
}

/// The value of the sample of `metric` whose labels include all of `labels` (summed over the
/// other labels), from the Prometheus text format; 0 when there is none.
pub fn sample(text: &str, metric: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (name, rest) = series.split_once('{').unwrap_or((series, "}"));
            (name == metric).then_some((rest, value))
        })
        .filter(|(rest, _)| {
            labels
                .iter()
                .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|(_, value)| value.parse::<f64>().ok())
        .sum()
}

/// A stdio client that may have many requests in flight on the one pipe.
struct Pipelined {
    stdin: Arc<Mutex<ChildStdin>>,
    inbox: mpsc::UnboundedReceiver<Value>,
    /// Answers read while waiting for another, by id.
    early: HashMap<String, Value>,
    /// Notifications read since the last call's answer (the progress of a call made alone).
    notes: Vec<Value>,
}

impl Pipelined {
    fn new(stdin: ChildStdin, stdout: tokio::process::ChildStdout) -> Self {
        let stdin = Arc::new(Mutex::new(stdin));
        let (tx, inbox) = mpsc::unbounded_channel();
        let answers = Arc::clone(&stdin);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if message.get("method").is_some() && message.get("id").is_some() {
                    let answer = format!("{}\n", super::parity::client_answer(&message));
                    if answers
                        .lock()
                        .await
                        .write_all(answer.as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                    continue;
                }
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Self {
            stdin,
            inbox,
            early: HashMap::new(),
            notes: Vec::new(),
        }
    }

    async fn handshake(&mut self) -> Result<()> {
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": super::parity::PROTOCOL_VERSION,
            "capabilities": super::parity::client_capabilities(),
            "clientInfo": {"name": "observe-stdio", "version": "1"}
        }});
        let answer = self.call(&init).await?;
        if answer.result().is_null() {
            bail!("initialize failed: {:?}", answer.answer);
        }
        self.send(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})])
            .await
    }

    async fn send(&self, messages: &[Value]) -> Result<()> {
        let mut bytes = Vec::new();
        for message in messages {
            bytes.extend_from_slice(message.to_string().as_bytes());
            bytes.push(b'\n');
        }
        self.stdin.lock().await.write_all(&bytes).await?;
        Ok(())
    }

    async fn answer(&mut self, id: &Value) -> Result<Value> {
        let key = id.to_string();
        loop {
            if let Some(answer) = self.early.remove(&key) {
                return Ok(answer);
            }
            let message = tokio::time::timeout(WAIT, self.inbox.recv())
                .await
                .with_context(|| format!("no answer to {id} within {WAIT:?}"))?
                .context("the gateway closed its stdout")?;
            if message.get("id").is_some() {
                self.early.insert(message["id"].to_string(), message);
            } else {
                self.notes.push(message);
            }
        }
    }

    async fn call(&mut self, request: &Value) -> Result<Exchange> {
        self.send(std::slice::from_ref(request)).await?;
        self.notes.clear();
        let answer = self.answer(&request["id"]).await?;
        Ok(Exchange {
            before: std::mem::take(&mut self.notes),
            answer: Some(answer),
            ..Exchange::default()
        })
    }

    async fn all_at_once(&mut self, requests: &[Value]) -> Result<Vec<Value>> {
        self.send(requests).await?;
        let mut answers = Vec::with_capacity(requests.len());
        for request in requests {
            answers.push(self.answer(&request["id"]).await?);
        }
        self.notes.clear();
        Ok(answers)
    }
}
