//! Tool definitions whole on every path (issue 37): one server whose tools carry members rmcp's
//! `Tool` does not model (a vendor's own `x-vendor`, `execution: {taskSupport: forbidden}`),
//! beside `icons`, `_meta`, `annotations` and an `outputSchema` (the test server's
//! `--vendor-tools`, answered as raw JSON), listed through every path a client can ask: stdio
//! and HTTP, a 2025-11-25 session with the express lane and with `--no-express`, a 2026-07-28
//! session, tool search (its pinned tools and its `search_tools` answers), and
//! `pegboard tools --format json`. Each must equal the server's own listing, asked directly, but
//! for the name (`v-` + the server's) and the gateway's `_meta["pegboard/namespace"]`.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const WAIT: Duration = Duration::from_secs(30);
const LEGACY: &str = "2025-11-25";
const NEWEST: &str = "2026-07-28";
const NAMESPACE: &str = "v";

/// A config with the test server and its vendor tools under namespace `v` (and `extra` merged
/// into the top level).
fn write_config(dir: &Path, extra: Value) -> Result<PathBuf> {
    let mut config = json!({"mcpServers": {
        NAMESPACE: common::demo_server("test", &["--vendor-tools"]),
    }});
    if let (Some(config), Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The 2026-07-28 lifecycle keys a request of that generation carries in its `_meta`.
fn newest_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": NEWEST,
        "io.modelcontextprotocol/clientInfo": {"name": "e2e-definitions-whole", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A raw JSON-RPC client on a child's stdin and stdout.
struct Lined {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Lined {
    fn spawn(program: &Path, args: &[&str]) -> Result<Self> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        Ok(Self {
            _child: child,
            stdin,
            stdout,
        })
    }

    async fn send(&mut self, message: &Value) -> Result<()> {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await?;
        Ok(self.stdin.flush().await?)
    }

    /// Send a request and read until its answer (a JSON-RPC error is an error).
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Result<Value> {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request).await?;
        let answer = tokio::time::timeout(WAIT, async {
            while let Some(line) = self.stdout.next_line().await? {
                let message: Value = serde_json::from_str(&line)?;
                if message["id"] == id && message.get("method").is_none() {
                    return Ok(message);
                }
            }
            bail!("stdout closed before the answer to {method}")
        })
        .await
        .with_context(|| format!("no answer to {method}"))??;
        if answer.get("error").is_some() {
            bail!("{method}: {answer}");
        }
        Ok(answer["result"].clone())
    }

    /// The 2025-11-25 handshake.
    async fn initialize(&mut self) -> Result<()> {
        let params = json!({"protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "e2e-definitions-whole", "version": "1"}});
        let result = self.request(1, "initialize", params).await?;
        assert_eq!(result["protocolVersion"], LEGACY, "{result}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }
}

/// The tools of a `tools/list` result.
fn tools_of(result: &Value) -> Result<Vec<Value>> {
    result["tools"]
        .as_array()
        .cloned()
        .with_context(|| format!("no tools in {result}"))
}

/// The server's own listing: the test server asked directly, as a 2025-11-25 client.
async fn direct() -> Result<Vec<Value>> {
    let mut server = Lined::spawn(
        &common::pegboard(),
        &["demo-server", "test", "--vendor-tools"],
    )?;
    server.initialize().await?;
    tools_of(&server.request(2, "tools/list", json!({})).await?)
}

/// A protocol generation of a client.
#[derive(Clone, Copy, Debug)]
enum Generation {
    Legacy,
    Newest,
}

/// `tools/list` from `pegboard serve` over stdio (with `args` added).
async fn over_stdio(config: &Path, args: &[&str], generation: Generation) -> Result<Vec<Value>> {
    let mut all = vec!["serve", "-q", "--config", path_str(config)?];
    all.extend_from_slice(args);
    let mut gateway = Lined::spawn(&common::pegboard(), &all)?;
    match generation {
        Generation::Legacy => {
            gateway.initialize().await?;
            tools_of(&gateway.request(2, "tools/list", json!({})).await?)
        }
        Generation::Newest => {
            let discover = gateway
                .request(1, "server/discover", json!({"_meta": newest_meta()}))
                .await?;
            assert!(
                discover["supportedVersions"]
                    .as_array()
                    .is_some_and(|v| v.contains(&json!(NEWEST))),
                "the gateway must offer {NEWEST} for this path to be one: {discover}"
            );
            let list = gateway
                .request(2, "tools/list", json!({"_meta": newest_meta()}))
                .await?;
            assert_eq!(list["resultType"], "complete", "a {NEWEST} answer: {list}");
            tools_of(&list)
        }
    }
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str().context("a UTF-8 path")
}

/// `tools/list` from `pegboard serve --http` (with `args` added).
async fn over_http(config: &Path, args: &[&str], generation: Generation) -> Result<Vec<Value>> {
    let (_gateway, url) = common::serve_http(config, args, &[]).await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |body: Value, version: &str| {
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .body(body.to_string())
    };
    let list = match generation {
        Generation::Legacy => {
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "e2e-definitions-whole", "version": "1"}}});
            let response = tokio::time::timeout(WAIT, post(init, LEGACY).send()).await??;
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .context("a session id")?
                .to_string();
            answer_in(response).await?;
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let request = post(initialized, LEGACY).header("mcp-session-id", &session);
            tokio::time::timeout(WAIT, request.send()).await??;
            let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
            let request = post(list, LEGACY).header("mcp-session-id", &session);
            answer_in(tokio::time::timeout(WAIT, request.send()).await??).await?
        }
        Generation::Newest => {
            let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                "params": {"_meta": newest_meta()}});
            let request = post(list, NEWEST).header("mcp-method", "tools/list");
            let answer = answer_in(tokio::time::timeout(WAIT, request.send()).await??).await?;
            assert_eq!(
                answer["result"]["resultType"], "complete",
                "a {NEWEST} answer: {answer}"
            );
            answer
        }
    };
    tools_of(&list["result"])
}

