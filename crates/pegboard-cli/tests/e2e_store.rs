//! Issue 34: sessions any replica can serve, through a real Redis (`--store`).
//!
//! Each test starts its own `redis-server` (Debian's; `demo_servers::testing::redis`) and
//! `pegboard serve --http --store` replicas on loopback. Raw HTTP where the test must choose
//! the replica (a session opened on A, answered by B after A is gone; rmcp's way and the express
//! lane told apart by the answer's content type: SSE for rmcp's, one JSON body for the lane's);
//! the official Python SDK client (legacy, stateful) and the TypeScript SDK client behind nginx
//! round robin (`docs/deploy/nginx-store.conf` itself, no session map) for the rolling restart.
//! Everything waited for is an event: a log line, a file the client writes, a process's exit.

mod common;
#[path = "e2e_store/told.rs"]
mod told;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use common::nginx::Nginx;
use common::sdk_replicas::{self, Sdk};
use demo_servers::testing::redis::RedisServer;
use serde_json::{Value, json};
use tokio::sync::watch;

/// Bound on every request and wait.
const WAIT: Duration = Duration::from_secs(30);

/// The shipped nginx config: the rolling restart runs this very file.
const SHIPPED: &str = include_str!("../../../docs/deploy/nginx-store.conf");
const SHIPPED_PORTS: [&str; 3] = ["127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003"];
const SHIPPED_LISTEN: &str = "listen 80;";
const PUBLIC_HOST: &str = "mcp.example.com";

/// Which way a request went, by the answer's content type.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Way {
    Lane,
    Rmcp,
}

