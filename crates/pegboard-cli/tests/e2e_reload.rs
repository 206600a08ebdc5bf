//! `pegboard serve` reloads its config on SIGHUP: added servers start, removed ones stop, changed ones restart
//! with their new config, unchanged ones keep running (same process), and clients get `tools/list_changed`.
//! A config that does not load changes nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use common::changes::{Client, after_changes};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// How long anything here may take (servers start in well under a second; CI machines are slow).
const WAIT: Duration = Duration::from_secs(20);

/// A running `pegboard serve --config F` over stdio, with its stderr collected.
struct Gateway {
    /// `None` once stopped.
    client: Option<Client>,
    /// The count of `tools/list_changed` the client got.
    changes: watch::Receiver<u64>,
    stderr: Arc<Mutex<String>>,
    /// Bumped whenever stderr grows, so a wait for a log line waits on that, not on a timer.
    stderr_grew: watch::Receiver<()>,
    pid: u32,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Gateway {
    async fn start(config: &Value) -> Result<Self> {
        Self::start_with(config, &[]).await
    }

    async fn start_with(config: &Value, flags: &[&str]) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("pegboard.json");
        write(&path, config)?;
        let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
            // SIGHUP alone: the file is not followed here (e2e_config_follow.rs tests that).
            c.arg("serve")
                .arg("--no-follow")
                .arg("--config")
                .arg(&path)
                .args(flags);
        });
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()?;
        let pid = transport.id().context("the gateway has no pid")?;
        let collected = Arc::new(Mutex::new(String::new()));
        let (grew, stderr_grew) = watch::channel(());
        if let Some(mut stderr) = stderr {
            let sink = Arc::clone(&collected);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .expect("stderr lock")
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                    grew.send_replace(());
                }
            });
        }
        let (client, changes) = common::changes::connect(transport, WAIT).await?;
        Ok(Self {
            client: Some(client),
            changes,
            stderr: collected,
            stderr_grew,
            pid,
            config: path,
            _dir: dir,
        })
    }

    /// Replace the config file and send the gateway SIGHUP.
    fn reload_with(&self, text: &str) -> Result<()> {
        std::fs::write(&self.config, text)?;
        let status = std::process::Command::new("kill")
            .args(["-HUP", &self.pid.to_string()])
            .status()?;
        if !status.success() {
            bail!("kill -HUP {} failed: {status}", self.pid);
        }
        Ok(())
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Wait until the gateway's stderr contains `needle`.
    async fn wait_for_log(&self, needle: &str) -> Result<String> {
        let mut grew = self.stderr_grew.clone();
        let found = tokio::time::timeout(WAIT, async {
            loop {
                grew.mark_unchanged();
                let log = self.stderr();
                if log.contains(needle) {
                    return Some(log);
                }
                // Woken by the next stderr output; `None` once stderr is closed.
                grew.changed().await.ok()?;
            }
        })
        .await;
        match found {
            Ok(Some(log)) => Ok(log),
            _ => bail!(
                "`{needle}` never appeared on the gateway's stderr:\n{}",
                self.stderr()
            ),
        }
    }

    fn client(&self) -> Result<&Client> {
        self.client.as_ref().context("the gateway was stopped")
    }

    async fn tool_names(&self) -> Result<Vec<String>> {
        let listing = tokio::time::timeout(WAIT, self.client()?.list_all_tools())
            .await
            .context("tools/list timed out")??;
        Ok(listing.iter().map(|t| t.name.to_string()).collect())
    }

    /// Wait until the tool list satisfies `ok`, listing again at each `list_changed`; returns it.
    async fn wait_for_tools(&self, ok: impl Fn(&[String]) -> bool) -> Result<Vec<String>> {
        let mut changes = self.changes.clone();
        let mut last = Vec::new();
        let found = after_changes(&mut changes, WAIT, "the expected tool list", async || {
            let names = self.tool_names().await.ok()?;
            if ok(&names) {
                return Some(names);
            }
            last = names;
            None
        })
        .await;
        found.with_context(|| format!("the tool list was last {last:?}"))
    }

    async fn call_text(&self, name: &str, args: Value) -> Result<(bool, String)> {
        let Value::Object(args) = args else {
            bail!("args must be an object")
        };
        let r = tokio::time::timeout(
            WAIT,
            self.client()?
                .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args)),
        )
        .await
        .with_context(|| format!("{name} timed out"))??;
        let text = common::first_text(&r);
        Ok((r.is_error == Some(true), text))
    }

    async fn pid_of(&self, tool: &str) -> Result<String> {
        let (failed, pid) = self.call_text(tool, json!({})).await?;
        if failed || pid.is_empty() {
            bail!("{tool} failed: {pid}");
        }
        Ok(pid)
    }

    /// Close the session: rmcp closes the gateway's stdin and waits for it to exit (SIGTERM, then SIGKILL,
    /// if it does not); the gateway shuts its servers down on the way out.
    async fn stop(mut self) -> Result<()> {
        let client = self.client.take().context("stopped twice")?;
        tokio::time::timeout(WAIT, client.cancel())
            .await
            .context("closing the session timed out")??;
        Ok(())
    }
}

