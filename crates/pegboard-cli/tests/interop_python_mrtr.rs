//! The OFFICIAL MCP Python SDK (`mcp` 2.x) through `pegboard serve` (stdio) in front of the test
//! server's `ask` tool, prompt and resources, which need the client's input: in `legacy` mode
//! (2025-11-25: the gateway answers a 2026-07-28 server's `input_required` for the client, or
//! relays a legacy session's requests) and `auto` mode (2026-07-28: `input_required` passes
//! through, or the gateway bridges a legacy session's requests into it). The client is
//! `tests/python/mrtr_client.py`; the SDK comes from `scripts/setup-test-deps.sh`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

const RUN: Duration = Duration::from_secs(90);

/// `mrtr_client.py --stdio <pegboard> <config> --mode MODE` against the test server with
/// `server_args`; the JSON line it printed.
async fn run(server_args: &[&str], mode: &str) -> Result<Value> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    let servers = json!({"mcpServers": {"t": common::demo_server("test", server_args)}});
    std::fs::write(&config, servers.to_string())?;
    let python = common::installed(common::test_deps().join("venv/bin/python"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mrtr_client.py");
    let child = tokio::process::Command::new(python)
        .arg(script)
        .arg("--stdio")
        .arg(common::pegboard())
        .arg(&config)
        .args(["--mode", mode])
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn mrtr_client.py")?;
    let out = tokio::time::timeout(RUN, child.wait_with_output()).await??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "mrtr_client.py --mode {mode} failed\n--- stdout\n{stdout}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty());
    Ok(serde_json::from_str(line.context("no output")?)?)
}

fn assert_tools_answered(out: &Value, version: &str) {
    assert_eq!(out["protocol_version"], version, "{out}");
    assert_eq!(out["sampling"], "python | python", "{out}");
    assert_eq!(out["elicitation"], r#"accept {"answer":"python"}"#, "{out}");
}

#[tokio::test]
async fn python_clients_of_both_generations_answer_a_2026_server() -> Result<()> {
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let out = run(&["--only-2026", "--ask-tool"], mode).await?;
        assert_tools_answered(&out, version);
        assert_eq!(out["roots"], "file:///python", "{out}");
        assert_eq!(out["prompt"], "python", "{out}");
        assert_eq!(out["resource"], "file:///python", "{out}");
    }
    Ok(())
}

#[tokio::test]
async fn python_clients_of_both_generations_answer_a_server_connected_with_initialize() -> Result<()>
{
    // Legacy mode: relayed requests. Auto mode: the bridge (roots answer the union of the
    // sessions' roots, as for any server request not tied to one client).
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let out = run(&["--ask-tool"], mode).await?;
        assert_tools_answered(&out, version);
    }
    Ok(())
}