/// The JSON-RPC answer in a response: its JSON body, or the SSE event that carries an id.
async fn answer_in(response: reqwest::Response) -> Result<Value> {
    if !response.status().is_success() {
        bail!("HTTP {}: {}", response.status(), response.text().await?);
    }
    let text = tokio::time::timeout(WAIT, response.text()).await??;
    let message = match serde_json::from_str::<Value>(&text) {
        Ok(message) => message,
        Err(_) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .with_context(|| format!("no answer in the event stream: {text}"))?,
    };
    if message.get("error").is_some() {
        bail!("{message}");
    }
    Ok(message)
}

/// `pegboard tools --format json`.
async fn from_the_cli(config: &Path) -> Result<Vec<Value>> {
    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--format", "json", "--config"])
        .arg(config)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let listed: Value = serde_json::from_slice(&out.stdout)?;
    listed.as_array().cloned().context("a JSON array of tools")
}

/// A tool of the gateway as the server defined it: the server's name back, the gateway's
/// namespace key (which must name the namespace) taken out of `_meta`, and `_meta` left out when
/// the server sent none.
fn as_the_server_sent_it(mut tool: Value, server_meta: bool, how: &str) -> Result<Value> {
    let object = tool
        .as_object_mut()
        .with_context(|| format!("{how}: a tool object"))?;
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .with_context(|| format!("{how}: a name"))?;
    let original = name
        .strip_prefix(&format!("{NAMESPACE}-"))
        .with_context(|| format!("{how}: {name} is not a board name of namespace {NAMESPACE}"))?
        .to_string();
    object.insert("name".into(), json!(original));
    let meta = object
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .with_context(|| format!("{how}: {original} has no _meta"))?;
    let namespace = meta.remove("pegboard/namespace");
    anyhow::ensure!(
        namespace == Some(json!(NAMESPACE)),
        "{how}: {original}: the gateway's _meta names {namespace:?}"
    );
    if meta.is_empty() && !server_meta {
        object.remove("_meta");
    }
    Ok(tool)
}

/// The server's definitions by name, with the documented change: `execution.taskSupport` other
/// than `forbidden` is absorbed by the gateway (docs/passthrough.md).
fn expected(direct: &[Value]) -> HashMap<String, Value> {
    direct
        .iter()
        .map(|tool| {
            let mut tool = tool.clone();
            if let Some(execution) = tool.get_mut("execution").and_then(Value::as_object_mut)
                && execution
                    .get("taskSupport")
                    .is_some_and(|s| s != "forbidden")
            {
                execution.remove("taskSupport");
            }
            (tool["name"].as_str().unwrap_or_default().to_string(), tool)
        })
        .collect()
}

/// Every tool of `listed` (a path's listing; `all`: every one of the server's tools must be
/// there) equals the server's definition but for the name and the gateway's `_meta`.
fn assert_whole(direct: &[Value], listed: &[Value], all: bool, how: &str) -> Result<()> {
    let expected = expected(direct);
    let mut seen = Vec::new();
    for tool in listed {
        let restored = as_the_server_sent_it(tool.clone(), false, how)?;
        let name = restored["name"].as_str().unwrap_or_default().to_string();
        let want = expected
            .get(&name)
            .with_context(|| format!("{how}: {name} is not one of the server's tools"))?;
        let restored = if want.get("_meta").is_some() {
            as_the_server_sent_it(tool.clone(), true, how)?
        } else {
            restored
        };
        anyhow::ensure!(
            &restored == want,
            "{how}: {name} differs from the server's:\n  listed: {restored}\n  server: {want}"
        );
        seen.push(name);
    }
    if all {
        let mut missing: Vec<&String> = expected.keys().filter(|n| !seen.contains(n)).collect();
        missing.sort();
        anyhow::ensure!(missing.is_empty(), "{how}: not listed: {missing:?}");
    }
    Ok(())
}