impl Drop for Gateway {
    /// A test that failed half-way: SIGTERM lets the gateway stop its own children before it goes.
    fn drop(&mut self) {
        if self.client.is_some() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &self.pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn write(path: &Path, config: &Value) -> Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(config)?)?;
    Ok(())
}

fn has_prefix(names: &[String], prefix: &str) -> bool {
    names.iter().any(|n| n.starts_with(prefix))
}

#[tokio::test]
async fn sighup_adds_removes_restarts_changed_and_keeps_unchanged() -> Result<()> {
    let mut gw = Gateway::start(&json!({"mcpServers": {
        "t": common::demo_server("test", &[]),
        "c": common::demo_server("test", &[]),
        "notes": common::demo_server("notes", &[]),
    }}))
    .await?;
    let names = gw.tool_names().await?;
    assert!(
        has_prefix(&names, "notes-") && !has_prefix(&names, "docs-"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "c-echo"), "{names:?}");
    let t_pid = gw.pid_of("t-pid").await?;
    let c_pid = gw.pid_of("c-pid").await?;
    gw.changes.mark_unchanged();

    // t unchanged, c changed (a deny list), notes removed, docs added.
    let mut c = common::demo_server("test", &[]);
    c["deny"] = json!(["echo"]);
    let next = json!({"mcpServers": {
        "t": common::demo_server("test", &[]),
        "c": c,
        "docs": common::demo_server("docs", &[]),
    }});
    gw.reload_with(&serde_json::to_string_pretty(&next)?)?;

    tokio::time::timeout(WAIT, gw.changes.changed())
        .await
        .context("no tools/list_changed after the reload")?
        .context("the session closed")?;
    let names = gw
        .wait_for_tools(|n| has_prefix(n, "docs-") && n.iter().any(|n| n == "c-pid"))
        .await?;
    assert!(
        !has_prefix(&names, "notes-"),
        "notes must be gone: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "c-echo"),
        "c's new deny list: {names:?}"
    );
    assert!(names.iter().any(|n| n == "t-echo"), "{names:?}");

    assert_eq!(
        gw.pid_of("t-pid").await?,
        t_pid,
        "the unchanged server was restarted"
    );
    assert_ne!(
        gw.pid_of("c-pid").await?,
        c_pid,
        "the changed server kept its old process"
    );
    let (failed, text) = gw
        .call_text("docs-read", json!({"id": "mcp-overview"}))
        .await?;
    assert!(!failed && !text.is_empty(), "{text}");
    // The gateway answers an unknown tool with a protocol error (with close matches).
    let gone = gw.call_text("notes-search", json!({"query": "x"})).await;
    assert!(
        gone.as_ref().map_or(true, |(failed, _)| *failed),
        "a removed server's tool must fail: {gone:?}"
    );

    gw.wait_for_log("reload: +docs, -notes, ~c, 1 unchanged")
        .await?;
    gw.stop().await
}

#[tokio::test]
async fn a_broken_config_on_sighup_changes_nothing() -> Result<()> {
    let mut gw =
        Gateway::start(&json!({"mcpServers": {"t": common::demo_server("test", &[])}})).await?;
    let before = gw.tool_names().await?;
    let t_pid = gw.pid_of("t-pid").await?;
    gw.changes.mark_unchanged();

    // A trailing comma on line 2: the loader names file:line:col.
    gw.reload_with("{\"mcpServers\": {\n  \"t\": {\"command\": \"x\",}\n}}")?;
    let log = gw.wait_for_log("invalid config JSON").await?;
    let at = format!("{}:2:", gw.config.display());
    assert!(log.contains(&at), "the error must name {at}: {log}");
    assert!(log.contains("keeping the 1 running server"), "{log}");

    assert_eq!(gw.tool_names().await?, before);
    assert_eq!(
        gw.pid_of("t-pid").await?,
        t_pid,
        "a broken config must not restart anything"
    );
    let (failed, text) = gw
        .call_text("t-echo", json!({"text": "still here"}))
        .await?;
    assert!(!failed && text.contains("still here"), "{text}");
    assert!(
        !gw.changes.has_changed().unwrap_or(false),
        "nothing changed, so no list_changed"
    );

    // Fixed again, the next SIGHUP applies it.
    let fixed = json!({"mcpServers": {
        "t": common::demo_server("test", &[]),
        "units": common::demo_server("units", &[]),
    }});
    gw.reload_with(&serde_json::to_string_pretty(&fixed)?)?;
    gw.wait_for_tools(|n| has_prefix(n, "units-")).await?;
    assert_eq!(gw.pid_of("t-pid").await?, t_pid);
    gw.wait_for_log("reload: +units, 1 unchanged").await?;
    gw.stop().await
}