/// The units demo (a stdio server: its calls may take the express lane) and server-everything
/// (prompts and resources).
fn write_config(dir: &Path, extra: Value) -> PathBuf {
    let mut config = json!({
        "mcpServers": {
            "units": common::demo_server("units", &[]),
            "everything": common::everything_entry(),
        }
    });
    if let (Some(config), Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// A `pegboard serve --http ADDR --store URL` replica, its log lines watched.
struct Replica {
    child: tokio::process::Child,
    url: String,
    log: watch::Receiver<Vec<String>>,
}

impl Replica {
    /// On `addr` (`127.0.0.1:0` for any port).
    async fn start(config: &Path, addr: &str, store: &str, extra: &[&str]) -> Result<Self> {
        let mut command = tokio::process::Command::new(common::pegboard());
        command
            .args(["serve", "--http", addr, "--store", store, "--drain", "10"])
            .args(extra)
            .arg("--config")
            .arg(config)
            .env_remove("PEGBOARD_TOKEN")
            .env_remove("PEGBOARD_STORE")
            .env("RUST_LOG", "info,pegboard_gateway::express=trace,pegboard_gateway::session=debug,pegboard_gateway::http::adopt=debug,pegboard_gateway::server::adopted=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().context("spawn pegboard serve")?;
        let log = common::collect_lines(child.stderr.take().context("stderr")?);
        let mut watching = log.clone();
        // The MCP endpoint's line (the metrics listener says `serving ... at` too).
        let mcp = |l: &String| common::serving_url(l).filter(|u| u.ends_with("/mcp"));
        let url = tokio::time::timeout(
            WAIT,
            watching.wait_for(|lines| lines.iter().any(|l| mcp(l).is_some())),
        )
        .await
        .context("no `serving at URL` line")??
        .iter()
        .find_map(mcp)
        .context("a URL")?;
        Ok(Self { child, url, log })
    }

    /// Until a log line contains `needle`.
    async fn logged(&self, needle: &str) -> Result<()> {
        let mut log = self.log.clone();
        tokio::time::timeout(
            WAIT,
            log.wait_for(|lines| lines.iter().any(|l| l.contains(needle))),
        )
        .await
        .with_context(|| format!("no log line with `{needle}`"))??;
        Ok(())
    }

    /// SIGTERM, and its exit (after the drain).
    async fn stop(&mut self) -> Result<()> {
        let status = common::terminate(&mut self.child).await?;
        anyhow::ensure!(status.success(), "the replica exited with {status}");
        Ok(())
    }
}

/// A client of one session over raw HTTP, sending each request to the replica it is told.
struct RawClient {
    http: reqwest::Client,
    session: String,
    token: Option<String>,
}

/// An answer: its HTTP status, its `Retry-After`, the JSON-RPC message and the way it went.
#[derive(Debug)]
struct Answer {
    status: reqwest::StatusCode,
    retry_after: Option<String>,
    body: String,
    message: Option<(Way, Value)>,
}

impl RawClient {
    fn new(token: Option<&str>) -> Self {
        // reqwest is built without a crypto provider in this workspace (rustls with ring).
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            http: reqwest::Client::new(),
            session: String::new(),
            token: token.map(String::from),
        }
    }

    async fn post(&self, url: &str, body: &Value) -> Result<Answer> {
        let mut request = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if !self.session.is_empty() {
            request = request.header("mcp-session-id", &self.session);
        }
        let response = tokio::time::timeout(WAIT, request.send())
            .await
            .context("no answer in time")??;
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = tokio::time::timeout(WAIT, response.text()).await??;
        let message = if !status.is_success() {
            None
        } else if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m.get("id").is_some())
                .map(|m| (Way::Rmcp, m))
        } else {
            serde_json::from_str::<Value>(&text)
                .ok()
                .map(|m| (Way::Lane, m))
        };
        Ok(Answer {
            status,
            retry_after,
            body: text,
            message,
        })
    }

    /// `initialize` and `notifications/initialized` at `url`: the session is open there.
    async fn open(&mut self, url: &str) -> Result<()> {
        self.open_with(url, json!({})).await
    }

    /// [`Self::open`], declaring the client's `capabilities`.
    async fn open_with(&mut self, url: &str, capabilities: Value) -> Result<()> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "e2e-store", "version": "1"}
        }});
        let mut request = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = tokio::time::timeout(WAIT, request.send()).await??;
        anyhow::ensure!(
            response.status().is_success(),
            "initialize: {}",
            response.status()
        );
        self.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("a session id")?
            .to_string();
        let _ = response.text().await?;
        let answer = self
            .post(
                url,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await?;
        anyhow::ensure!(
            answer.status == reqwest::StatusCode::ACCEPTED,
            "initialized: {answer:?}"
        );
        Ok(())
    }

    /// A JSON-RPC request to `url`; its result, and the way it went.
    async fn call(&self, url: &str, id: u64, method: &str, params: Value) -> Result<(Way, Value)> {
        let answer = self
            .post(
                url,
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            )
            .await?;
        let Some((way, message)) = answer.message else {
            bail!("{method} at {url}: {} {}", answer.status, answer.body);
        };
        let result = message
            .get("result")
            .cloned()
            .with_context(|| format!("{method}: {message}"))?;
        Ok((way, result))
    }

    /// `units-convert` of `n` kg at `url`, checked; the way it went.
    async fn convert(&self, url: &str, n: u64) -> Result<Way> {
        let (way, result) = self
            .call(
                url,
                n,
                "tools/call",
                json!({"name": "units-convert", "arguments": {"value": n, "from": "kg", "to": "g"}}),
            )
            .await?;
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        anyhow::ensure!(
            text == format!("{n} kg = {} g", n * 1000),
            "units-convert {n}: {result}"
        );
        Ok(way)
    }
}

