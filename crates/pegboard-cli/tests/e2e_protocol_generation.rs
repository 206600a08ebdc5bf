//! Servers of every protocol generation: one that speaks only 2026-07-28 (it refuses
//! `initialize`) is connected with `server/discover`, its tools are on the board and calls
//! reach it; through `pegboard serve` a client is then offered 2026-07-28.

mod common;

use anyhow::Result;
use serde_json::json;

fn only_2026_config(dir: &std::path::Path) -> Result<std::path::PathBuf> {
    let config = json!({"mcpServers": {
        "t": common::demo_server("test", &["--only-2026"]),
        "units": common::demo_server("units", &[]),
    }});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

#[tokio::test]
async fn a_server_that_speaks_only_2026_is_connected_with_server_discover() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = only_2026_config(dir.path())?;

    let out = tokio::process::Command::new(common::pegboard())
        .args([
            "call",
            "t-echo",
            r#"{"text": "through discover"}"#,
            "--config",
        ])
        .arg(&path)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "through discover"
    );

    // Both generations on one board.
    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--format", "json", "--config"])
        .arg(&path)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let listed = String::from_utf8_lossy(&out.stdout);
    for tool in ["t-echo", "t-sleep", "units-convert"] {
        assert!(
            listed.contains(&format!("\"{tool}\"")),
            "{tool} missing: {listed}"
        );
    }
    assert!(!stderr.contains("failed"), "{stderr}");
    Ok(())
}
