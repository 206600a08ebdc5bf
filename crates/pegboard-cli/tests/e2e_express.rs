//! The express lane of `pegboard serve` over stdio (pegboard_gateway::express): `tools/call` and
//! `tools/list` answered past rmcp must be what rmcp's way answers, and keep cancellation,
//! timeouts, a server's requests mid-call and errors. Raw JSON-RPC lines, so the test sees exactly
//! what a client gets. A call whose `_meta` holds more than a progress token takes rmcp's way
//! (`"_meta": {"e2e/way": "rmcp"}`), the same call without takes the lane: the two are compared. The gateway's trace log counts the
//! lane's calls, so a test also fails if the lane was not taken.

mod common;

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, watch};

const WAIT: Duration = Duration::from_secs(30);

/// A raw session with `pegboard serve` over stdio.
struct Session {
    _dir: tempfile::TempDir,
    _child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<Value>,
    /// How many calls took the lane (from the trace log).
    express: watch::Receiver<usize>,
    /// Every stderr line so far.
    stderr: watch::Receiver<Vec<String>>,
}

impl Session {
    async fn start(config: &Value) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("pegboard.json");
        std::fs::write(&path, config.to_string())?;
        let mut child = tokio::process::Command::new(common::pegboard())
            .args(["serve", "-q", "--config"])
            .arg(&path)
            .env(
                "RUST_LOG",
                "warn,pegboard_gateway::express=trace,pegboard::server_stderr=debug,demo_servers=info",
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut stderr = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let (count, express) = watch::channel(0);
        let (seen, stderr_lines) = watch::channel(Vec::new());
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                if line.contains("express call") {
                    count.send_modify(|n| *n += 1);
                }
                seen.send_modify(|all| all.push(line));
            }
        });
        let mut session = Self {
            _dir: dir,
            _child: child,
            stdin,
            lines,
            express,
            stderr: stderr_lines,
        };
        let init = session
            .request(
                json!(0),
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"sampling": {}},
                    "clientInfo": {"name": "e2e-express", "version": "1"}
                }),
            )
            .await?;
        if init.get("result").is_none() {
            bail!("initialize failed: {init}");
        }
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(session)
    }

    async fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await?;
        Ok(())
    }

    /// The next message from the gateway that is not a notification.
    async fn next(&mut self) -> Result<Value> {
        loop {
            let message = tokio::time::timeout(WAIT, self.lines.recv())
                .await
                .context("no answer from the gateway")?
                .context("the gateway closed stdout")?;
            if message.get("id").is_some() {
                return Ok(message);
            }
        }
    }

    /// The notifications that come before the answer to `id`, and the answer.
    async fn until_answer(&mut self, id: &Value) -> Result<(Vec<Value>, Value)> {
        let mut notifications = Vec::new();
        loop {
            let message = tokio::time::timeout(WAIT, self.lines.recv())
                .await
                .context("no answer from the gateway")?
                .context("the gateway closed stdout")?;
            if message.get("id") == Some(id) {
                return Ok((notifications, message));
            }
            notifications.push(message);
        }
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) -> Result<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let answer = self.next().await?;
        if answer["id"] != id {
            bail!("expected the answer to {id}, got {answer}");
        }
        Ok(answer)
    }

    /// Call `tool` on rmcp's way (`_meta` present) and on the lane; both answers.
    async fn both_ways(&mut self, tool: &str, arguments: Value) -> Result<(Value, Value)> {
        let full = self
            .request(
                json!(format!("full-{tool}")),
                "tools/call",
                json!({"name": tool, "arguments": arguments, "_meta": {"e2e/way": "rmcp"}}),
            )
            .await?;
        let express = self
            .request(
                json!(format!("lane-{tool}")),
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await?;
        Ok((full, express))
    }

    async fn wait_express(&mut self, n: usize) -> Result<()> {
        tokio::time::timeout(WAIT, self.express.wait_for(|count| *count >= n))
            .await
            .with_context(|| format!("{n} calls never took the express lane"))??;
        Ok(())
    }

    async fn wait_stderr(&mut self, needle: &str) -> Result<()> {
        common::wait_for_line(&mut self.stderr, needle).await
    }
}

