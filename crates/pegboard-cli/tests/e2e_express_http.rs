//! The express lane of `pegboard serve --http` (pegboard_gateway::express::http), over raw HTTP.
//! rmcp's way answers a request with an SSE stream; the lane answers with one JSON body, so the
//! response's content type tells which way a request went. A call whose params hold a member the
//! lane does not know goes rmcp's way (`"e2e/way": "rmcp"`, which rmcp ignores), the same call
//! without takes the lane: the answers, and how each call ends, must be the same.

mod common;

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::sync::watch;

const WAIT: Duration = Duration::from_secs(30);

/// Which way a request went, by the response's content type.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Way {
    Lane,
    Rmcp,
}

struct Gateway {
    _dir: tempfile::TempDir,
    /// What serves: the `pegboard serve` child, or the library's router in this process.
    _serving: Box<dyn std::any::Any + Send>,
    url: String,
    http: reqwest::Client,
    session: String,
    /// The bearer token the gateway was started with (sent with every request).
    token: Option<String>,
    stderr: watch::Receiver<Vec<String>>,
}

impl Gateway {
    async fn start(servers: Value) -> Result<Self> {
        Self::start_with_token(servers, None).await
    }

    async fn start_with_token(servers: Value, token: Option<&str>) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("pegboard.json");
        std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
        let extra: &[&str] = match token {
            Some(token) => &["--token", token],
            None => &[],
        };
        let log =
            "info,pegboard_gateway::express=trace,pegboard::server_stderr=debug,demo_servers=info";
        let (child, url, stderr) =
            common::serve_http_logged(&path, extra, &[("RUST_LOG", log)]).await?;
        Self::handshake(dir, Box::new(child), url, token, stderr).await
    }

    /// The library's router (`pegboard_gateway::Gateway::router`, the lane as its outermost
    /// layer), mounted as another app would and served in this process.
    async fn embedded(servers: Value) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("pegboard.json");
        std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
        let gateway = pegboard_gateway::Gateway::from_path(Some(&path), WAIT).await?;
        let stop = tokio_util::sync::CancellationToken::new();
        let app = axum::Router::new().merge(gateway.router(
            &pegboard_gateway::HttpOptions::default(),
            stop.child_token(),
        )?);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        tokio::spawn(pegboard_gateway::http::serve::serve(
            listener,
            app,
            pegboard_gateway::http::serve::Timeouts::default(),
            stop.clone(),
        ));
        let (_, stderr) = watch::channel(Vec::new());
        Self::handshake(
            dir,
            Box::new((gateway, stop.drop_guard())),
            url,
            None,
            stderr,
        )
        .await
    }

    async fn handshake(
        dir: tempfile::TempDir,
        serving: Box<dyn std::any::Any + Send>,
        url: String,
        token: Option<&str>,
        stderr: watch::Receiver<Vec<String>>,
    ) -> Result<Self> {
        let mut gateway = Self {
            _dir: dir,
            _serving: serving,
            url,
            http: {
                // reqwest is built without a crypto provider in this workspace (rustls with ring).
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::new()
            },
            session: String::new(),
            token: token.map(String::from),
            stderr,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "e2e-express-http", "version": "1"}
        }});
        let response = gateway.post_raw(&init, &[]).await?;
        gateway.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("a session id")?
            .to_string();
        let (_, answer) = read(response).await?;
        if answer.get("result").is_none() {
            bail!("initialize failed: {answer}");
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = gateway.post_raw(&initialized, &[]).await?;
        if response.status() != reqwest::StatusCode::ACCEPTED {
            bail!("initialized: {}", response.status());
        }
        Ok(gateway)
    }

    /// A POST of `body` as a client of the session sends it.
    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        let request = match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        match self.session.as_str() {
            "" => request,
            session => request.header("mcp-session-id", session),
        }
    }

    async fn post_raw(&self, body: &Value, extra: &[(&str, &str)]) -> Result<reqwest::Response> {
        let mut request = self.post(body);
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        Ok(tokio::time::timeout(WAIT, request.send()).await??)
    }

    /// Send a request; its answer and which way it went.
    async fn request(&self, id: Value, method: &str, params: Value) -> Result<(Way, Value)> {
        self.request_with(id, method, params, &[]).await
    }

    async fn request_with(
        &self,
        id: Value,
        method: &str,
        params: Value,
        extra: &[(&str, &str)],
    ) -> Result<(Way, Value)> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.post_raw(&body, extra).await?;
        if !response.status().is_success() {
            bail!("{method}: HTTP {}", response.status());
        }
        read(response).await
    }

    /// How many lines the gateway has logged with `needle` in them.
    fn logged(&self, needle: &str) -> usize {
        common::count_lines(&self.stderr.borrow(), needle)
    }

    /// Wait until the gateway has logged `n` lines with `needle` in them.
    async fn wait_logged(&mut self, needle: &str, n: usize) -> Result<()> {
        common::wait_for_lines(&mut self.stderr, needle, n).await
    }
}

