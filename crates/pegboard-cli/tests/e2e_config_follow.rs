//! A running `pegboard serve` follows its config file: `pegboard add` / `remove` / `disable`
//! on it (or an edit by hand) is applied as SIGHUP applies it, and the client gets
//! `tools/list_changed` and the new tools; a broken edit is logged and the board kept.
//! Every wait is on an event (a list_changed, a log line), never on a timer.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use common::changes::after_changes;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

async fn pegboard(args: &[&str], config: &Path) -> Result<()> {
    // The config first: after `--` everything is the server's command line.
    let (command, rest) = args.split_first().context("no command")?;
    let home = config.parent().context("no folder")?;
    let out = tokio::process::Command::new(common::pegboard())
        .arg(command)
        .arg("--config")
        .arg(config)
        .args(rest)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("PEGBOARD_CONFIG")
        .output()
        .await?;
    if !out.status.success() {
        bail!(
            "pegboard {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

async fn tool_names(client: &common::changes::Client) -> Vec<String> {
    match client.list_all_tools().await {
        Ok(tools) => tools.into_iter().map(|t| t.name.to_string()).collect(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_remove_and_a_broken_edit_reach_a_running_gateway() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(
            &json!({"mcpServers": {"notes": common::demo_server("notes", &[])}}),
        )?,
    )?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve").arg("--config").arg(&config);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut log = common::collect_lines(stderr.context("no stderr")?);
    let (client, mut changes) = common::changes::connect(transport, WAIT).await?;
    let names = tool_names(&client).await;
    assert!(names.iter().any(|n| n.starts_with("notes-")), "{names:?}");

    // `pegboard add` of the units demo server: it joins the board.
    let units = common::demo_server("units", &[]);
    let units_cmd = units["command"].as_str().context("command")?.to_string();
    pegboard(
        &["add", "units", "--", &units_cmd, "demo-server", "units"],
        &config,
    )
    .await?;
    let names = after_changes(&mut changes, WAIT, "units joining", async || {
        let names = tool_names(&client).await;
        names
            .iter()
            .any(|n| n.starts_with("units-"))
            .then_some(names)
    })
    .await?;
    assert!(names.iter().any(|n| n.starts_with("notes-")), "{names:?}");
    common::wait_for_line(&mut log, "config file changed: reloading").await?;
    common::wait_for_line(&mut log, "reload: +units, 1 unchanged").await?;

    // A broken edit by hand: logged, the board kept as it is.
    std::fs::write(&config, "{\"mcpServers\": {\"notes\": ")?;
    common::wait_for_line(&mut log, "keeping the 2 running servers as they are").await?;
    let names = tool_names(&client).await;
    assert!(
        names.iter().any(|n| n.starts_with("units-"))
            && names.iter().any(|n| n.starts_with("notes-")),
        "{names:?}"
    );

    // Fixed again (units disabled by hand, as `pegboard disable` writes it), then `pegboard remove notes`.
    let fixed = json!({"mcpServers": {
        "notes": common::demo_server("notes", &[]),
        "units": {"command": units_cmd, "args": ["demo-server", "units"], "disabled": true}
    }});
    std::fs::write(&config, serde_json::to_string_pretty(&fixed)?)?;
    after_changes(&mut changes, WAIT, "units leaving", async || {
        let names = tool_names(&client).await;
        (!names.iter().any(|n| n.starts_with("units-"))).then_some(())
    })
    .await?;
    pegboard(&["enable", "units"], &config).await?;
    after_changes(&mut changes, WAIT, "units back", async || {
        let names = tool_names(&client).await;
        names.iter().any(|n| n.starts_with("units-")).then_some(())
    })
    .await?;
    pegboard(&["remove", "notes"], &config).await?;
    let names = after_changes(&mut changes, WAIT, "notes leaving", async || {
        let names = tool_names(&client).await;
        (!names.iter().any(|n| n.starts_with("notes-"))).then_some(names)
    })
    .await?;
    assert!(names.iter().any(|n| n.starts_with("units-")), "{names:?}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_follow_leaves_the_board_alone_until_sighup() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"notes": common::demo_server("notes", &[])}}).to_string(),
    )?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve")
            .arg("--no-follow")
            .arg("--config")
            .arg(&config);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = transport.id().context("pid")?;
    let mut log = common::collect_lines(stderr.context("no stderr")?);
    let (client, mut changes) = common::changes::connect(transport, WAIT).await?;
    assert!(!tool_names(&client).await.is_empty());
    let units = common::demo_server("units", &[]);
    let units_cmd = units["command"].as_str().context("command")?.to_string();
    pegboard(
        &["add", "units", "--", &units_cmd, "demo-server", "units"],
        &config,
    )
    .await?;
    // Only the SIGHUP brings units: its reload is the first and only one.
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()?;
    assert!(status.success());
    after_changes(&mut changes, WAIT, "units after SIGHUP", async || {
        tool_names(&client)
            .await
            .iter()
            .any(|n| n.starts_with("units-"))
            .then_some(())
    })
    .await?;
    common::wait_for_line(&mut log, "reload: +units").await?;
    let lines = log.borrow().clone();
    assert_eq!(
        common::count_lines(&lines, "config file changed"),
        0,
        "{lines:#?}"
    );
    client.cancel().await?;
    Ok(())
}
