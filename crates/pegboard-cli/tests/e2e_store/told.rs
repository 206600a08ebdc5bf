//! Issue 34: a session taken over is told what its lists look like on the replica that takes
//! it over (the `told` of its stored record), on its GET stream: `tools/list_changed` when that
//! replica's config differs from the first one's, nothing when it is the same.
//!
//! What is *not* sent is checked by a later event on the same stream: the client declares
//! roots, so the gateway asks for them (`roots/list`) when the session starts and again when
//! the client says they changed; that second request is sent after the takeover told what it
//! had to, on the same stream, so every notification of the takeover arrives before it.

use super::*;

/// What the GET stream of a session taken over on B brings until the gateway asks for the
/// client's roots a second time: the methods of its messages. The session listed its tools on
/// A (by the express lane, or rmcp's way with `--no-express`); A stopped; B's config is A's, or
/// without server-everything (`b_differs`).
async fn told_on_takeover(b_differs: bool, extra: &[&str]) -> Result<Vec<String>> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let other = tempfile::tempdir()?;
    let b_config = if b_differs {
        let path = other.path().join("pegboard.json");
        let units = json!({"mcpServers": {"units": common::demo_server("units", &[])}});
        std::fs::write(&path, units.to_string())?;
        path
    } else {
        config.clone()
    };
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), extra).await?;
    let b = Replica::start(&b_config, "127.0.0.1:0", &redis.url(0), extra).await?;
    let mut client = RawClient::new(None);
    client
        .open_with(&a.url, json!({"roots": {"listChanged": true}}))
        .await?;
    let (way, tools) = client.call(&a.url, 1, "tools/list", json!({})).await?;
    let want = if extra.contains(&"--no-express") {
        Way::Rmcp
    } else {
        Way::Lane
    };
    assert_eq!(way, want, "{tools}");
    // Written beside the answer: the store says what it listed once it is.
    let key = format!("pegboard:session:{}", client.session);
    let mut watch = tokio::net::TcpStream::connect(("127.0.0.1", redis.port())).await?;
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        seen = hgetall(&mut watch, &key).await?;
        if seen.contains("told") {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(seen.contains(r#"{"tools":""#), "{seen}");
    a.stop().await?;
    assert_eq!(client.convert(&b.url, 2).await?, Way::Rmcp);
    b.logged(&format!(
        "session {} taken over: list_changed told for tools {b_differs}, prompts false, \
         resources false (listed before: tools true, prompts false, resources false)",
        client.session
    ))
    .await?;
    let mut stream = client.listen(&b.url).await?;
    let mut methods = Vec::new();
    let mut asked = 0;
    while asked < 2 {
        let message = stream.next().await?;
        let Some(method) = message["method"].as_str() else {
            continue;
        };
        methods.push(method.to_string());
        if method != "roots/list" {
            continue;
        }
        asked += 1;
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": []}});
        client.post(&b.url, &answer).await?;
        if asked == 1 {
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
            client.post(&b.url, &changed).await?;
        }
    }
    Ok(methods)
}

#[tokio::test]
async fn a_session_taken_over_by_a_replica_with_other_servers_is_told_its_tools_changed()
-> Result<()> {
    let methods = told_on_takeover(true, &[]).await?;
    let told: Vec<_> = methods
        .iter()
        .filter(|m| m.ends_with("list_changed"))
        .collect();
    assert_eq!(told, ["notifications/tools/list_changed"], "{methods:?}");
    Ok(())
}

#[tokio::test]
async fn without_the_express_lane_too() -> Result<()> {
    let methods = told_on_takeover(true, &["--no-express"]).await?;
    let told: Vec<_> = methods
        .iter()
        .filter(|m| m.ends_with("list_changed"))
        .collect();
    assert_eq!(told, ["notifications/tools/list_changed"], "{methods:?}");
    Ok(())
}

#[tokio::test]
async fn a_session_taken_over_by_a_replica_with_the_same_servers_is_told_nothing() -> Result<()> {
    let methods = told_on_takeover(false, &[]).await?;
    assert!(
        !methods.iter().any(|m| m.ends_with("list_changed")),
        "{methods:?}"
    );
    assert_eq!(
        methods.iter().filter(|m| *m == "roots/list").count(),
        2,
        "{methods:?}"
    );
    Ok(())
}

/// A session's GET stream: its messages, one by one.
struct Listening {
    response: reqwest::Response,
    buffer: String,
}

impl Listening {
    /// The next JSON-RPC message (SSE events without data, such as a priming one, skipped).
    async fn next(&mut self) -> Result<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .collect();
                if let Ok(message) = serde_json::from_str::<Value>(&data) {
                    return Ok(message);
                }
                continue;
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .context("nothing more on the GET stream in time")??
                .context("the GET stream ended")?;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

impl RawClient {
    /// `initialize` with `capabilities` and `notifications/initialized` at `url`.
    async fn open_with(&mut self, url: &str, capabilities: Value) -> Result<()> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "e2e-store", "version": "1"}
        }});
        let response = tokio::time::timeout(
            WAIT,
            self.http
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(init.to_string())
                .send(),
        )
        .await??;
        anyhow::ensure!(response.status().is_success(), "{}", response.status());
        self.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("a session id")?
            .to_string();
        let _ = response.text().await?;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post(url, &initialized).await?;
        anyhow::ensure!(answer.status == reqwest::StatusCode::ACCEPTED, "{answer:?}");
        Ok(())
    }

    /// The session's GET stream at `url`.
    async fn listen(&self, url: &str) -> Result<Listening> {
        let response = tokio::time::timeout(
            WAIT,
            self.http
                .get(url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", &self.session)
                .header("mcp-protocol-version", "2025-06-18")
                .send(),
        )
        .await??;
        anyhow::ensure!(response.status().is_success(), "{}", response.status());
        Ok(Listening {
            response,
            buffer: String::new(),
        })
    }
}