/// The JSON-RPC answer in a response: its JSON body, or the SSE event that carries an id.
async fn read(response: reqwest::Response) -> Result<(Way, Value)> {
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let text = tokio::time::timeout(WAIT, response.text()).await??;
    if !sse {
        return Ok((Way::Lane, serde_json::from_str(&text)?));
    }
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:")
            && let Ok(message) = serde_json::from_str::<Value>(data.trim())
            && message.get("id").is_some()
        {
            return Ok((Way::Rmcp, message));
        }
    }
    bail!("no answer in the event stream: {text}")
}

#[tokio::test]
async fn the_http_lane_answers_as_rmcps_way_does() -> Result<()> {
    let gw = Gateway::start(json!({"everything": common::everything_entry()})).await?;
    for (tool, arguments) in [
        ("everything-echo", json!({"message": "héllo \u{1F600}"})),
        ("everything-get-sum", json!({"a": 2, "b": 40.5})),
        (
            "everything-get-structured-content",
            json!({"location": "Chicago"}),
        ),
        (
            "everything-get-annotated-message",
            json!({"messageType": "success", "includeImage": true}),
        ),
        ("everything-get-resource-links", json!({"count": 2})),
        ("everything-get-sum", json!({"a": "x"})),
    ] {
        let (way, full) = gw
            .request(
                json!("full"),
                "tools/call",
                json!({"name": tool, "arguments": arguments, "e2e/way": "rmcp"}),
            )
            .await?;
        assert_eq!(way, Way::Rmcp, "{tool}");
        let (way, lane) = gw
            .request(
                json!(7),
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await?;
        assert_eq!(way, Way::Lane, "{tool}: {lane}");
        assert_eq!(lane["id"], 7);
        common::assert_same_answer(&full, &lane, tool);
    }
    let (way, full) = gw
        .request(
            json!(1),
            "tools/list",
            json!({"_meta": {"e2e/way": "rmcp"}}),
        )
        .await?;
    assert_eq!(way, Way::Rmcp);
    let (way, cached) = gw.request(json!(2), "tools/list", json!({})).await?;
    assert_eq!(way, Way::Lane);
    common::assert_lists_match(&full, &cached);
    // The kept list goes out as it is kept, with its length said (not chunked).
    let listed = gw
        .post_raw(
            &json!({"jsonrpc": "2.0", "id": "list-3", "method": "tools/list", "params": {}}),
            &[],
        )
        .await?;
    let length = listed
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = listed.bytes().await?;
    assert_eq!(length, Some(body.len().to_string()), "Content-Length");
    let answer: Value = serde_json::from_slice(&body)?;
    assert_eq!(answer["id"], "list-3");
    assert!(answer["result"] == cached["result"], "the list by its body");

    // A request with an Origin is left to rmcp, which checks it.
    let (way, _) = gw
        .request_with(
            json!(8),
            "tools/call",
            json!({"name": "everything-echo", "arguments": {"message": "o"}}),
            &[("origin", "http://localhost:3000")],
        )
        .await?;
    assert_eq!(way, Way::Rmcp);

    // An ended session is not served by the lane either: rmcp says it is gone.
    let deleted = gw
        .http
        .delete(&gw.url)
        .header("mcp-session-id", &gw.session)
        .send()
        .await?;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let gone = gw
        .post_raw(
            &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": "everything-echo", "arguments": {"message": "late"}}}),
            &[],
        )
        .await?;
    assert_eq!(gone.status(), reqwest::StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn a_call_on_the_http_lane_is_cancelled_upstream() -> Result<()> {
    cancelled_upstream(false).await
}

#[tokio::test]
async fn a_streamed_lane_call_is_cancelled_upstream() -> Result<()> {
    cancelled_upstream(true).await
}

/// How each way ends a call, the same: a call cancelled by `notifications/cancelled` is
/// cancelled upstream and gets no answer (the same response on both ways); a call whose client
/// goes away runs to its end upstream (the streamable-HTTP spec: a disconnection is not a
/// cancel); a call of a session the client deletes is cancelled upstream at once. Answered with
/// one JSON body on the lane, or with `progress` as an event stream.
async fn cancelled_upstream(progress: bool) -> Result<()> {
    let mut gw = Gateway::start(json!({"t": common::demo_server("test", &[])})).await?;
    let sleeping = |id: &str, ms: u64, way: Way| {
        let mut params = json!({"name": "t-sleep", "arguments": {"ms": ms}});
        if progress {
            params["_meta"] = json!({"progressToken": id});
        }
        if way == Way::Rmcp {
            params["e2e/way"] = json!("rmcp");
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let (way, _) = gw
        .request(
            json!(1),
            "tools/call",
            json!({"name": "t-sleep", "arguments": {"ms": 1}}),
        )
        .await?;
    assert_eq!(
        way,
        Way::Rmcp,
        "a tool's first call learns it answers plainly"
    );

    // Cancelled by the client: the server hears it, and the client gets no answer.
    let mut ends = Vec::new();
    for way in [Way::Rmcp, Way::Lane] {
        let id = format!("long-{way:?}");
        let started = gw.logged("sleep started");
        let cancelled = gw.logged("sleep cancelled by the client");
        let long = {
            let request = gw.post(&sleeping(&id, 60_000, way)).send();
            tokio::spawn(async move {
                let response = request.await?;
                let status = response.status();
                let kind = response
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                response.text().await.map(|text| (status, kind, text))
            })
        };
        gw.wait_logged("sleep started", started + 1).await?;
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "no longer needed"}});
        let answer = gw.post_raw(&cancel, &[]).await?;
        assert_eq!(answer.status(), reqwest::StatusCode::ACCEPTED, "{way:?}");
        gw.wait_logged("sleep cancelled by the client", cancelled + 1)
            .await?;
        let (status, kind, text) = tokio::time::timeout(WAIT, long).await???;
        assert!(
            !text.contains(&format!("\"id\":\"{id}\"")),
            "{way:?}: {text}"
        );
        ends.push((status, kind));
    }
    assert_eq!(ends[0], ends[1], "rmcp's way, then the lane");

    // A client that goes away mid-call: the call runs to its end upstream, on both ways.
    // "Mid-call" is checked: the connection must be gone sooner after the request was sent
    // than the server's sleep lasts (which started after that); if not (a slow machine), the
    // same again with a sleep four times as long.
    for way in [Way::Rmcp, Way::Lane] {
        let mut ms = 700;
        loop {
            let (started, finished) = (gw.logged("sleep started"), gw.logged("sleep finished"));
            let cancelled = gw.logged("sleep cancelled by the client");
            let sent = std::time::Instant::now();
            let abandoned = {
                let request = gw
                    .post(&sleeping(&format!("gone-{way:?}-{ms}"), ms, way))
                    .send();
                // Reading the answer when aborted: the response is dropped, the connection closed.
                tokio::spawn(async move { request.await?.text().await })
            };
            gw.wait_logged("sleep started", started + 1).await?;
            abandoned.abort();
            // Resolves once the task, and the response with it, has been dropped.
            let gone = abandoned.await;
            let open = gone
                .as_ref()
                .is_err_and(tokio::task::JoinError::is_cancelled)
                && sent.elapsed() < Duration::from_millis(ms);
            gw.wait_logged("sleep finished", finished + 1)
                .await
                .with_context(|| format!("{way:?}: the call did not run to its end"))?;
            assert_eq!(
                gw.logged("sleep cancelled by the client"),
                cancelled,
                "{way:?}: a client gone is not a cancel"
            );
            if open {
                break;
            }
            eprintln!("{way:?}: the call may have ended before its client went; again, longer");
            ms *= 4;
            anyhow::ensure!(ms <= 11_200, "{way:?}: the client never went mid-call");
        }
    }

    // The session ends (DELETE): its calls still running end upstream at once, on both ways.
    let (started, cancelled) = (
        gw.logged("sleep started"),
        gw.logged("sleep cancelled by the client"),
    );
    let mut running = Vec::new();
    for way in [Way::Rmcp, Way::Lane] {
        let request = gw
            .post(&sleeping(&format!("ended-{way:?}"), 60_000, way))
            .send();
        running.push(tokio::spawn(async move { request.await?.text().await }));
    }
    gw.wait_logged("sleep started", started + 2).await?;
    let deleted = gw
        .http
        .delete(&gw.url)
        .header("mcp-session-id", &gw.session)
        .send()
        .await?;
    assert_eq!(deleted.status(), reqwest::StatusCode::NO_CONTENT);
    gw.wait_logged("sleep cancelled by the client", cancelled + 2)
        .await
        .context("the session's calls were not cancelled when it ended")?;
    for call in running {
        call.abort();
    }
    Ok(())
}

/// A client may send a second call under the id of one still running (a bug of its own, but
/// not one to punish): the second takes the first's place for cancelling, the first still runs
/// to its answer (its cancel handle dropped unused is no cancel), and its end leaves the
/// second cancellable.
#[tokio::test]
async fn a_call_whose_id_is_reused_while_it_runs_still_answers() -> Result<()> {
    let mut gw = Gateway::start(json!({"t": common::demo_server("test", &[])})).await?;
    let sleep_params = |ms: u64| json!({"name": "t-sleep", "arguments": {"ms": ms}});
    let twin = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": "twin", "method": "tools/call",
        "params": sleep_params(ms)})
    };
    // The first call learns the tool answers plainly; the next ones take the lane.
    gw.request(json!(0), "tools/call", sleep_params(1)).await?;
    // "While it runs" is checked, not assumed: the test server's own stderr must show the second
    // call started before the first finished; when not (a machine too slow for the first's
    // sleep), the scenario runs again with a first call four times as long.
    let mut first_ms = 1_500;
    loop {
        let seen = gw.stderr.borrow().len();
        let lane = gw.logged("express call");
        let cancelled_before = gw.logged("sleep cancelled by the client");
        let first = {
            let request = gw.post(&twin(first_ms)).send();
            tokio::spawn(async move { read(request.await?).await })
        };
        gw.wait_logged("express call", lane + 1).await?;
        let second = {
            let request = gw.post(&twin(60_000)).send();
            tokio::spawn(async move {
                let response = request.await?;
                let status = response.status();
                response.text().await.map(|text| (status, text))
            })
        };
        gw.wait_logged("express call", lane + 2).await?;
        let (way, first) = tokio::time::timeout(WAIT, first).await???;
        assert_eq!(way, Way::Lane, "{first}");
        assert_eq!(first["id"], "twin");
        assert!(first.get("result").is_some(), "{first}");
        // The first's end took only its own entry: the second is still there to cancel.
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "twin"}});
        let cancelled = gw.post_raw(&cancel, &[]).await?;
        assert_eq!(cancelled.status(), reqwest::StatusCode::ACCEPTED);
        gw.wait_logged("sleep cancelled by the client", cancelled_before + 1)
            .await?;
        let (status, text) = tokio::time::timeout(WAIT, second).await???;
        // No answer for a cancelled call: its event stream ends without one, as on rmcp's way.
        assert_eq!(status, reqwest::StatusCode::OK, "{text}");
        assert!(!text.contains("\"id\":\"twin\""), "{text}");
        // The server wrote "finished" before its answer, which came before the cancel it logged
        // last: both lines are here, in the order the server wrote them.
        let lines = gw.stderr.borrow()[seen..].to_vec();
        if common::second_sleep_overlapped(&lines, first_ms) {
            return Ok(());
        }
        first_ms = common::longer_first_sleep(first_ms, &lines)?;
    }
}

