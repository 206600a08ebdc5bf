//! `pegboard serve` keeps servers alive: a crashed server is restarted and its tools come back; a server's
//! `tools/list_changed` reaches the board.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;

async fn start() -> Result<(Client, tempfile::TempDir)> {
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
    let client =
        tokio::time::timeout(Duration::from_secs(30), ().into_dyn().serve(transport)).await??;
    Ok((client, dir))
}

async fn call_text(client: &Client, name: &str, args: Value) -> Result<(bool, String)> {
    let Value::Object(args) = args else {
        bail!("args must be an object")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await?;
    let text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    Ok((r.is_error == Some(true), text))
}

#[tokio::test]
async fn a_crashed_server_is_restarted_and_its_tools_come_back() -> Result<()> {
    let (client, _dir) = start().await?;
    let (_, pid_before) = call_text(&client, "t-pid", json!({})).await?;
    assert!(!pid_before.is_empty());

    // The crash call itself fails one way or another; what matters is what happens next.
    let _ = call_text(&client, "t-crash", json!({})).await;

    let deadline = Instant::now() + Duration::from_secs(20);
    let pid_after = loop {
        if Instant::now() > deadline {
            bail!("t-pid never answered from a new process");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        if let Ok((false, pid)) = call_text(&client, "t-pid", json!({})).await
            && pid != pid_before
        {
            break pid;
        }
    };
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
    let (client, _dir) = start().await?;
    let (failed, text) = call_text(&client, "t-add_tool", json!({"name": "fresh"})).await?;
    assert!(!failed, "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let names: Vec<String> = client
            .list_all_tools()
            .await?
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        if names.iter().any(|n| n == "t-fresh") {
            break;
        }
        if Instant::now() > deadline {
            bail!("t-fresh never appeared: {names:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (failed, _) = call_text(&client, "t-fresh", json!({}))
        .await
        .context("call the new tool")?;
    assert!(!failed);
    client.cancel().await?;
    Ok(())
}