/// The value of the unlabelled counter `name` in a Prometheus exposition.
fn counter(exposition: &str, name: &str) -> Option<f64> {
    exposition
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test]
async fn a_session_opened_on_one_replica_is_answered_by_another_after_it_is_gone() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let mut client = RawClient::new(None);
    client.open(&a.url).await?;
    client.convert(&a.url, 1).await?;
    client.convert(&a.url, 2).await?;
    a.stop().await?;
    // B does not hold the session: it takes it over from the store, rmcp's way.
    assert_eq!(client.convert(&b.url, 3).await?, Way::Rmcp);
    b.logged("express: the session is up").await?;
    // Then it is B's own: plain calls take the express lane.
    assert_eq!(client.convert(&b.url, 4).await?, Way::Lane);
    let (_, prompts) = client.call(&b.url, 5, "prompts/list", json!({})).await?;
    let prompts = prompts["prompts"].as_array().context("prompts")?;
    assert!(
        prompts.iter().any(|p| p["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("everything-"))),
        "{prompts:?}"
    );
    let (_, resources) = client.call(&b.url, 6, "resources/list", json!({})).await?;
    let first = resources["resources"][0]["uri"]
        .as_str()
        .context("a resource")?
        .to_string();
    let (_, read) = client
        .call(&b.url, 7, "resources/read", json!({"uri": first}))
        .await?;
    assert!(
        read["contents"].as_array().is_some_and(|c| !c.is_empty()),
        "{read}"
    );
    // Ended by its client: gone from the store, so no replica takes it over any more.
    let c = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let deleted = client
        .http
        .delete(&b.url)
        .header("mcp-session-id", &client.session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await?;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let answer = client
        .post(
            &c.url,
            &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}}),
        )
        .await?;
    assert_eq!(answer.status, reqwest::StatusCode::NOT_FOUND, "{answer:?}");
    Ok(())
}

#[tokio::test]
async fn a_taken_over_session_gets_back_its_log_level_and_subscriptions() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let mut client = RawClient::new(None);
    client.open(&a.url).await?;
    let (_, resources) = client.call(&a.url, 1, "resources/list", json!({})).await?;
    let uri = resources["resources"][0]["uri"]
        .as_str()
        .context("a resource")?
        .to_string();
    client
        .call(&a.url, 2, "logging/setLevel", json!({"level": "debug"}))
        .await?;
    client
        .call(&a.url, 3, "resources/subscribe", json!({"uri": uri}))
        .await?;
    // Written beside the requests: what the store holds of the session says so once they are.
    let key = format!("pegboard:session:{}", client.session);
    let mut watch = tokio::net::TcpStream::connect(("127.0.0.1", redis.port())).await?;
    let mut seen = String::new();
    for _ in 0..100 {
        seen = hgetall(&mut watch, &key).await?;
        if seen.contains("debug") && seen.contains(&uri) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(seen.contains("debug") && seen.contains(&uri), "{seen}");
    a.stop().await?;
    client.convert(&b.url, 4).await?;
    b.logged(&format!(
        "session {} taken over: log level Some(Debug), 1 subscription(s) set again",
        client.session
    ))
    .await?;
    Ok(())
}

/// `HGETALL key` over a raw connection (RESP), the reply as text: what the store holds.
async fn hgetall(stream: &mut tokio::net::TcpStream, key: &str) -> Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let command = format!("*2\r\n$7\r\nHGETALL\r\n${}\r\n{key}\r\n", key.len());
    stream.write_all(command.as_bytes()).await?;
    let mut buf = vec![0u8; 64 * 1024];
    let n = tokio::time::timeout(WAIT, stream.read(&mut buf)).await??;
    Ok(String::from_utf8_lossy(&buf[..n]).into_owned())
}

#[tokio::test]
async fn a_notification_stream_reconnects_to_any_replica() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let mut client = RawClient::new(None);
    client.open(&a.url).await?;
    a.stop().await?;
    // The client's GET stream, reopened after its replica went away, lands on B: taken over.
    let stream = tokio::time::timeout(
        WAIT,
        client
            .http
            .get(&b.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &client.session)
            .header("mcp-protocol-version", "2025-06-18")
            .send(),
    )
    .await??;
    assert_eq!(stream.status(), reqwest::StatusCode::OK);
    let kind = stream
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    client.convert(&b.url, 1).await?;
    drop(stream);
    Ok(())
}

#[tokio::test]
async fn another_clients_token_cannot_take_a_session_over() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(
        dir.path(),
        json!({"clients": {
            "alice": {"token": "alice-token-0123456789"},
            "bob": {"token": "bob-token-0123456789"}
        }}),
    );
    let a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let mut alice = RawClient::new(Some("alice-token-0123456789"));
    alice.open(&a.url).await?;
    let mut bob = RawClient::new(Some("bob-token-0123456789"));
    bob.session = alice.session.clone();
    let answer = bob
        .post(
            &b.url,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        )
        .await?;
    assert_eq!(answer.status, reqwest::StatusCode::FORBIDDEN, "{answer:?}");
    // The refusal did not take it over: alice's own request on B does.
    assert_eq!(alice.convert(&b.url, 2).await?, Way::Rmcp);
    Ok(())
}