/// The lane is the HTTP front's outermost layer: a call of an open session without the token,
/// with a wrong one, or at a path that is not `/mcp` must still be refused as before it (401,
/// 404), and with the token it takes the lane.
#[tokio::test]
async fn the_lane_answers_only_authorized_requests_at_the_mcp_path() -> Result<()> {
    let gw = Gateway::start_with_token(
        json!({"units": common::demo_server("units", &[])}),
        Some("s3cret"),
    )
    .await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "units-convert", "arguments": {"value": 1, "from": "km", "to": "m"}
    }});
    // A tool's first call goes rmcp's way (it learns whether the tool needs a task); the next
    // takes the lane.
    gw.request(json!(0), "tools/call", call["params"].clone())
        .await?;
    let (way, answer) = gw
        .request(json!(1), "tools/call", call["params"].clone())
        .await?;
    assert_eq!(way, Way::Lane, "{answer}");
    assert!(answer.to_string().contains("1000"), "{answer}");

    for (what, authorization) in [("no token", None), ("a wrong token", Some("Bearer nope"))] {
        let mut request = gw
            .http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &gw.session)
            .body(call.to_string());
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let response = tokio::time::timeout(WAIT, request.send()).await??;
        assert_eq!(
            response.status(),
            reqwest::StatusCode::UNAUTHORIZED,
            "{what}"
        );
    }

    let elsewhere = gw.url.replace("/mcp", "/elsewhere");
    let response = tokio::time::timeout(
        WAIT,
        gw.http
            .post(&elsewhere)
            .bearer_auth("s3cret")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &gw.session)
            .body(call.to_string())
            .send(),
    )
    .await??;
    assert_eq!(response.status(), reqwest::StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn the_router_for_other_apps_has_the_lane_too() -> Result<()> {
    let gw = Gateway::embedded(json!({"units": common::demo_server("units", &[])})).await?;
    let params =
        json!({"name": "units-convert", "arguments": {"value": 2, "from": "km", "to": "m"}});
    // The first call of a tool goes rmcp's way (it learns whether the tool needs a task).
    let (way, first) = gw.request(json!(1), "tools/call", params.clone()).await?;
    assert_eq!(way, Way::Rmcp, "{first}");
    let (way, second) = gw.request(json!(2), "tools/call", params).await?;
    assert_eq!(way, Way::Lane, "{second}");
    assert_eq!(second["id"], 2);
    assert_eq!(first["result"], second["result"]);
    Ok(())
}

#[tokio::test]
async fn a_call_asking_for_progress_takes_the_lane_as_an_event_stream() -> Result<()> {
    let mut gw = Gateway::start(json!({"everything": common::everything_entry()})).await?;
    let tool = "everything-trigger-long-running-operation";
    let mut seen = Vec::new();
    for (id, meta) in [
        (json!("full"), json!({"progressToken": "tok-full"})),
        // rmcp's client asks for progress on every request, with a number.
        (json!("lane"), json!({"progressToken": 7})),
    ] {
        let lane_calls = gw.logged("express call");
        let mut params =
            json!({"name": tool, "arguments": {"duration": 0.3, "steps": 3}, "_meta": meta});
        if id == "full" {
            params["e2e/way"] = json!("rmcp");
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let response = gw.post_raw(&body, &[]).await?;
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        let text = tokio::time::timeout(WAIT, response.text()).await??;
        let messages: Vec<Value> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect();
        let (answer, before) = messages.split_last().context("no events")?;
        assert_eq!(answer["id"], id, "the answer comes last: {text}");
        assert!(answer.get("result").is_some(), "{answer}");
        let progress = common::progress_params(before);
        assert!(
            progress
                .iter()
                .all(|p| p["progressToken"] == meta["progressToken"]),
            "{progress:?}"
        );
        if id == "lane" {
            gw.wait_logged("express call", lane_calls + 1)
                .await
                .context("the call did not take the lane")?;
        }
        seen.push((progress.len(), answer["result"].clone()));
    }
    assert_eq!(seen[0].0, 3, "rmcp's way: every step before the answer");
    assert_eq!(seen[0], seen[1], "the lane: the same progress and answer");
    Ok(())
}
