//! `pegboard serve` keeps servers alive: a crashed server is restarted and its tools come back; a server's
//! `tools/list_changed` reaches the board.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use tokio::sync::watch;

use common::changes::{Client, after_changes};

/// How long a server may take to come back or a change to arrive.
const CHANGES: Duration = Duration::from_secs(20);

/// Connect a client that counts `list_changed`; the count to wait on.
async fn connect(transport: TokioChildProcess) -> Result<(Client, watch::Receiver<u64>)> {
    common::changes::connect(transport, Duration::from_secs(30)).await
}

/// `t-pid`'s answer once it comes from another process than `before` (a restart).
async fn restarted(
    client: &Client,
    changes: &mut watch::Receiver<u64>,
    before: &str,
) -> Result<String> {
    after_changes(
        changes,
        CHANGES,
        "t-pid never answered from a new process",
        async || {
            // As a client does on `list_changed`: list again. A session is told of a change
            // against the list it was last answered, so one that never lists is told nothing.
            client.list_all_tools().await.ok()?;
            match call_text(client, "t-pid", json!({})).await {
                Ok((false, pid)) if pid != before => Some(pid),
                _ => None,
            }
        },
    )
    .await
}

async fn start() -> Result<(Client, watch::Receiver<u64>, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"t": common::demo_server("test", &[])}}).to_string(),
    )?;
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard")).configure(|c| {
        c.arg("serve").arg("--config").arg(&config);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let (client, changes) = connect(transport).await?;
    Ok((client, changes, dir))
}

async fn call_text(client: &Client, name: &str, args: Value) -> Result<(bool, String)> {
    let Value::Object(args) = args else {
        bail!("args must be an object")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await?;
    let text = common::first_text(&r);
    Ok((r.is_error == Some(true), text))
}

#[tokio::test]
async fn a_crashed_server_is_restarted_and_its_tools_come_back() -> Result<()> {
    let (client, mut changes, _dir) = start().await?;
    let (_, pid_before) = call_text(&client, "t-pid", json!({})).await?;
    assert!(!pid_before.is_empty());

    // The crash call itself fails one way or another; what matters is what happens next.
    let _ = call_text(&client, "t-crash", json!({})).await;
    let pid_after = restarted(&client, &mut changes, &pid_before).await?;
    assert_ne!(pid_after, pid_before);
    let names: Vec<String> = client
        .list_all_tools()
        .await?
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.iter().any(|n| n == "t-echo"), "{names:?}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_servers_list_changed_reaches_the_board() -> Result<()> {
    let (client, mut changes, _dir) = start().await?;
    let (failed, text) = call_text(&client, "t-add_tool", json!({"name": "fresh"})).await?;
    assert!(!failed, "{text}");
    after_changes(
        &mut changes,
        CHANGES,
        "t-fresh never appeared",
        async || {
            let tools = client.list_all_tools().await.ok()?;
            tools.iter().any(|t| t.name == "t-fresh").then_some(())
        },
    )
    .await?;
    let (failed, _) = call_text(&client, "t-fresh", json!({}))
        .await
        .context("call the new tool")?;
    assert!(!failed);
    client.cancel().await?;
    Ok(())
}

/// The pids of the processes whose parent is `parent` and that are zombies (state `Z`).
fn zombie_children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            let mut fields = rest.split_whitespace();
            let state = fields.next();
            let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
            state == Some("Z") && ppid == Some(parent)
        })
        .collect()
}

#[tokio::test]
async fn a_killed_server_fails_fast_others_keep_answering_and_it_comes_back_without_zombies()
-> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "t": common::demo_server("test", &[]),
            "u": common::demo_server("units", &[])
        }})
        .to_string(),
    )?;
    // The test server logs when a sleep begins, and the gateway passes its servers' stderr on
    // to its own: the call is known to be in flight before its server is killed.
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard")).configure(|c| {
        c.arg("serve").arg("--config").arg(&config).env(
            "RUST_LOG",
            "warn,pegboard::server_stderr=debug,demo_servers=info",
        );
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = common::collect_lines(stderr.context("the gateway's stderr")?);
    let gateway_pid = transport.id().context("gateway pid")?;
    let (client, mut changes) = connect(transport).await?;

    let (_, pid_before) = call_text(&client, "t-pid", json!({})).await?;
    let in_flight = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let args = json!({"ms": 20_000})
                .as_object()
                .cloned()
                .unwrap_or_default();
            peer.call_tool(CallToolRequestParams::new("t-sleep").with_arguments(args))
                .await
        })
    };
    common::wait_for_line(&mut stderr, "sleep started").await?;
    let killed_at = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-9", pid_before.trim()])
        .status()?;
    assert!(status.success(), "kill -9 {pid_before}");

    // The call in flight ends with an error, fast.
    let outcome = tokio::time::timeout(Duration::from_secs(1), in_flight)
        .await
        .context("the in-flight call to the killed server did not end within 1 s")??;
    let failed = match outcome {
        Err(_) => true,
        Ok(result) => result.is_error == Some(true),
    };
    assert!(failed, "a call to a killed server must fail");
    assert!(killed_at.elapsed() < Duration::from_secs(1));

    // The other namespace answers while `t` is down.
    let (failed, text) = call_text(
        &client,
        "u-convert",
        json!({"value": 1, "from": "mi", "to": "km"}),
    )
    .await?;
    assert!(!failed && text.contains("1.609344"), "{text}");

    // `t` comes back (new process) and routes again.
    restarted(&client, &mut changes, &pid_before).await?;
    let (failed, text) = call_text(&client, "t-echo", json!({"text": "back"})).await?;
    assert!(!failed && text == "back", "{text}");

    // The killed child was reaped by the gateway: no zombie children.
    let zombies = zombie_children(gateway_pid);
    assert!(
        zombies.is_empty(),
        "zombie children of the gateway: {zombies:?}"
    );
    client.cancel().await?;
    Ok(())
}

#[test]
fn the_zombie_check_sees_a_real_zombie() -> Result<()> {
    // A child that exits and is not waited for stays a zombie: the check must see it.
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    let mut child = std::process::Command::new("true").spawn()?;
    let pid = child.id();
    // Wait for its exit without reaping it (WNOWAIT): from then on it is a zombie.
    let id = Id::Pid(nix::unistd::Pid::from_raw(i32::try_from(pid)?));
    waitid(id, WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)?;
    assert!(
        zombie_children(std::process::id()).contains(&pid),
        "zombie {pid} not seen"
    );
    child.wait()?;
    assert!(!zombie_children(std::process::id()).contains(&pid));
    Ok(())
}
