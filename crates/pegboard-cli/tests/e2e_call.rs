//! `pegboard call NS-TOOL` starts only the server its namespace names.

mod common;

use anyhow::Result;
use serde_json::json;

#[tokio::test]
async fn call_starts_only_the_server_whose_namespace_the_tool_carries() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let marker = dir.path().join("other-started");
    let config = json!({"mcpServers": {
        "units": common::demo_server("units", &[]),
        // Leaves a mark the moment it is started, whatever happens next.
        "other": {"command": "sh", "args": ["-c", format!("touch '{}'; exec cat", marker.display())]}
    }});
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;

    let out = tokio::process::Command::new(common::pegboard())
        .args([
            "call",
            "units-convert",
            r#"{"value": 2, "from": "kg", "to": "g"}"#,
            "--config",
        ])
        .arg(&path)
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "2 kg = 2000 g");
    assert!(
        !marker.exists(),
        "the `other` server was started for a `units-` tool"
    );

    // A name no namespace carries starts everything.
    let out = tokio::process::Command::new(common::pegboard())
        .args(["call", "nope", "--startup-timeout", "2", "--config"])
        .arg(&path)
        .output()
        .await?;
    assert!(!out.status.success());
    assert!(
        marker.exists(),
        "an unprefixed name must start every server"
    );
    Ok(())
}