#[tokio::test]
async fn with_no_restart_a_reload_starts_a_dead_server_again() -> Result<()> {
    let config = json!({"mcpServers": {"t": common::demo_server("test", &[])}});
    let gw = Gateway::start_with(&config, &["--no-restart"]).await?;
    let t_pid = gw.pid_of("t-pid").await?;
    // The crash call itself fails one way or another; what matters is that nothing restarts it.
    // The crash call ends when the process has exited (its answer never comes). With no
    // supervisor (a restart would wait a 1 s backoff anyway), the server is down from then on.
    let _ = gw.call_text("t-crash", json!({})).await;
    assert!(gw.pid_of("t-pid").await.is_err(), "t must stay down");

    gw.reload_with(&serde_json::to_string_pretty(&config)?)?;
    gw.wait_for_log("reload: +t (retry), 0 unchanged").await?;
    // Started again, t rejoins the board, and clients are told.
    let new_pid = after_changes(&mut gw.changes.clone(), WAIT, "t came back", async || {
        gw.pid_of("t-pid").await.ok()
    })
    .await
    .with_context(|| gw.stderr())?;
    assert_ne!(new_pid, t_pid);
    gw.stop().await
}

/// `--max-message-mib` outlives a reload: the servers of the reloaded file get it too, so an
/// unchanged entry is not taken for a changed one (and restarted), and the raised limit still holds.
#[tokio::test]
async fn a_reload_keeps_the_command_line_message_limit() -> Result<()> {
    let config = json!({"mcpServers": {"t": common::demo_server("test", &["--huge-tool"])}});
    let gw = Gateway::start_with(&config, &["--max-message-mib", "16"]).await?;
    let t_pid = gw.pid_of("t-pid").await?;
    gw.reload_with(&serde_json::to_string_pretty(&config)?)?;
    gw.wait_for_log("reload: no changes, 1 unchanged").await?;
    assert_eq!(gw.pid_of("t-pid").await?, t_pid);
    let nine_mib = 9 * 1024 * 1024;
    let (failed, text) = gw.call_text("t-huge", json!({"bytes": nine_mib})).await?;
    assert!(
        !failed && text.len() == nine_mib,
        "{}",
        &text[..text.len().min(300)]
    );
    gw.stop().await
}

/// The lines of the audit log at `path` (none when it does not exist).
fn audit_lines(path: &Path) -> Result<Vec<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

#[tokio::test]
async fn sighup_reopens_the_audit_log_after_logrotate_moved_it() -> Result<()> {
    let logs = tempfile::tempdir()?;
    let log = logs.path().join("audit.jsonl");
    let rotated = logs.path().join("audit.jsonl.1");
    let config = json!({"mcpServers": {"units": common::demo_server("units", &[])}});
    let gw = Gateway::start_with(
        &config,
        &["--audit-log", log.to_str().context("a UTF-8 path")?],
    )
    .await?;
    let (failed, _) = gw
        .call_text(
            "units-convert",
            json!({"value": 1, "from": "km", "to": "m"}),
        )
        .await?;
    assert!(!failed);
    // What logrotate does: move the file away, then SIGHUP.
    std::fs::rename(&log, &rotated)?;
    gw.reload_with(&serde_json::to_string_pretty(&config)?)?;
    gw.wait_for_log("SIGHUP: reloading").await?;
    let (failed, _) = gw
        .call_text(
            "units-convert",
            json!({"value": 2, "from": "km", "to": "m"}),
        )
        .await?;
    assert!(!failed);
    // The session's end stops the gateway, which writes what it still holds before it exits.
    gw.stop().await?;

    let new = audit_lines(&log)?;
    let old = audit_lines(&rotated)?;
    // The second call came after the reopen, so it is in the new file (the first may be in
    // either: it is written in the background, before or after the reopen).
    assert!(
        !new.is_empty(),
        "nothing was written to a new file at the old path: the log was not reopened (moved file: {old:?})"
    );
    let mut tools: Vec<_> = old.iter().chain(&new).map(|l| l["name"].clone()).collect();
    tools.dedup();
    assert_eq!(tools, [json!("units-convert")], "{old:?} {new:?}");
    assert_eq!(old.len() + new.len(), 2, "each call once: {old:?} {new:?}");
    Ok(())
}

