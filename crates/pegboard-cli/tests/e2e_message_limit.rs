//! A stdio server's message over `--max-message-mib` (default 8 MiB) fails its request at once with
//! an error naming the server and the limit, instead of the request waiting out its timeout; the
//! gateway keeps serving; a raised limit lets the message through.
//!
//! Every call here is allowed 60 s: an error that comes back at all (well before that) is the proof
//! that nothing waited for a timeout.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// Just over the default limit.
const OVER_DEFAULT: usize = 9 * 1024 * 1024;
/// Longer than any call here may take: reaching it means the limit did not work.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A config with the test server `t` (with the `huge` tool and `huge_list` bytes of listing) and
/// the units demo server.
fn write_config(dir: &Path, huge_list: usize) -> Result<PathBuf> {
    let huge_list = huge_list.to_string();
    let mut test = common::demo_server("test", &["--huge-tool", "--huge-list", &huge_list]);
    test["timeout"] = json!(CALL_TIMEOUT.as_secs());
    let config = json!({"mcpServers": {"t": test, "units": common::demo_server("units", &[])}});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

fn assert_names_limit(message: &str, limit: &str) {
    assert!(
        message.contains("server `t` sent a message of more than")
            && message.contains(limit)
            && message.contains("--max-message-mib"),
        "the error must name the server, the limit ({limit}) and the flag: {message}"
    );
}

async fn pegboard(args: &[&str], config: &Path) -> Result<std::process::Output> {
    let run = tokio::process::Command::new(common::pegboard())
        .args(args)
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(CALL_TIMEOUT, run)
        .await
        .context("pegboard waited for a timeout")?
        .map_err(Into::into)
}

#[tokio::test]
async fn serve_fails_a_huge_result_at_once_and_keeps_serving() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), 1)?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve").arg("--config").arg(&config);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let client =
        tokio::time::timeout(Duration::from_secs(30), ().into_dyn().serve(transport)).await??;

    let huge = CallToolRequestParams::new("t-huge").with_arguments(
        json!({"bytes": OVER_DEFAULT})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let message = match tokio::time::timeout(CALL_TIMEOUT, client.call_tool(huge))
        .await
        .context("the huge call waited for its timeout")?
    {
        Ok(result) if result.is_error == Some(true) => common::first_text(&result),
        Ok(_) => bail!("a result over the limit came through"),
        Err(e) => e.to_string(),
    };
    assert_names_limit(&message, "8 MiB");
    assert!(!message.contains("timed out"), "{message}");

    // The same server, and the others, keep answering.
    for (tool, args, expected) in [
        ("t-echo", json!({"text": "still here"}), "still here"),
        (
            "units-convert",
            json!({"value": 1, "from": "km", "to": "m"}),
            "1 km = 1000 m",
        ),
    ] {
        let Value::Object(args) = args else {
            bail!("object expected")
        };
        let r = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await?;
        assert_eq!(common::first_text(&r), expected);
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn call_names_the_limit_and_a_raised_limit_lets_the_result_through() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), 1)?;
    let args = json!({"bytes": OVER_DEFAULT}).to_string();

    let out = pegboard(&["call", "t-huge", &args, "--timeout", "60"], &config).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_names_limit(&stderr, "8 MiB");

    let small = pegboard(
        &[
            "call",
            "t-huge",
            &args,
            "--max-message-mib",
            "4",
            "--timeout",
            "60",
        ],
        &config,
    )
    .await?;
    assert_names_limit(&String::from_utf8_lossy(&small.stderr), "4 MiB");

    let raised = pegboard(
        &[
            "call",
            "t-huge",
            &args,
            "--max-message-mib",
            "16",
            "--timeout",
            "60",
        ],
        &config,
    )
    .await?;
    assert!(
        raised.status.success(),
        "{}",
        String::from_utf8_lossy(&raised.stderr)
    );
    let text = String::from_utf8_lossy(&raised.stdout);
    assert_eq!(text.trim_end().len(), OVER_DEFAULT);
    assert!(text.trim_end().bytes().all(|b| b == b'x'));
    Ok(())
}

#[tokio::test]
async fn a_huge_tools_list_page_fails_that_server_only() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), OVER_DEFAULT)?;

    let out = pegboard(&["tools", "--format", "json"], &config).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_names_limit(&stderr, "8 MiB");
    let tools: Value = serde_json::from_slice(&out.stdout)?;
    let names: Vec<&str> = tools
        .as_array()
        .context("a JSON array")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"units-convert"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("t-")), "{names:?}");

    let raised = pegboard(
        &["tools", "--format", "json", "--max-message-mib", "16"],
        &config,
    )
    .await?;
    let tools: Value = serde_json::from_slice(&raised.stdout)?;
    assert!(
        tools
            .as_array()
            .context("a JSON array")?
            .iter()
            .any(|t| t["name"] == "t-huge_listing"),
        "{}",
        String::from_utf8_lossy(&raised.stderr)
    );
    Ok(())
}

/// An HTTP server's oversized answer, sent as an SSE event (stateful) or a JSON body (stateless),
/// fails the same way. The HTTP server here is another gateway, with a raised limit of its own,
/// in front of the test server.
#[tokio::test]
async fn http_servers_get_the_same_limit() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let inner = write_config(dir.path(), 1)?;
    let args = json!({"bytes": OVER_DEFAULT}).to_string();
    for mode in [&[][..], &["--stateless"][..]] {
        let mut extra = vec!["--max-message-mib", "32"];
        extra.extend_from_slice(mode);
        let (mut upstream, url) = common::serve_http(&inner, &extra, &[]).await?;
        let outer = dir.path().join("outer.json");
        std::fs::write(
            &outer,
            json!({"mcpServers": {"gw": {"url": url, "timeout": CALL_TIMEOUT.as_secs()}}})
                .to_string(),
        )?;

        let out = pegboard(&["call", "gw-t-huge", &args], &outer).await?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{mode:?}: {stderr}");
        assert!(
            stderr.contains("server `gw` sent a message of more than 8 MiB"),
            "{mode:?}: {stderr}"
        );

        let raised = pegboard(
            &["call", "gw-t-huge", &args, "--max-message-mib", "16"],
            &outer,
        )
        .await?;
        assert!(
            raised.status.success(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&raised.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&raised.stdout).trim_end().len(),
            OVER_DEFAULT
        );
        upstream.kill().await?;
    }
    Ok(())
}

/// A server's own `maxMessageMib` wins over the command line's limit.
#[tokio::test]
async fn a_server_entry_sets_its_own_limit() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut test = common::demo_server("test", &["--huge-tool"]);
    test["maxMessageMib"] = json!(16);
    let config = dir.path().join("pegboard.json");
    std::fs::write(&config, json!({"mcpServers": {"t": test}}).to_string())?;
    let args = json!({"bytes": OVER_DEFAULT}).to_string();
    let out = pegboard(
        &["call", "t-huge", &args, "--max-message-mib", "4"],
        &config,
    )
    .await?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end().len(),
        OVER_DEFAULT
    );
    Ok(())
}
