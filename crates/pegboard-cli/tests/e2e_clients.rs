//! Named clients at the command line: `pegboard search --client NAME` searches as that client
//! sees the board, and `pegboard serve` warns at start of a client's `tools` pattern that
//! matches no tool on the board.

mod common;

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// A config of the units and notes demo servers with two clients: `reader` may see only
/// `units-list_units`, `typo` has a pattern that matches nothing.
fn config(dir: &std::path::Path) -> Result<std::path::PathBuf> {
    let config = json!({
        "mcpServers": {
            "units": common::demo_server("units", &[]),
            "notes": common::demo_server("notes", &[])
        },
        "clients": {
            "reader": { "token": "reader-token-0123456789abcdef", "tools": ["units-list_units"] },
            "typo": { "token": "typo-token-0123456789abcdef", "tools": ["notes-*", "unit-*"] }
        }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// `pegboard search --json ARGS.. --config CONFIG`: exit code, stdout, stderr.
async fn search(config: &std::path::Path, args: &[&str]) -> Result<(i32, String, String)> {
    let output = tokio::process::Command::new(common::pegboard())
        .args(["search", "--json", "-k", "3"])
        .args(args)
        .arg("--config")
        .arg(config)
        .kill_on_drop(true)
        .output()
        .await?;
    Ok((
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

fn names(stdout: &str) -> Result<Vec<String>> {
    let json: Value = serde_json::from_str(stdout).with_context(|| stdout.to_string())?;
    Ok(json["tools"]
        .as_array()
        .context("tools")?
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect())
}

#[tokio::test]
async fn search_as_a_client_shows_only_what_it_may_see() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path())?;
    let query = "convert units of length";

    let (code, stdout, stderr) = search(&config, &[query]).await?;
    assert_eq!(code, 0, "{stderr}");
    let everyone = names(&stdout)?;
    assert_eq!(everyone.first().map(String::as_str), Some("units-convert"));
    assert!(everyone.len() > 1, "{everyone:?}");

    let (code, stdout, stderr) = search(&config, &["--client", "reader", query]).await?;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(names(&stdout)?, ["units-list_units"]);

    let (code, _, stderr) = search(&config, &["--client", "nobody", query]).await?;
    assert_ne!(code, 0);
    assert!(
        stderr.contains("no client `nobody`") && stderr.contains("`reader`"),
        "{stderr}"
    );
    Ok(())
}

#[tokio::test]
async fn a_pattern_that_matches_no_tool_is_warned_of_at_start() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path())?;
    let (_child, _url, mut stderr) = common::serve_http_logged(&config, &[], &[]).await?;
    common::wait_for_line(&mut stderr, "pattern `unit-*`").await?;
    let lines = stderr.borrow();
    let warned: Vec<&String> = lines.iter().filter(|l| l.contains("pattern `")).collect();
    // Only the typo: `notes-*` and `units-list_units` match tools on the board, and warnings
    // are written in config order, all at once.
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("client `typo`"), "{}", warned[0]);
    Ok(())
}