/// The line of the gateway's stderr that contains `needle` (the first).
fn line_with<'a>(log: &'a str, needle: &str) -> &'a str {
    log.lines().find(|l| l.contains(needle)).unwrap_or_default()
}

/// Two entries whose tools clash at startup (`"prefix": false`, both with `echo`): one of them
/// starts, the other fails with an error naming both entries and the tool; the rest serve.
#[tokio::test]
async fn entries_whose_tools_clash_at_startup_name_each_other_and_the_rest_serve() -> Result<()> {
    let mut one = common::demo_server("test", &[]);
    one["prefix"] = json!(false);
    let two = one.clone();
    let gw = Gateway::start(&json!({"mcpServers": {
        "one": one,
        "two": two,
        "units": common::demo_server("units", &[]),
    }}))
    .await?;
    let log = gw.wait_for_log("failed: tool `echo` clashes").await?;
    let line = line_with(&log, "failed: tool `echo` clashes");
    // Both start at once: either may be the one refused.
    let (lost, won) = if line.starts_with("two:") {
        ("two", "one")
    } else {
        ("one", "two")
    };
    assert!(
        line.starts_with(&format!("{lost}: failed:"))
            && line.contains(&format!(
                "server `{won}` lists it already (its tool `echo`)"
            ))
            && line.contains(&format!(
                "server `{lost}` would list a tool under the same name"
            )),
        "the error must name both entries and the tool: {line}"
    );
    let names = gw.tool_names().await?;
    let mut unprefixed: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with("units-"))
        .collect();
    unprefixed.sort_unstable();
    assert_eq!(
        unprefixed,
        ["add_tool", "crash", "echo", "pid", "remove_tool", "sleep"],
        "the winner's tools, each once: {names:?}"
    );
    assert!(has_prefix(&names, "units-"), "{names:?}");
    let (failed, text) = gw.call_text("echo", json!({"text": "still one"})).await?;
    assert!(!failed && text == "still one", "{text}");
    let (failed, text) = gw
        .call_text(
            "units-convert",
            json!({"value": 1, "from": "km", "to": "m"}),
        )
        .await?;
    assert!(!failed && !text.is_empty(), "{text}");
    gw.stop().await
}

/// A reload that brings a clash (the issue's `a-b` + `c` against `a` + `b-c`): entry `a` lists
/// `b-echo` (added at run time), so it holds `a-b-echo`; a new entry `a-b` would list its `echo`
/// as `a-b-echo` too. The new entry fails with an error naming both entries and the tool, the
/// board stays as it was, and the other servers keep serving.
#[tokio::test]
async fn a_reload_that_brings_a_clash_names_both_entries_and_changes_nothing() -> Result<()> {
    let config = json!({"mcpServers": {
        "a": common::demo_server("test", &[]),
        "units": common::demo_server("units", &[]),
    }});
    let mut gw = Gateway::start(&config).await?;
    let (failed, text) = gw
        .call_text("a-add_tool", json!({"name": "b-echo"}))
        .await?;
    assert!(!failed, "{text}");
    let before = gw
        .wait_for_tools(|n| n.iter().any(|n| n == "a-b-echo"))
        .await?;
    let a_pid = gw.pid_of("a-pid").await?;
    gw.changes.mark_unchanged();

    let mut next = config.clone();
    next["mcpServers"]["a-b"] = common::demo_server("test", &[]);
    gw.reload_with(&serde_json::to_string_pretty(&next)?)?;
    let log = gw
        .wait_for_log("reload: +a-b, 2 unchanged (a-b failed to start)")
        .await?;
    let line = line_with(&log, "a-b: failed:");
    assert!(
        line.contains("tool `a-b-echo` clashes: server `a` lists it already (its tool `b-echo`), and server `a-b` would list a tool under the same name"),
        "the error must name both entries and the tool: {line}\n{log}"
    );

    // The board as it was: the same tools, the same process behind `a`, no list_changed.
    assert_eq!(gw.tool_names().await?, before);
    assert_eq!(gw.pid_of("a-pid").await?, a_pid);
    assert!(
        !gw.changes.has_changed().unwrap_or(false),
        "the board did not change, so no list_changed"
    );
    // The other servers keep serving.
    let (failed, text) = gw.call_text("a-b-echo", json!({"x": 1})).await?;
    assert!(!failed && text.contains("b-echo called with"), "{text}");
    let (failed, text) = gw
        .call_text(
            "units-convert",
            json!({"value": 2, "from": "km", "to": "m"}),
        )
        .await?;
    assert!(!failed && !text.is_empty(), "{text}");
    gw.stop().await
}
