//! Code mode with the OFFICIAL TypeScript SDK (`@modelcontextprotocol/sdk` 1.x) as the client,
//! over stdio and streamable HTTP, with and without `--no-express`: scripts that chain, loop,
//! branch, run calls in parallel and catch a failing call answer what the same calls made one by
//! one answer. The client is `tests/clients/ts/code_mode.mjs`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

async fn client(args: &[&str]) -> Result<Value> {
    let modules = common::installed(common::test_deps().join("node/node_modules"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts/code_mode.mjs");
    let child = tokio::process::Command::new("node")
        .arg(script)
        .arg(modules)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn node")?;
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .context("code_mode.mjs did not finish")??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "code_mode.mjs {args:?} failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let line = stdout.lines().last().context("no output")?;
    Ok(serde_json::from_str(line)?)
}

fn check(out: &Value) {
    assert_eq!(
        out["tools"],
        json!(["search_tools", "describe_tools", "run_code"]),
        "{out}"
    );
    for name in ["chain", "loop", "branch", "parallel", "failing"] {
        let scenario = &out["scenarios"][name];
        assert_eq!(scenario["code"], scenario["direct"], "{name}: {scenario}");
    }
    assert!(
        out["scenarios"]["chain"]["direct"][0]
            .as_str()
            .unwrap()
            .contains("6.213712 mi")
    );
    assert_eq!(out["scenarios"]["failing"]["direct"][0], "ToolError");
}

async fn stdio(extra: &[&str]) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let pegboard = common::pegboard();
    let mut args = vec![
        "stdio",
        pegboard.to_str().context("utf-8")?,
        config.to_str().context("utf-8")?,
        "--code-mode",
    ];
    args.extend_from_slice(extra);
    check(&client(&args).await?);
    Ok(())
}

async fn http(extra: &[&str]) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let mut serve = vec!["--code-mode"];
    serve.extend_from_slice(extra);
    let (mut child, url) = common::serve_http(&config, &serve, &[]).await?;
    let out = client(&["http", &url]).await;
    common::terminate(&mut child).await?;
    check(&out?);
    Ok(())
}

#[tokio::test]
async fn ts_stdio_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    stdio(&[]).await
}

#[tokio::test]
async fn ts_stdio_no_express_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    stdio(&["--no-express"]).await
}

#[tokio::test]
async fn ts_http_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    http(&[]).await
}

#[tokio::test]
async fn ts_http_no_express_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    http(&["--no-express"]).await
}
