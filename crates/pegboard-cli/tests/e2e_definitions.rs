//! Tool definitions reach the client whole through the gateway: `execution` (MCP 2025-11-25),
//! which rmcp's `Tool` does not model, read from what the transport received, over a stdio
//! server and a streamable HTTP one (both written with the official Python SDK,
//! `tests/python/execution_server.py`), listed to clients over stdio and over HTTP.
//!
//! The rule for `execution` (pegboard's `execution_for_clients`): the gateway runs every call as
//! a plain call, so `taskSupport: "forbidden"` is listed as the server said, and any other
//! `taskSupport` is left out.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const WAIT: Duration = Duration::from_secs(30);
const VERSION: &str = "2025-11-25";

fn python() -> PathBuf {
    common::installed(common::test_deps().join("venv/bin/python"))
}

fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/execution_server.py")
}

fn write_config(dir: &Path, entry: Value) -> Result<PathBuf> {
    let path = dir.join("pegboard.json");
    std::fs::write(&path, json!({"mcpServers": {"x": entry}}).to_string())?;
    Ok(path)
}

fn stdio_entry() -> Value {
    json!({"command": python(), "args": [server_script()]})
}

/// The Python server over streamable HTTP: the child and the entry that reaches it.
async fn http_entry() -> Result<(tokio::process::Child, Value)> {
    let mut command = tokio::process::Command::new(python());
    command.arg(server_script()).arg("--http");
    let (child, url) = common::spawn_serving(command, WAIT, |line| {
        line.strip_prefix("listening on ").map(str::to_string)
    })
    .await?;
    Ok((child, json!({"url": url})))
}

/// The tools a client is told about, by name.
fn by_name(list: &Value) -> Result<std::collections::HashMap<String, Value>> {
    let tools = list["result"]["tools"].as_array().context("a tool list")?;
    Ok(tools
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t.clone())))
        .collect())
}

fn assert_whole(list: &Value, how: &str) -> Result<()> {
    let tools = by_name(list)?;
    let read = tools
        .get("x-read")
        .with_context(|| format!("{how}: x-read in {list}"))?;
    assert_eq!(
        read["execution"],
        json!({"taskSupport": "forbidden"}),
        "{how}: `execution` of a tool that forbids tasks is listed as its server sent it"
    );
    let slow = tools
        .get("x-slow")
        .with_context(|| format!("{how}: x-slow"))?;
    assert!(
        slow.get("execution").is_none(),
        "{how}: the gateway absorbs tasks, so `taskSupport: optional` is not listed: {slow}"
    );
    let plain = tools
        .get("x-plain")
        .with_context(|| format!("{how}: x-plain"))?;
    assert!(plain.get("execution").is_none(), "{how}: {plain}");
    assert_eq!(
        read["_meta"]["pegboard/namespace"], "x",
        "{how}: the board's _meta"
    );
    Ok(())
}

/// `tools/list` from `pegboard serve` over stdio.
async fn list_over_stdio(config: &Path) -> Result<Value> {
    let mut child = tokio::process::Command::new(common::pegboard())
        .args(["serve", "-q", "--config"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
    // As a client does: the rest once `initialize` is answered.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "e2e-definitions", "version": "1"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).await?;
    stdin.flush().await?;
    tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .context("no answer to initialize")??
        .context("the gateway closed stdout")?;
    let rest = [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in rest {
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
    }
    stdin.flush().await?;
    tokio::time::timeout(WAIT, async {
        while let Some(line) = stdout.next_line().await? {
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == 2 {
                return Ok(message);
            }
        }
        bail!("the gateway closed stdout before answering tools/list")
    })
    .await
    .context("no answer to tools/list")?
}

/// `tools/list` from `pegboard serve --http` over a raw streamable HTTP session.
async fn list_over_http(config: &Path) -> Result<Value> {
    let (_gateway, url) = common::serve_http(config, &[], &[]).await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .body(body.to_string());
        match session {
            Some(id) => request.header("mcp-session-id", id),
            None => request,
        }
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "e2e-definitions", "version": "1"}}});
    let response = tokio::time::timeout(WAIT, post(init, None).send()).await??;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .context("a session id")?
        .to_string();
    answer_in(response).await?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    tokio::time::timeout(WAIT, post(initialized, Some(&session)).send()).await??;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = tokio::time::timeout(WAIT, post(list, Some(&session)).send()).await??;
    answer_in(response).await
}

/// The JSON-RPC answer in a response: its JSON body, or the SSE event that carries an id.
async fn answer_in(response: reqwest::Response) -> Result<Value> {
    if !response.status().is_success() {
        bail!("HTTP {}", response.status());
    }
    let text = tokio::time::timeout(WAIT, response.text()).await??;
    if let Ok(message) = serde_json::from_str::<Value>(&text) {
        return Ok(message);
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .with_context(|| format!("no answer in the event stream: {text}"))
}

#[tokio::test]
async fn execution_of_a_stdio_server_reaches_stdio_and_http_clients() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), stdio_entry())?;
    assert_whole(
        &list_over_stdio(&config).await?,
        "stdio server, stdio client",
    )?;
    assert_whole(&list_over_http(&config).await?, "stdio server, HTTP client")?;
    Ok(())
}

#[tokio::test]
async fn execution_of_an_http_server_reaches_stdio_and_http_clients() -> Result<()> {
    let (_server, entry) = http_entry().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), entry)?;
    assert_whole(
        &list_over_stdio(&config).await?,
        "HTTP server, stdio client",
    )?;
    assert_whole(&list_over_http(&config).await?, "HTTP server, HTTP client")?;
    Ok(())
}