#[tokio::test]
async fn the_store_killed_under_load_fails_only_what_needs_it_and_comes_back() -> Result<()> {
    let mut redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(
        &config,
        "127.0.0.1:0",
        &redis.url(0),
        &["--metrics", &metrics],
    )
    .await?;
    let mut held = RawClient::new(None);
    held.open(&a.url).await?;
    held.convert(&a.url, 1).await?;
    // Calls keep going on A (the session it holds) while the store dies under them.
    let load = {
        let url = a.url.clone();
        let client = RawClient {
            http: held.http.clone(),
            session: held.session.clone(),
            token: None,
        };
        tokio::spawn(async move {
            let mut n = 100;
            let mut ok = 0;
            while ok < 200 {
                n += 1;
                client.convert(&url, n).await?;
                ok += 1;
            }
            anyhow::Ok(ok)
        })
    };
    redis.kill().await?;
    // B would have to read the session from the store: 503 with Retry-After, in bounded time.
    let started = std::time::Instant::now();
    let answer = held
        .post(
            &b.url,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        )
        .await?;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "{answer:?}"
    );
    assert_eq!(answer.retry_after.as_deref(), Some("1"), "{answer:?}");
    assert!(answer.body.contains("session store"), "{}", answer.body);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let exposition = reqwest::get(format!("http://{metrics}/metrics"))
        .await?
        .text()
        .await?;
    let errors = counter(&exposition, "pegboard_store_errors_total").context("the counter")?;
    assert!(errors >= 1.0, "{exposition}");
    // A new session on A while the store is down: opened and served there.
    let mut fresh = RawClient::new(None);
    fresh.open(&a.url).await?;
    fresh.convert(&a.url, 3).await?;
    // Every call of the held session on A went through.
    assert_eq!(load.await??, 200);
    // The store comes back empty: A writes its sessions back, and B takes them over.
    redis.restart().await?;
    let wrote_back = format!("session {} written back to the store", fresh.session);
    a.logged(&wrote_back).await?;
    let wrote_back = format!("session {} written back to the store", held.session);
    a.logged(&wrote_back).await?;
    assert_eq!(held.convert(&b.url, 4).await?, Way::Rmcp);
    assert_eq!(fresh.convert(&b.url, 5).await?, Way::Rmcp);
    Ok(())
}

#[tokio::test]
async fn a_draining_replica_serves_what_it_holds_sends_the_rest_elsewhere_and_leaves_its_sessions()
-> Result<()> {
    use rmcp::ServiceExt;
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = common::latched::ask_config(dir.path())?;
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    let b = Replica::start(&config, "127.0.0.1:0", &redis.url(0), &[]).await?;
    a.logged("from 1 server").await?;
    // A call in flight on A when it gets SIGTERM, held open by the test.
    let (asked_tx, mut asked) = tokio::sync::mpsc::channel(1);
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(a.url.as_str());
    let latched = tokio::time::timeout(
        WAIT,
        common::latched::Latched { asked: asked_tx }.serve(transport),
    )
    .await??;
    let in_flight = common::latched::call_ask(latched);
    let release = tokio::time::timeout(WAIT, asked.recv())
        .await?
        .context("the call never reached its elicitation")?;
    let mut held = RawClient::new(None);
    held.open(&a.url).await?;
    let mut elsewhere = RawClient::new(None);
    elsewhere.open(&b.url).await?;
    let pid = a.child.id().context("A has exited")?;
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    assert!(kill.success());
    a.logged("draining").await?;
    // A session A holds is served on.
    let (_, echoed) = held
        .call(
            &a.url,
            1,
            "tools/call",
            json!({"name": "t-echo", "arguments": {"text": "still here"}}),
        )
        .await?;
    assert_eq!(echoed["content"][0]["text"], "still here", "{echoed}");
    // A session it does not hold: not taken over while draining, 503 for the balancer to retry.
    let answer = elsewhere
        .post(
            &a.url,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        )
        .await?;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::SERVICE_UNAVAILABLE,
        "{answer:?}"
    );
    assert_eq!(answer.retry_after.as_deref(), Some("1"), "{answer:?}");
    // The call finishes; A exits 0; its sessions stay in the store for another replica.
    release
        .send(())
        .map_err(|()| anyhow::anyhow!("the client's elicitation is gone"))?;
    let result = tokio::time::timeout(WAIT, in_flight).await???;
    assert_eq!(
        common::first_text(&result),
        r#"accept {"answer":"late"}"#,
        "{result:?}"
    );
    let status = tokio::time::timeout(WAIT, a.child.wait()).await??;
    assert!(status.success(), "{status}");
    let (way, echoed) = held
        .call(
            &b.url,
            3,
            "tools/call",
            json!({"name": "t-echo", "arguments": {"text": "moved"}}),
        )
        .await?;
    assert_eq!(
        (way, &echoed["content"][0]["text"]),
        (Way::Rmcp, &json!("moved")),
        "{echoed}"
    );
    Ok(())
}

