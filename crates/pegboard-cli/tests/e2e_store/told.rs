//! Issue 34: a session taken over is told what its lists look like on the replica that takes
//! it over (the `told` of its stored record), on its GET stream: `tools/list_changed` when that
//! replica's config differs from the first one's, nothing when it is the same.
//!
//! What is *not* sent is checked by a later event on the same stream: the client declares
//! roots, so the gateway asks for them (`roots/list`) when the session starts and again when
//! the client says they changed; that second request is sent after the takeover told what it
//! had to, on the same stream, so every notification of the takeover arrives before it. Then
//! the session is followed on B as on A: a reload of B's config is told too.

use super::*;

/// A session taken over on B, and what its GET stream brought until the gateway asked for the
/// client's roots a second time.
struct TakenOver {
    /// The methods of the messages on the stream, in order.
    methods: Vec<String>,
    stream: Listening,
    b: Replica,
    /// B's config file.
    b_config: PathBuf,
    _store: (RedisServer, tempfile::TempDir, tempfile::TempDir),
}

/// The config of B when it differs from A's: the units demo alone.
fn units_only() -> Value {
    json!({"mcpServers": {"units": common::demo_server("units", &[])}})
}

/// A's config and an extra server whose `ask` prompt any client may see.
fn with_a_prompt_more(dir: &Path) -> Value {
    let a = std::fs::read_to_string(dir.join("pegboard.json")).unwrap_or_default();
    let mut config: Value = serde_json::from_str(&a).unwrap_or_default();
    config["mcpServers"]["asker"] = common::demo_server("test", &["--ask-tool"]);
    config
}

/// B's config: A's (`None`), or `Some` of its own.
type BConfig = Option<fn(&Path) -> Value>;

/// A session that listed `lists` (`tools/list`, `prompts/list`) on A (tools by the express
/// lane, or rmcp's way with `--no-express`), taken over on B after A stopped; B's config is
/// A's (units and server-everything), or what `b_config` makes of A's folder.
async fn told_on_takeover(b_config: BConfig, lists: &[&str], extra: &[&str]) -> Result<TakenOver> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({}));
    let other = tempfile::tempdir()?;
    let b_differs = b_config.is_some();
    let b_path = other.path().join("pegboard.json");
    match b_config {
        Some(make) => std::fs::write(&b_path, make(dir.path()).to_string())?,
        None => drop(std::fs::copy(&config, &b_path)?),
    }
    let b_config = b_path;
    let mut a = Replica::start(&config, "127.0.0.1:0", &redis.url(0), extra).await?;
    let b = Replica::start(&b_config, "127.0.0.1:0", &redis.url(0), extra).await?;
    let mut client = RawClient::new(None);
    client
        .open_with(&a.url, json!({"roots": {"listChanged": true}}))
        .await?;
    for (id, list) in (1..).zip(lists) {
        let (way, answer) = client.call(&a.url, id, list, json!({})).await?;
        if *list == "tools/list" {
            let want = if extra.contains(&"--no-express") {
                Way::Rmcp
            } else {
                Way::Lane
            };
            assert_eq!(way, want, "{answer}");
        }
    }
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
    let (tools, prompts) = (
        lists.contains(&"tools/list"),
        lists.contains(&"prompts/list"),
    );
    if tools {
        assert!(seen.contains(r#""tools":""#), "{seen}");
    }
    if prompts {
        assert!(seen.contains(r#""prompts":["#), "{seen}");
    }
    a.stop().await?;
    assert_eq!(client.convert(&b.url, 10).await?, Way::Rmcp);
    b.logged(&format!(
        "session {} taken over: list_changed told for tools {}, prompts {}, resources false \
         (listed before: tools {tools}, prompts {prompts}, resources false)",
        client.session,
        tools && b_differs,
        prompts && b_differs,
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
    Ok(TakenOver {
        methods,
        stream,
        b,
        b_config,
        _store: (redis, dir, other),
    })
}

#[tokio::test]
async fn a_session_taken_over_by_a_replica_with_other_servers_is_told_its_tools_changed()
-> Result<()> {
    told_tools_changed(&[]).await
}

#[tokio::test]
async fn without_the_express_lane_too() -> Result<()> {
    told_tools_changed(&["--no-express"]).await
}

/// A session that listed tools on A, taken over by B (its gateway run with `flags`) whose
/// config has other servers: told exactly `tools/list_changed`.
async fn told_tools_changed(flags: &[&str]) -> Result<()> {
    let methods = told_on_takeover(Some(|_| units_only()), &["tools/list"], flags)
        .await?
        .methods;
    assert_eq!(
        list_changed(&methods),
        ["notifications/tools/list_changed"],
        "{methods:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_session_taken_over_by_a_replica_with_the_same_servers_is_told_nothing() -> Result<()> {
    let TakenOver {
        methods,
        mut stream,
        b,
        b_config,
        _store,
    } = told_on_takeover(None, &["tools/list", "prompts/list"], &[]).await?;
    assert!(list_changed(&methods).is_empty(), "{methods:?}");
    assert_eq!(
        methods.iter().filter(|m| *m == "roots/list").count(),
        2,
        "{methods:?}"
    );
    // Followed from B as on A: its tools change with B's config, and it is told so.
    std::fs::write(&b_config, units_only().to_string())?;
    let pid = b.child.id().context("B is running")?;
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()?;
    anyhow::ensure!(hup.success(), "kill -HUP {pid}: {hup}");
    loop {
        let message = stream.next().await.context("not told of B's reload")?;
        match message["method"].as_str() {
            Some("notifications/tools/list_changed") => return Ok(()),
            Some(method) => anyhow::ensure!(!method.ends_with("list_changed"), "{message}"),
            None => {}
        }
    }
}

/// A session's GET stream: its messages, one by one.
struct Listening {
    response: reqwest::Response,
    buffer: String,
    /// When reading gives up: a bound per read would restart at every keep-alive comment.
    deadline: tokio::time::Instant,
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
            let chunk = tokio::time::timeout_at(self.deadline, self.response.chunk())
                .await
                .context("nothing more on the GET stream in time")??
                .context("the GET stream ended")?;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

impl RawClient {
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
            deadline: tokio::time::Instant::now() + 2 * WAIT,
        })
    }
}

#[tokio::test]
async fn a_session_that_listed_prompts_only_is_told_its_prompts_changed_only() -> Result<()> {
    // B has a server more: its tools differ too, but the session never listed them.
    let methods = told_on_takeover(Some(with_a_prompt_more), &["prompts/list"], &[])
        .await?
        .methods;
    assert_eq!(
        list_changed(&methods),
        ["notifications/prompts/list_changed"],
        "{methods:?}"
    );
    Ok(())
}

/// The `list_changed` notifications among `methods`, in order.
fn list_changed(methods: &[String]) -> Vec<&str> {
    methods
        .iter()
        .map(String::as_str)
        .filter(|m| m.ends_with("list_changed"))
        .collect()
}
