//! The harness of the result-cap tests (`tests/e2e_caps.rs`): `pegboard serve` over stdio or
//! streamable HTTP, with the express lane or `--no-express`, in front of the Python SDK server
//! `tests/python/caps_server.py`, whose output is copied (`tee`) to a file so a test can compare
//! what the client got with what the server sent, byte for byte; and a raw JSON-RPC client that
//! keeps each answer exactly as the gateway wrote it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::watch;

use super::common;

/// The upper bound on any one wait (an answer, a log line).
pub const WAIT: Duration = Duration::from_secs(60);

/// The protocol version of the raw client (a handshake-era one: the lane serves those).
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The log filter: the lane logs `express call` (trace) for every call it carries.
const LOG: &str = "warn,pegboard_gateway::express=trace";

/// How the client reaches the gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    Stdio,
    Http,
}

/// Whether the gateway may take the express lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Express,
    NoExpress,
}

/// A folder with a config that runs `caps_server.py` as server `caps` (its output copied to
/// `server.out` in the folder) with `entry` merged into its entry; the config's path.
pub fn board(dir: &Path, entry: Value) -> Result<PathBuf> {
    let python = common::installed(common::test_deps().join("venv/bin/python"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/caps_server.py");
    let mut server = json!({
        "command": "sh",
        "args": ["-c", r#""$0" "$1" | tee "$2""#, python, script, dir.join("server.out")],
    });
    if let (Some(server), Some(extra)) = (server.as_object_mut(), entry.as_object()) {
        server.extend(extra.clone());
    }
    let path = dir.join("pegboard.json");
    std::fs::write(&path, json!({"mcpServers": {"caps": server}}).to_string())?;
    Ok(path)
}

/// Every line the server has written so far (see [`board`]).
pub fn server_lines(dir: &Path) -> Result<Vec<String>> {
    Ok(std::fs::read_to_string(dir.join("server.out"))?
        .lines()
        .map(str::to_string)
        .collect())
}

/// One answer as the client got it: the exact text, and its JSON.
#[derive(Debug, Clone)]
pub struct Answer {
    pub raw: String,
    pub json: Value,
}

impl Answer {
    /// The answer's `result` (`Null` if it has none).
    pub fn result(&self) -> &Value {
        self.json.get("result").unwrap_or(&Value::Null)
    }
}

/// A `pegboard serve` with one client session on it.
pub struct Gateway {
    pub front: Front,
    pub way: Way,
    session: Session,
    log: watch::Receiver<Vec<String>>,
    ids: u64,
    _child: Child,
}

enum Session {
    Stdio {
        stdin: ChildStdin,
        stdout: Lines<BufReader<ChildStdout>>,
    },
    Http {
        http: reqwest::Client,
        url: String,
        id: String,
    },
}

impl Gateway {
    /// `pegboard serve FLAGS --config CONFIG` on `front`, the lane on or off, with a session
    /// that has done its handshake.
    pub async fn start(config: &Path, front: Front, way: Way, flags: &[&str]) -> Result<Self> {
        let mut flags = flags.to_vec();
        if way == Way::NoExpress {
            flags.push("--no-express");
        }
        let env = [("RUST_LOG", LOG)];
        let (child, session, log) = match front {
            Front::Stdio => {
                let mut child = tokio::process::Command::new(common::pegboard())
                    .args(["serve", "-q"])
                    .args(&flags)
                    .arg("--config")
                    .arg(config)
                    .envs(env)
                    .env_remove("PEGBOARD_TOKEN")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .context("spawn pegboard serve")?;
                let log = common::collect_lines(child.stderr.take().context("stderr")?);
                let stdin = child.stdin.take().context("stdin")?;
                let stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
                (child, Session::Stdio { stdin, stdout }, log)
            }
            Front::Http => {
                let (child, url, log) = common::serve_http_logged(config, &flags, &env).await?;
                let _ = rustls::crypto::ring::default_provider().install_default();
                let http = reqwest::Client::new();
                let session = Session::Http {
                    http,
                    url,
                    id: String::new(),
                };
                (child, session, log)
            }
        };
        let mut gateway = Self {
            front,
            way,
            session,
            log,
            ids: 0,
            _child: child,
        };
        gateway.handshake().await?;
        Ok(gateway)
    }

    async fn handshake(&mut self) -> Result<()> {
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "caps-test", "version": "1"}
        }});
        let answer = self.request(init).await?;
        if answer.result().is_null() {
            bail!("initialize failed: {}", answer.raw);
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }

    /// Fail unless `tool` is on the board (`tools/list` waits for the servers to start).
    pub async fn expect_tool(&mut self, tool: &str) -> Result<()> {
        let listed = self.request_of("tools/list", json!({})).await?;
        let names: Vec<&str> = listed.result()["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        if !names.contains(&tool) {
            bail!("{tool} is not on the board: {names:?}");
        }
        Ok(())
    }

    /// `tools/call` of `tool` with `arguments`.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Result<Answer> {
        self.request_of("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    async fn request_of(&mut self, method: &str, params: Value) -> Result<Answer> {
        self.ids += 1;
        let id = format!("{method}-{}", self.ids);
        self.request(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// Send `message` (a request) and read its answer as it was written.
    async fn request(&mut self, message: Value) -> Result<Answer> {
        let id = message["id"].clone();
        match &mut self.session {
            Session::Stdio { stdin, stdout } => {
                stdin.write_all(format!("{message}\n").as_bytes()).await?;
                loop {
                    let line = tokio::time::timeout(WAIT, stdout.next_line())
                        .await
                        .with_context(|| format!("no answer to {id}"))??
                        .context("the gateway closed its stdout")?;
                    let json: Value = serde_json::from_str(&line)
                        .with_context(|| format!("not JSON: {line:.200}"))?;
                    if json.get("method").is_none() && json["id"] == id {
                        return Ok(Answer { raw: line, json });
                    }
                }
            }
            Session::Http {
                http,
                url,
                id: session,
            } => {
                let response = post(http, url, session, &message).await?;
                if session.is_empty()
                    && let Some(given) = response.headers().get("mcp-session-id")
                {
                    *session = given.to_str()?.to_string();
                }
                read_answer(response, &id).await
            }
        }
    }

    /// Send a notification.
    async fn send(&mut self, message: Value) -> Result<()> {
        match &mut self.session {
            Session::Stdio { stdin, .. } => {
                stdin.write_all(format!("{message}\n").as_bytes()).await?;
            }
            Session::Http { http, url, id } => {
                let status = post(http, url, id, &message).await?.status();
                if status.as_u16() != 202 {
                    bail!("{message}: HTTP {status}");
                }
            }
        }
        Ok(())
    }

    /// Make sure the copy of the server's output has every line the gateway has had so far:
    /// `tee` writes a line to the gateway before it writes it to the file, and takes the next
    /// only after, so once the answer of one more call has come, the lines before it are there.
    pub async fn sync_server_copy(&mut self) -> Result<()> {
        let answer = self.call("caps-small", json!({})).await?;
        ensure!(answer.result().is_object(), "{}", answer.raw);
        Ok(())
    }

    /// How many calls the express lane has carried (it logs `express call` for each).
    pub fn lane_calls(&self) -> usize {
        common::count_lines(&self.log.borrow(), "express call")
    }

    /// Check that a call made after the lane had carried `before` calls took the lane with
    /// [`Way::Express`] (its log line came), and that [`Way::NoExpress`] never took it.
    pub async fn took_the_lane(&mut self, before: usize, what: &str) -> Result<()> {
        match self.way {
            Way::Express => common::wait_for_lines(&mut self.log, "express call", before + 1)
                .await
                .with_context(|| format!("{what} over {:?}: not on the lane", self.front)),
            Way::NoExpress => match self.lane_calls() {
                0 => Ok(()),
                n => bail!("--no-express over {:?}: {n} calls on the lane", self.front),
            },
        }
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    message: &Value,
) -> Result<reqwest::Response> {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .body(message.to_string());
    if !session.is_empty() {
        request = request.header("mcp-session-id", session);
    }
    Ok(tokio::time::timeout(WAIT, request.send()).await??)
}

/// The answer to `id` in `response`: its JSON body, or the data of its event that carries it.
async fn read_answer(response: reqwest::Response, id: &Value) -> Result<Answer> {
    let status = response.status();
    let event_stream = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = tokio::time::timeout(WAIT, response.text())
        .await
        .with_context(|| format!("the response to {id} did not end"))??;
    let candidates: Vec<String> = if event_stream {
        body.split("\n\n")
            .map(|event| {
                event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(|data| data.strip_prefix(' ').unwrap_or(data))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    } else {
        vec![body.trim_end().to_string()]
    };
    for raw in candidates {
        let Ok(json) = serde_json::from_str::<Value>(&raw) else {
            continue;
        };
        if json.get("method").is_none() && json["id"] == *id {
            return Ok(Answer { raw, json });
        }
    }
    bail!("HTTP {status}: no answer to {id} in {:.300}", body)
}

/// The server's answer line the lane passed on as `answer` (the lane puts the client's id in
/// place of its own `"pbx-N"` and changes nothing else), if there is one among `lines`.
pub fn passed_verbatim<'a>(lines: &'a [String], answer: &Answer) -> Option<&'a String> {
    let client_id = serde_json::to_string(&answer.json["id"]).ok()?;
    lines.iter().find(|line| {
        let Some(at) = line.find("\"pbx-") else {
            return false;
        };
        let Some(len) = line[at + 1..].find('"') else {
            return false;
        };
        let lane_id = &line[at..at + len + 2];
        line.replacen(lane_id, &client_id, 1) == answer.raw
    })
}