#[tokio::test]
async fn the_store_is_read_from_the_flag_the_environment_or_the_config_and_a_bad_one_is_refused()
-> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({"store": {"url": redis.url(0)}}));
    // From the config alone: it connects (and says so, the password never shown).
    let mut command = tokio::process::Command::new(common::pegboard());
    command
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env_remove("PEGBOARD_STORE")
        .env_remove("PEGBOARD_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let log = common::collect_lines(child.stderr.take().context("stderr")?);
    let replica = Replica {
        child,
        url: String::new(),
        log,
    };
    replica
        .logged(&format!("store {} answers", redis.url(0)))
        .await?;
    drop(replica);
    // A bad URL, by flag or by environment: refused at once, saying why, the password hidden.
    for (args, env) in [
        (vec!["--store", "http://:hunter2@cache:6379"], None),
        (vec![], Some("redis://:hunter2@cache/zero")),
    ] {
        let mut command = std::process::Command::new(common::pegboard());
        command
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(&args)
            .arg("--config")
            .arg(&config)
            .env_remove("PEGBOARD_STORE")
            .stdin(Stdio::null());
        if let Some(env) = env {
            command.env("PEGBOARD_STORE", env);
        }
        let out = command.output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} {env:?} was accepted");
        assert!(
            stderr.contains("redis://HOST:PORT/DB") || stderr.contains("database number"),
            "{stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    Ok(())
}

/// The shipped config with the test's three replica addresses.
fn fleet_site(addrs: &[String; 3]) -> Result<String> {
    let mut site = SHIPPED.to_string();
    for (shipped, ours) in SHIPPED_PORTS.iter().zip(addrs) {
        if !site.contains(shipped) {
            bail!("docs/deploy/nginx-store.conf no longer contains `{shipped}`: update this test");
        }
        site = site.replace(shipped, ours);
    }
    if !site.contains(SHIPPED_LISTEN) {
        bail!("docs/deploy/nginx-store.conf no longer contains `{SHIPPED_LISTEN}`");
    }
    Ok(site.replace(SHIPPED_LISTEN, "listen {LISTEN};"))
}

/// An SDK client calling through `url` in `sessions` sessions until `until` exists.
fn sdk_client(sdk: Sdk, url: &str, sessions: u32, until: &Path) -> Result<tokio::process::Child> {
    let mut command = sdk_replicas::command(sdk);
    command
        .args(["--sessions", &sessions.to_string(), "--calls", "1"])
        .args(["--concurrency", &sessions.to_string(), "--timeout", "20"])
        .arg("--until")
        .arg(until)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
        .spawn()
        .with_context(|| format!("spawn the {sdk:?} client (is node/python installed?)"))
}

/// A running SDK client: its stdout lines as they come.
struct Run {
    sdk: Sdk,
    until: PathBuf,
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Run {
    fn start(sdk: Sdk, url: &str, sessions: u32, until: PathBuf) -> Result<Self> {
        use tokio::io::AsyncBufReadExt;
        let mut child = sdk_client(sdk, url, sessions, &until)?;
        let stdout = child.stdout.take().context("stdout")?;
        Ok(Self {
            sdk,
            until,
            child,
            lines: tokio::io::BufReader::new(stdout).lines(),
        })
    }

    /// Until the client says every session answered a call.
    async fn started(&mut self) -> Result<()> {
        let started = async {
            while let Some(line) = self.lines.next_line().await? {
                if line == "started" {
                    return anyhow::Ok(());
                }
            }
            bail!(
                "the {:?} client ended before its sessions were up",
                self.sdk
            )
        };
        tokio::time::timeout(Duration::from_secs(60), started)
            .await
            .with_context(|| format!("the {:?} client's sessions were not up in 60 s", self.sdk))?
    }

    /// Tell it to stop; its result line.
    async fn finish(mut self) -> Result<String> {
        std::fs::write(&self.until, "")?;
        let rest = async {
            let mut last = String::new();
            while let Some(line) = self.lines.next_line().await? {
                last = line;
            }
            anyhow::Ok(last)
        };
        let last = tokio::time::timeout(Duration::from_secs(120), rest)
            .await
            .with_context(|| format!("the {:?} client did not stop", self.sdk))??;
        let status = self.child.wait().await?;
        if last.is_empty() {
            let mut stderr = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = e.read_to_string(&mut stderr).await;
            }
            bail!(
                "the {:?} client printed no result ({status}): {stderr}",
                self.sdk
            );
        }
        Ok(last)
    }
}

#[tokio::test]
async fn a_rolling_restart_behind_nginx_round_robin_loses_no_call_and_no_session() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let extra = ["--allow-host", PUBLIC_HOST];
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(&config, "127.0.0.1:0", &redis.url(0), &extra).await?);
    }
    let addrs: [String; 3] = std::array::from_fn(|i| common::host_port(&replicas[i].url));
    let nginx = Nginx::start(&fleet_site(&addrs)?).await?;
    let mut runs = Vec::new();
    for sdk in [Sdk::Python, Sdk::Ts] {
        let until = dir.path().join(format!("stop-{sdk:?}"));
        runs.push(Run::start(sdk, &nginx.url, 3, until)?);
    }
    for run in &mut runs {
        run.started().await?;
    }
    // Each replica in turn: SIGTERM, its exit after the drain, a new one on the same port (it
    // says it serves once its store answered), which takes over a session of the clients' before
    // the next one stops: the clients go on calling through the restarted fleet.
    let mut retired = Vec::new();
    for (i, addr) in addrs.iter().enumerate() {
        replicas[i].stop().await?;
        let new = Replica::start(&config, addr, &redis.url(0), &extra).await?;
        new.logged("answers").await?;
        new.logged("took over session").await?;
        retired.push(std::mem::replace(&mut replicas[i], new));
    }
    // What went wrong, if anything: the replicas' warnings and nginx's.
    let explain = || {
        let mut out = String::new();
        for (n, r) in retired.iter().chain(&replicas).enumerate() {
            for line in r.log.borrow().iter() {
                if line.contains("WARN") || line.contains("ERROR") {
                    out.push_str(&format!("replica {n}: {line}\n"));
                }
            }
        }
        out.push_str(&nginx.error_log());
        out
    };
    let mut total = 0;
    for run in runs {
        let sdk = run.sdk;
        let line = run.finish().await?;
        let tally: Value = serde_json::from_str(&line).with_context(|| line.clone())?;
        println!("{sdk:?} through a rolling restart of 3 replicas: {line}");
        let (ok, calls) = (tally["ok"].as_u64(), tally["total"].as_u64());
        assert_eq!(ok, calls, "{sdk:?}: a call failed: {line}\n{}", explain());
        assert_eq!(tally["errors"], json!({}), "{sdk:?}: {line}");
        assert_eq!(
            tally["ids"],
            json!(3),
            "{sdk:?}: a session was lost: {line}"
        );
        total += calls.unwrap_or(0);
    }
    println!("{total} calls, none failed, through 3 restarts");
    Ok(())
}
