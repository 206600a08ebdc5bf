//! `pegboard serve` over stdio, driven by rmcp's client and by raw JSON-RPC lines.

mod common;

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test]
async fn serve_stdio_lists_and_calls_through_rmcp() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard")).configure(|c| {
        c.arg("serve").arg("--config").arg(&config);
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let client = tokio::time::timeout(Duration::from_secs(30), ().into_dyn().serve(transport))
        .await
        .context("handshake timed out")??;

    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"notes-search"), "{names:?}");
    assert!(names.contains(&"units-convert"), "{names:?}");

    let args = json!({"value": 10, "from": "km", "to": "mi"});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("units-convert").with_arguments(args))
        .await?;
    assert_ne!(result.is_error, Some(true));
    let text = common::first_text(&result);
    assert!(text.contains("6.213712"), "{text}");

    client.cancel().await?;
    Ok(())
}

/// stdout carries only JSON-RPC (progress goes to stderr), and closing stdin ends the process cleanly,
/// its servers with it.
#[tokio::test]
async fn serve_stdio_keeps_stdout_clean_and_exits_on_eof() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let pid_file = dir.path().join("notes.pid");
    // `exec` keeps the pid: the file names the notes server process itself.
    let script = format!(
        "echo $$ > '{}'; exec '{}' demo-server notes",
        pid_file.display(),
        common::pegboard().display()
    );
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "notes": {"command": "sh", "args": ["-c", script]},
            "units": common::demo_server("units", &[])
        }})
        .to_string(),
    )?;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard"))
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let stderr = child.stderr.take().context("stderr")?;
    let stderr_task = tokio::spawn(async move {
        let mut all = String::new();
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            all.push_str(&l);
            all.push('\n');
        }
        all
    });

    let send = |v: Value| format!("{v}\n");
    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
            .as_bytes(),
        )
        .await?;
    let first = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
        .await??
        .context("eof")?;
    let init: Value =
        serde_json::from_str(&first).with_context(|| format!("stdout is not JSON: {first}"))?;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "pegboard");

    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).as_bytes(),
        )
        .await?;
    stdin
        .write_all(
            send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "units-convert", "arguments": {"value": 0, "from": "C", "to": "F"}}}))
            .as_bytes(),
        )
        .await?;
    let reply = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await??
            .context("eof")?;
        let v: Value =
            serde_json::from_str(&line).with_context(|| format!("stdout is not JSON: {line}"))?;
        if v["id"] == 2 {
            break v;
        }
    };
    assert_eq!(
        reply["result"]["content"][0]["text"], "0 C = 32 F",
        "{reply}"
    );

    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .context("no exit after EOF")??;
    assert!(status.success(), "{status}");
    while let Some(line) = stdout.next_line().await? {
        serde_json::from_str::<Value>(&line)
            .with_context(|| format!("stdout is not JSON: {line}"))?;
    }
    let err = stderr_task.await?;
    assert!(
        err.contains("notes: ready, 3 tools") && err.contains("units: ready"),
        "{err}"
    );

    let pid = std::fs::read_to_string(&pid_file)?.trim().to_string();
    let raw = rustix::process::Pid::from_raw(pid.parse()?).context("pid 0")?;
    // A pidfd is readable once its process has exited (gone, or a zombie waiting for init to
    // reap it: either way no longer running); a pid already gone cannot be opened.
    match rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()) {
        Err(rustix::io::Errno::SRCH) => {}
        Err(e) => return Err(e.into()),
        Ok(fd) => {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            let within = Timespec {
                tv_sec: 5,
                tv_nsec: 0,
            };
            let ready = tokio::task::spawn_blocking(move || {
                poll(&mut [PollFd::new(&fd, PollFlags::IN)], Some(&within))
            })
            .await??;
            assert!(ready > 0, "the notes server (pid {pid}) outlived pegboard");
        }
    }
    Ok(())
}

/// A client may close the gateway's stderr (or never read it) while it speaks on stdin and
/// stdout. Its log lines are then dropped: every request is still answered, and SIGTERM still
/// stops it with success (before, the first line logged panicked the task that logged it).
#[tokio::test]
async fn with_stderr_closed_it_still_answers_and_stops_on_sigterm() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard"))
        .arg("serve")
        .arg("--config")
        .arg(common::write_demo_config(dir.path()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    // Nobody reads its stderr.
    drop(child.stderr.take());
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "units-convert", "arguments": {"value": 100, "from": "C", "to": "F"}}}),
        // Not on the board: the gateway logs it (a line nobody reads), and answers an error.
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no-such-tool"}}),
    ];
    for message in &messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .with_context(|| format!("no answer after {answers:?}"))??
            .context("eof")?;
        let v: Value = serde_json::from_str(&line)?;
        if let Some(id) = v["id"].as_u64() {
            answers.insert(id, v);
        }
    }
    assert_eq!(answers[&2]["result"]["content"][0]["text"], "100 C = 212 F");
    assert!(answers[&3].get("error").is_some(), "{}", answers[&3]);

    let status = common::terminate(&mut child).await?;
    assert!(status.success(), "{status}");
    Ok(())
}