#[tokio::test]
async fn lane_answers_equal_rmcps_way_for_server_everythings_tools() -> Result<()> {
    let mut s =
        Session::start(&json!({"mcpServers": {"everything": common::everything_entry()}})).await?;
    let mut lane_calls = 0;
    for (tool, arguments) in [
        (
            "everything-echo",
            json!({"message": "héllo \"quoted\" \u{1F600}"}),
        ),
        ("everything-get-sum", json!({"a": 2, "b": 40.5})),
        (
            "everything-get-structured-content",
            json!({"location": "Chicago"}),
        ),
        (
            "everything-get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        ),
        ("everything-get-tiny-image", json!({})),
        // Resource links: their URIs are namespaced on both ways.
        ("everything-get-resource-links", json!({"count": 3})),
        (
            "everything-get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 2}),
        ),
        // A bad argument: the server's error passes the same way.
        ("everything-get-sum", json!({"a": "x"})),
    ] {
        let (full, lane) = s.both_ways(tool, arguments).await?;
        lane_calls += 1;
        s.wait_express(lane_calls).await?;
        assert!(
            full.get("result").is_some() || full.get("error").is_some(),
            "{tool}: {full}"
        );
        common::assert_same_answer(&full, &lane, tool);
    }
    let links = s
        .request(
            json!("links"),
            "tools/call",
            json!({"name": "everything-get-resource-links", "arguments": {"count": 1}}),
        )
        .await?;
    s.wait_express(lane_calls + 1).await?;
    let text = links["result"].to_string();
    assert!(
        text.contains("everything+demo://"),
        "not namespaced: {text}"
    );

    // tools/list from the cache equals rmcp's (`_meta` sends it that way).
    let full = s
        .request(
            json!("l1"),
            "tools/list",
            json!({"_meta": {"e2e/way": "rmcp"}}),
        )
        .await?;
    let cached = s.request(json!("l2"), "tools/list", json!({})).await?;
    let again = s.request(json!("l3"), "tools/list", json!({})).await?;
    assert!(
        full["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() > 10),
        "{full}"
    );
    common::assert_lists_match(&full, &cached);
    assert!(cached["result"] == again["result"]);
    Ok(())
}

#[tokio::test]
async fn a_server_asking_for_sampling_mid_call_reaches_the_client_on_the_lane() -> Result<()> {
    let mut s =
        Session::start(&json!({"mcpServers": {"everything": common::everything_entry()}})).await?;
    let tool = "everything-trigger-sampling-request";
    for (round, meta) in [(1, Some(json!({"e2e/way": "rmcp"}))), (2, None)] {
        let mut params = json!({"name": tool, "arguments": {"prompt": format!("round {round}"), "maxTokens": 5}});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let id = json!(format!("sample-{round}"));
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await?;
        let ask = s.next().await?;
        assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
        s.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
            "role": "assistant", "model": "e2e",
            "content": {"type": "text", "text": format!("answer {round}")}
        }}))
        .await?;
        let answer = s.next().await?;
        assert_eq!(answer["id"], id);
        assert!(
            answer["result"]
                .to_string()
                .contains(&format!("answer {round}")),
            "{answer}"
        );
    }
    s.wait_express(1).await
}

#[tokio::test]
async fn progress_on_the_lane_comes_with_the_clients_token_before_the_answer() -> Result<()> {
    let mut s =
        Session::start(&json!({"mcpServers": {"everything": common::everything_entry()}})).await?;
    let tool = "everything-trigger-long-running-operation";
    let mut seen = Vec::new();
    for (id, meta) in [
        (
            json!("full"),
            json!({"progressToken": "tok-full", "e2e/way": "rmcp"}),
        ),
        (json!("lane"), json!({"progressToken": "tok-lane"})),
    ] {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"duration": 0.3, "steps": 3}, "_meta": meta}}))
            .await?;
        let (notifications, answer) = s.until_answer(&id).await?;
        assert!(answer.get("result").is_some(), "{answer}");
        let progress = common::progress_params(&notifications);
        assert!(
            progress
                .iter()
                .all(|p| p["progressToken"] == meta["progressToken"]),
            "{progress:?}"
        );
        seen.push((progress.len(), answer["result"].clone()));
    }
    s.wait_express(1).await?;
    assert_eq!(seen[0].0, 3, "rmcp's way: every step before the answer");
    assert_eq!(seen[0], seen[1], "the lane: the same progress and answer");
    Ok(())
}

fn test_server(extra: Value) -> Value {
    let mut entry = common::demo_server("test", &[]);
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    entry
}