/// The direct listing has what the test is about (else every comparison would pass with the
/// members lost on both sides).
fn assert_direct_has_the_members(direct: &[Value]) {
    let read = direct
        .iter()
        .find(|t| t["name"] == "vendor_read")
        .expect("the server lists vendor_read");
    for member in [
        "x-vendor",
        "execution",
        "icons",
        "_meta",
        "outputSchema",
        "annotations",
    ] {
        assert!(read.get(member).is_some(), "vendor_read without {member}");
    }
    assert_eq!(read["execution"], json!({"taskSupport": "forbidden"}));
}

#[tokio::test]
async fn every_listing_path_gives_the_servers_definitions() -> Result<()> {
    let direct = direct().await?;
    assert_direct_has_the_members(&direct);
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}))?;

    use Generation::{Legacy, Newest};
    let paths: [(&str, &[&str], Generation, bool); 6] = [
        ("stdio, 2025-11-25, express lane", &[], Legacy, false),
        (
            "stdio, 2025-11-25, --no-express",
            &["--no-express"],
            Legacy,
            false,
        ),
        ("stdio, 2026-07-28", &[], Newest, false),
        ("HTTP, 2025-11-25, express lane", &[], Legacy, true),
        (
            "HTTP, 2025-11-25, --no-express",
            &["--no-express"],
            Legacy,
            true,
        ),
        ("HTTP, 2026-07-28", &[], Newest, true),
    ];
    let mut failed = Vec::new();
    for (how, args, generation, http) in paths {
        let listed = if http {
            over_http(&config, args, generation).await
        } else {
            over_stdio(&config, args, generation).await
        };
        // Every path is tried, and all that failed are said at once.
        let checked = listed
            .with_context(|| how.to_string())
            .and_then(|listed| assert_whole(&direct, &listed, true, how));
        if let Err(error) = checked {
            failed.push(format!("{error:#}"));
        }
    }
    let cli = from_the_cli(&config).await?;
    if let Err(error) = assert_whole(&direct, &cli, true, "pegboard tools --format json") {
        failed.push(format!("{error:#}"));
    }
    assert!(failed.is_empty(), "paths that differ: {failed:#?}");
    Ok(())
}

#[tokio::test]
async fn tool_search_answers_with_the_servers_definitions() -> Result<()> {
    let direct = direct().await?;
    assert_direct_has_the_members(&direct);
    let dir = tempfile::tempdir()?;
    let pinned = format!("{NAMESPACE}-vendor_read");
    let config = write_config(
        dir.path(),
        json!({"toolSearch": {"mode": "on", "pinned": [pinned]}}),
    )?;
    for generation in [Generation::Legacy, Generation::Newest] {
        let how = format!("tool search, stdio, {generation:?}");
        let args = ["serve", "-q", "--config", path_str(&config)?];
        let mut gateway = Lined::spawn(&common::pegboard(), &args)?;
        let meta = match generation {
            Generation::Legacy => {
                gateway.initialize().await?;
                json!({})
            }
            Generation::Newest => {
                gateway
                    .request(1, "server/discover", json!({"_meta": newest_meta()}))
                    .await?;
                newest_meta()
            }
        };
        // The pinned tool is listed beside the meta-tools.
        let listed = tools_of(
            &gateway
                .request(2, "tools/list", json!({"_meta": meta}))
                .await?,
        )?;
        let pinned: Vec<Value> = listed
            .into_iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("v-")))
            .collect();
        assert_eq!(pinned.len(), 1, "{how}: {pinned:?}");
        assert_whole(&direct, &pinned, false, &format!("{how}, pinned"))?;

        // `search_tools` answers with each tool's definition and its namespace.
        for (id, query) in [(3, "record"), (4, "v-vendor_bare")] {
            let params = json!({"name": "search_tools",
                "arguments": {"query": query, "limit": 100}, "_meta": meta});
            let answer = gateway.request(id, "tools/call", params).await?;
            let found = answer["structuredContent"]["tools"]
                .as_array()
                .cloned()
                .with_context(|| format!("{how}: no tools found for {query}: {answer}"))?;
            let names: Vec<&str> = found.iter().filter_map(|t| t["name"].as_str()).collect();
            let wanted: &[&str] = if id == 3 {
                &["v-vendor_read", "v-vendor_write"]
            } else {
                &["v-vendor_bare"]
            };
            for name in wanted {
                assert!(names.contains(name), "{how}: {query}: {names:?}");
            }
            let mut as_listed = Vec::new();
            for mut tool in found {
                let object = tool.as_object_mut().context("a found tool")?;
                assert_eq!(object.remove("namespace"), Some(json!(NAMESPACE)), "{how}");
                // `description` is always there; empty for a tool whose server gave none.
                let name = object["name"].as_str().unwrap_or_default();
                let server_gave_one = direct.iter().any(|t| {
                    format!("v-{}", t["name"].as_str().unwrap_or_default()) == name
                        && t.get("description").is_some()
                });
                if !server_gave_one {
                    assert_eq!(object.remove("description"), Some(json!("")), "{how}");
                }
                as_listed.push(tool);
            }
            assert_whole(
                &direct,
                &as_listed,
                false,
                &format!("{how}, search_tools {query}"),
            )?;
        }
    }
    Ok(())
}
