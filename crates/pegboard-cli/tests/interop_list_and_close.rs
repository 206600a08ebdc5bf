//! What LangChain's MCP adapters (`get_tools()`) and LlamaIndex do, with the MCP Python SDK 1.x
//! they run on: start `pegboard serve` over stdio on a three-server board, initialize, list the
//! tools and close at once. A session is told only about lists that changed since what it was
//! last answered, and nothing about servers already in its answer, so such a client gets no
//! notification at all; the gateway used to send nine around the first answer (tools, prompts
//! and resources `list_changed` per server that joined, some after the answer), and the SDK 1.x's
//! stdio reader died of those that came while it closed (`anyio.BrokenResourceError`) in about
//! 4 to 6 runs of 10.
//!
//! Over HTTP, with two named clients (`tests/python/clients_http.py`): each sees only its tools,
//! a change of the board reaches only the client that can see it, and closing a session (the
//! SDK's `DELETE`) is answered 204, so the SDK logs no "Session termination failed".
//!
//! The SDK 1.x lives in its own venv (`target/test-deps/venv-mcp1`, `scripts/setup-test-deps.sh`);
//! the clients are `tests/python/list_and_close.py` and `tests/python/clients_http.py`.

mod common;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

/// Runs per way: each a new gateway whose three servers are still starting when it is listed.
const RUNS: usize = 20;
/// Upper bound for all runs of one way (a run takes well under a second).
const ALL_RUNS: Duration = Duration::from_secs(300);

/// Run the SDK 1.x client `RUNS` times against `pegboard serve --config CONFIG EXTRA..`.
async fn list_and_close(extra: &[&str]) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    let servers = json!({ "mcpServers": {
        "notes": common::demo_server("notes", &[]),
        "units": common::demo_server("units", &[]),
        "docs": common::demo_server("docs", &[]),
    }});
    std::fs::write(&config, servers.to_string())?;
    let python = common::installed(common::test_deps().join("venv-mcp1/bin/python"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/list_and_close.py");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(script)
        .arg(RUNS.to_string())
        .arg(common::pegboard())
        .args(["serve", "--config"])
        .arg(&config)
        .args(extra)
        .env_remove("PEGBOARD_TOKEN")
        .kill_on_drop(true);
    let output = tokio::time::timeout(ALL_RUNS, command.output())
        .await
        .context("the runs did not finish")??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).with_context(|| {
        format!(
            "list_and_close.py printed no result: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Every run listed the whole board (7 tools) and was told nothing.
fn assert_all_runs_clean(result: &Value) {
    assert_eq!(result["failed"], json!([]), "{result}");
    let tools = result["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), RUNS, "{result}");
    assert!(tools.iter().all(|n| n == 7), "{result}");
    let notifications = result["notifications"].as_array().expect("notifications");
    assert!(
        notifications
            .iter()
            .all(|seen| seen.as_array().is_some_and(Vec::is_empty)),
        "a client that lists and closes was sent notifications: {result}"
    );
}

#[tokio::test]
async fn a_client_that_lists_and_closes_gets_no_notification_and_never_dies() -> Result<()> {
    assert_all_runs_clean(&list_and_close(&[]).await?);
    Ok(())
}

#[tokio::test]
async fn the_same_on_rmcps_way() -> Result<()> {
    assert_all_runs_clean(&list_and_close(&["--no-express"]).await?);
    Ok(())
}

const TOKEN_A: &str = "client-a-token-0123456789abcdef";
const TOKEN_B: &str = "client-b-token-0123456789abcdef";

/// Units and notes (and docs, `with_docs`), with client `a` seeing units and docs, `b` notes.
fn two_clients(with_docs: bool) -> Value {
    let mut servers = json!({
        "units": common::demo_server("units", &[]),
        "notes": common::demo_server("notes", &[]),
    });
    if with_docs {
        servers["docs"] = common::demo_server("docs", &[]);
    }
    json!({
        "mcpServers": servers,
        "clients": {
            "a": { "token": "${TOKEN_A}", "tools": ["units-*", "docs-*"] },
            "b": { "token": "${TOKEN_B}", "tools": ["notes-*"] }
        }
    })
}

/// The names in `list` that start with `prefix`.
fn with_prefix<'a>(list: &'a Value, prefix: &str) -> Vec<&'a str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[tokio::test]
async fn over_http_each_client_is_told_only_of_what_it_sees_and_delete_is_204() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(&config, two_clients(false).to_string())?;
    let env = [("TOKEN_A", TOKEN_A), ("TOKEN_B", TOKEN_B)];
    let (gateway, url, mut stderr) = common::serve_http_logged(&config, &[], &env).await?;
    let pid = gateway.id().context("the gateway's pid")?;

    let python = common::installed(common::test_deps().join("venv-mcp1/bin/python"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/clients_http.py");
    let mut client = tokio::process::Command::new(python)
        .arg(script)
        .args([url.as_str(), TOKEN_A, TOKEN_B])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(client.stdout.take().context("stdout")?).lines();
    let mut next = async || -> Result<Value> {
        let line = tokio::time::timeout(Duration::from_secs(90), lines.next_line())
            .await
            .context("clients_http.py said nothing")??
            .context("clients_http.py ended early (its stderr is above)")?;
        Ok(serde_json::from_str(&line)?)
    };

    let ready = next().await?;
    let a = &ready["ready"]["a"];
    let b = &ready["ready"]["b"];
    assert!(!with_prefix(a, "units-").is_empty(), "{ready}");
    assert!(!with_prefix(b, "notes-").is_empty(), "{ready}");
    assert_eq!(
        with_prefix(a, "").len(),
        with_prefix(a, "units-").len(),
        "{ready}"
    );
    assert_eq!(
        with_prefix(b, "").len(),
        with_prefix(b, "notes-").len(),
        "{ready}"
    );

    // docs joins the board: only `a` may see it.
    std::fs::write(&config, two_clients(true).to_string())?;
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()?;
    if !status.success() {
        bail!("kill -HUP {pid} failed: {status}");
    }
    common::wait_for_line(&mut stderr, "reload: +docs").await?;

    let result = next().await?;
    assert!(
        !with_prefix(&result["after"]["a"], "docs-").is_empty(),
        "{result}"
    );
    assert_eq!(result["after"]["b"], result["before"]["b"], "{result}");
    let told = |who: &str| -> Vec<&str> { with_prefix(&result["notifications"][who], "") };
    assert!(
        told("a").contains(&"notifications/tools/list_changed"),
        "{result}"
    );
    // Nothing at startup for either, and nothing of docs for `b`.
    assert!(told("b").is_empty(), "{result}");
    assert_eq!(result["warnings"], json!([]), "{result}");
    let status = tokio::time::timeout(Duration::from_secs(30), client.wait()).await??;
    assert!(status.success(), "clients_http.py: {status}");
    Ok(())
}
