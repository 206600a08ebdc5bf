//! One bad entry is skipped with its line and the rest served; `--strict` refuses the config.

mod common;

use anyhow::Result;

#[tokio::test]
async fn a_bad_entry_is_skipped_and_strict_refuses_it() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let units = common::demo_server("units", &[]);
    let text = format!(
        "{{\"mcpServers\": {{\n  \"my units\": {units},\n  \"old\": {{\"type\": \"sse\", \"url\": \"http://127.0.0.1:1/sse\"}}\n}}}}"
    );
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, text)?;

    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--config"])
        .arg(&path)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("my_units-convert"));
    assert!(
        stderr.contains("pegboard.json:3: server `old` skipped"),
        "{stderr}"
    );

    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--strict", "--config"])
        .arg(&path)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--strict"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("convert"));
    Ok(())
}