/// A second call under the id of one still running (see the HTTP lane's test of the same):
/// the first still answers, and its end leaves the second cancellable.
///
/// "Still running" is checked, not assumed: the test server's own stderr must show the second
/// call started before the first finished. On a machine too slow for that (the first's sleep
/// ran out before the second reached the server), the scenario is run again with a first call
/// four times as long, so the window is open when the test concludes.
#[tokio::test]
async fn a_call_whose_id_is_reused_while_it_runs_still_answers() -> Result<()> {
    let mut s = Session::start(&json!({"mcpServers": {"t": test_server(json!({}))}})).await?;
    s.request(
        json!(0),
        "tools/call",
        json!({"name": "t-sleep", "arguments": {"ms": 1}}),
    )
    .await?;
    let twin = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": "twin", "method": "tools/call",
            "params": {"name": "t-sleep", "arguments": {"ms": ms}}})
    };
    let mut first_ms = 1_500;
    loop {
        let seen = s.stderr.borrow().len();
        let lane = *s.express.borrow();
        let cancelled = common::count_lines(&s.stderr.borrow(), "sleep cancelled by the client");
        s.send(&twin(first_ms)).await?;
        s.wait_express(lane + 1).await?;
        s.send(&twin(60_000)).await?;
        s.wait_express(lane + 2).await?;
        let (_, first) = s.until_answer(&json!("twin")).await?;
        assert!(first.get("result").is_some(), "{first}");
        assert_eq!(
            first["result"]["content"][0]["text"],
            format!("slept {first_ms} ms"),
            "{first}"
        );
        s.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "twin"}}),
        )
        .await?;
        common::wait_for_lines(
            &mut s.stderr,
            "sleep cancelled by the client",
            cancelled + 1,
        )
        .await?;
        // The server wrote "finished" before its answer, which came before the cancel that
        // it logged last: both lines are here, in the order the server wrote them.
        let lines = s.stderr.borrow()[seen..].to_vec();
        if common::second_sleep_overlapped(&lines, first_ms) {
            return Ok(());
        }
        first_ms = common::longer_first_sleep(first_ms, &lines)?;
    }
}

#[tokio::test]
async fn the_lane_keeps_cancellation_timeouts_and_reports_a_dead_server() -> Result<()> {
    let mut s = Session::start(&json!({"mcpServers": {
        "t": test_server(json!({})),
        "slow": test_server(json!({"timeout": 0.5})),
    }}))
    .await?;
    // First calls go rmcp's way and show the tools answer plainly.
    for tool in ["t-sleep", "slow-sleep"] {
        s.request(
            json!(tool),
            "tools/call",
            json!({"name": tool, "arguments": {"ms": 1}}),
        )
        .await?;
    }

    // Cancelled by the client: the server hears it, and the call is never answered.
    s.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
        "params": {"name": "t-sleep", "arguments": {"ms": 60000}}}))
        .await?;
    s.wait_express(1).await?;
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 100, "reason": "changed my mind"}}),
    )
    .await?;
    s.wait_stderr("sleep cancelled by the client").await?;
    let echo = s
        .request(
            json!(101),
            "tools/call",
            json!({"name": "t-echo", "arguments": {"text": "after"}}),
        )
        .await?;
    assert_eq!(echo["result"]["content"][0]["text"], "after");

    // The server's call timeout: the same error as rmcp's way, and the server is told.
    let timed_out = s
        .request(
            json!(102),
            "tools/call",
            json!({"name": "slow-sleep", "arguments": {"ms": 60000}}),
        )
        .await?;
    s.wait_express(2).await?;
    let text = timed_out["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(timed_out["result"]["isError"], true, "{timed_out}");
    assert!(
        text.contains("slow-sleep") && text.contains("timed out"),
        "{text}"
    );

    // The server dies mid-call: the call fails at once, saying so.
    let pid = s
        .request(
            json!(103),
            "tools/call",
            json!({"name": "t-pid", "arguments": {}}),
        )
        .await?;
    let pid: i32 = pid["result"]["content"][0]["text"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .context("a pid")?;
    s.send(&json!({"jsonrpc": "2.0", "id": 104, "method": "tools/call",
        "params": {"name": "t-sleep", "arguments": {"ms": 60000}}}))
        .await?;
    s.wait_express(3).await?;
    let killed = tokio::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .await?;
    assert!(killed.success());
    let dead = s.next().await?;
    assert_eq!(dead["id"], 104);
    let text = dead["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(dead["result"]["isError"], true, "{dead}");
    assert!(text.contains("is closed"), "{text}");
    Ok(())
}
