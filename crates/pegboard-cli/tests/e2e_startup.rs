//! Servers start and list concurrently: two that never answer `tools/list` cost one timeout.

mod common;

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;

#[tokio::test]
async fn two_hung_servers_cost_one_startup_timeout_not_two() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = json!({"mcpServers": {
        "hung1": common::demo_server("test", &["--hang-list"]),
        "hung2": common::demo_server("test", &["--hang-list"]),
        "units": common::demo_server("units", &[]),
    }});
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;

    let timeout = Duration::from_secs(3);
    let began = Instant::now();
    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--startup-timeout", "3", "--config"])
        .arg(&path)
        .output()
        .await?;
    let took = began.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("units-convert"), "{stdout}");
    // One after the other, the two hung listings alone would take 2 x 3 s.
    assert!(took < timeout * 2, "took {took:?}");
    Ok(())
}
