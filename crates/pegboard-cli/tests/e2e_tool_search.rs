//! Tool search end to end: `pegboard serve --tool-search on` over stdio and HTTP with rmcp's
//! client and the official Python SDK (find a tool with `search_tools`, call it with
//! `call_tool`), `pegboard search`, and `pegboard tools --defer-loading`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{DynService, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        unreachable!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(arguments)
}

/// List (only the meta-tools), search, call what was found: the whole loop a model runs.
async fn find_and_call(client: &Client) -> Result<()> {
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search_tools", "call_tool"]);
    let description = tools[0].description.as_deref().unwrap_or_default();
    assert!(description.contains("- units ("), "{description}");

    let found = client
        .call_tool(call(
            "search_tools",
            json!({"query": "convert kilometres to miles"}),
        ))
        .await?;
    let structured = found.structured_content.context("no structuredContent")?;
    let first = structured["tools"][0]["name"]
        .as_str()
        .context("no tool found")?;
    assert_eq!(first, "units-convert", "{structured}");

    let args = json!({"name": first, "arguments": {"value": 10, "from": "km", "to": "mi"}});
    let result = client.call_tool(call("call_tool", args)).await?;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(
        common::first_text(&result).contains("6.213712"),
        "{result:?}"
    );
    Ok(())
}

#[tokio::test]
async fn stdio_client_finds_and_calls_through_the_meta_tools() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args(["serve", "--tool-search", "on", "--config"])
            .arg(&config);
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let client = tokio::time::timeout(Duration::from_secs(30), ().into_dyn().serve(transport))
        .await
        .context("handshake timed out")??;
    find_and_call(&client).await?;
    client.cancel().await?;
    Ok(())
}

/// `pegboard serve --http 127.0.0.1:0` with search mode from the config file's `toolSearch`.
async fn spawn_http(dir: &Path) -> Result<(tokio::process::Child, String)> {
    let config = dir.join("pegboard.json");
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(common::write_demo_config(dir))?)?;
    json["toolSearch"] = json!({"mode": "auto", "threshold": 1});
    std::fs::write(&config, json.to_string())?;
    common::serve_http(&config, &[], &[]).await
}

#[tokio::test]
async fn http_client_finds_and_calls_with_tool_search_from_the_config() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let (mut child, url) = spawn_http(dir.path()).await?;
    let client = ().into_dyn().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await?;
    find_and_call(&client).await?;
    client.cancel().await?;
    child.start_kill()?;
    child.wait().await?;
    Ok(())
}

#[tokio::test]
async fn official_python_client_finds_and_calls_through_the_meta_tools() -> Result<()> {
    let deps = match std::env::var_os("PEGBOARD_TEST_DEPS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"),
    };
    let python = deps.join("venv/bin/python");
    assert!(
        python.exists(),
        "missing {}: run scripts/setup-test-deps.sh",
        python.display()
    );
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/search_client.py");
    let run = tokio::process::Command::new(python)
        .arg(script)
        .arg(common::pegboard())
        .arg(&config)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), run).await??;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "search_client.py failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .context("no output")?;
    let json: Value = serde_json::from_str(line)?;
    assert_eq!(
        json["listed"],
        json!(["search_tools", "call_tool"]),
        "{json}"
    );
    assert_eq!(json["found"][0], "units-convert", "{json}");
    assert_eq!(json["is_error"], false, "{json}");
    assert!(
        json["result_text"]
            .as_str()
            .unwrap_or_default()
            .contains("6.213712"),
        "{json}"
    );
    Ok(())
}

fn pegboard_cli(args: &[&str], config: &Path) -> Result<std::process::Output> {
    Ok(std::process::Command::new(common::pegboard())
        .args(args)
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .output()?)
}

#[test]
fn pegboard_search_prints_the_best_tools_and_json() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let out = pegboard_cli(
        &[
            "search", "--json", "--limit", "2", "convert", "km", "to", "miles",
        ],
        &config,
    )?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout)?;
    let tools = json["tools"].as_array().context("tools")?;
    assert!((1..=2).contains(&tools.len()), "{json}");
    assert_eq!(tools[0]["name"], "units-convert");
    assert!(
        tools[0]["score"].as_f64().is_some_and(|s| s > 0.0),
        "{json}"
    );

    let table = pegboard_cli(&["search", "notes-search"], &config)?;
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.starts_with(" 1. notes-search") && text.contains("exact"),
        "{text}"
    );

    let blank = pegboard_cli(&["search", "  "], &config)?;
    assert!(!blank.status.success());
    assert!(String::from_utf8_lossy(&blank.stderr).contains("the query is empty"));
    Ok(())
}

#[test]
fn pegboard_tools_defer_loading_marks_every_tool() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let out = pegboard_cli(
        &["tools", "--format", "anthropic", "--defer-loading"],
        &config,
    )?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout)?;
    let tools = json.as_array().context("array")?;
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t["defer_loading"] == true), "{json}");
    Ok(())
}
