//! Real third-party MCP servers BEHIND the gateway: the reference `server-everything` (npm,
//! TypeScript SDK) and `mcp-server-time` (PyPI, Python SDK), next to a bundled demo server.
//!
//! They are installed by `scripts/setup-test-deps.sh` into `<workspace>/target/test-deps` (or
//! `$PEGBOARD_TEST_DEPS`); when they are missing these tests fail and say so.

mod common;

use common::test_deps;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// Generous: `npm` servers and the Python SDK take a few seconds to start on a busy machine.
const STEP: Duration = Duration::from_secs(60);

/// A file under the test deps that must exist; panics with the setup hint otherwise.
fn dep(relative: &str) -> PathBuf {
    let path = test_deps().join(relative);
    assert!(
        path.exists(),
        "missing third-party test dependency {}: run `scripts/setup-test-deps.sh` \
         (or point PEGBOARD_TEST_DEPS at an installed copy)",
        path.display()
    );
    path
}

/// everything (npm), time (PyPI, pinned to UTC) and the bundled units demo server.
fn write_interop_config(dir: &Path) -> PathBuf {
    let everything = dep("node/node_modules/.bin/mcp-server-everything");
    let time = dep("venv/bin/mcp-server-time");
    let config = json!({
        "mcpServers": {
            "everything": {"command": everything, "args": ["stdio"]},
            "time": {"command": time, "args": ["--local-timezone", "UTC"]},
            "units": common::demo_server("units", &[])
        }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

async fn connect(config: &Path) -> Result<RunningService<RoleClient, ()>> {
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve")
            .arg("--config")
            .arg(config)
            .kill_on_drop(true);
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    tokio::time::timeout(STEP, ().serve(transport))
        .await
        .context("handshake with the gateway timed out")?
        .context("handshake with the gateway failed")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> Result<CallToolResult> {
    let Value::Object(args) = args else {
        anyhow::bail!("arguments must be an object")
    };
    tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args)),
    )
    .await
    .with_context(|| format!("{name} timed out"))?
    .with_context(|| format!("{name} failed"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A time tool's JSON answer: its structured content, or else its text parsed as JSON.
fn json_of(result: &CallToolResult) -> Value {
    let text = text_of(result);
    let from_text: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the time server's text is not JSON ({e}): {text}"));
    if let Some(structured) = &result.structured_content {
        assert_eq!(
            structured, &from_text,
            "structuredContent and the text block disagree"
        );
    }
    from_text
}

/// UTC calendar date `days` days since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Today and yesterday (UTC) as `YYYY-MM-DD`, from the system clock.
fn utc_today_and_yesterday() -> [String; 2] {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let days = i64::try_from(secs / 86_400).expect("days fit i64");
    [civil_from_days(days), civil_from_days(days - 1)]
}

#[test]
fn civil_from_days_is_right() {
    assert_eq!(civil_from_days(0), "1970-01-01");
    assert_eq!(civil_from_days(11_016), "2000-02-29");
    assert_eq!(civil_from_days(19_723), "2024-01-01");
    assert_eq!(civil_from_days(20_513), "2026-03-01");
}

#[tokio::test]
async fn third_party_servers_behind_the_gateway_list_and_call() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_interop_config(dir.path());
    let client = connect(&config).await?;

    let tools = tokio::time::timeout(STEP, client.list_all_tools()).await??;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "everything-echo",
        "everything-get-sum",
        "time-get_current_time",
        "time-convert_time",
        "units-convert",
    ] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    // Nothing unprefixed leaks through, and every tool names its namespace in `_meta`.
    for tool in &tools {
        let ns = tool
            .meta
            .as_ref()
            .and_then(|m| m.0.get("pegboard/namespace"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{} has no pegboard/namespace: {:?}", tool.name, tool.meta));
        assert!(
            ["everything", "time", "units"].contains(&ns),
            "{}: namespace {ns}",
            tool.name
        );
        assert!(
            tool.name.starts_with(&format!("{ns}-")),
            "{} is not prefixed by its namespace {ns}",
            tool.name
        );
    }
    // The third-party schemas come through: echo's `message` argument, time's output schema.
    let echo = tools.iter().find(|t| t.name == "everything-echo").unwrap();
    assert_eq!(
        echo.input_schema.get("required"),
        Some(&json!(["message"])),
        "{:?}",
        echo.input_schema
    );
    let now = tools
        .iter()
        .find(|t| t.name == "time-get_current_time")
        .unwrap();
    assert!(
        now.output_schema.as_ref().is_some_and(|s| s
            .get("properties")
            .and_then(|p| p.get("datetime"))
            .is_some()),
        "time-get_current_time lost its outputSchema: {:?}",
        now.output_schema
    );

    // everything (TypeScript SDK): the real echo.
    let echoed = call(
        &client,
        "everything-echo",
        json!({"message": "hello from pegboard"}),
    )
    .await?;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert_eq!(text_of(&echoed), "Echo: hello from pegboard");
    let sum = call(&client, "everything-get-sum", json!({"a": 19, "b": 23})).await?;
    assert_ne!(sum.is_error, Some(true), "{sum:?}");
    assert!(text_of(&sum).contains("42"), "{}", text_of(&sum));

    // time (Python SDK): the current time in UTC is today's (or, just past midnight, yesterday's).
    let current = call(&client, "time-get_current_time", json!({"timezone": "UTC"})).await?;
    assert_ne!(current.is_error, Some(true), "{current:?}");
    let current = json_of(&current);
    assert_eq!(current["timezone"], "UTC", "{current}");
    let datetime = current["datetime"].as_str().context("datetime")?;
    let [today, yesterday] = utc_today_and_yesterday();
    assert!(
        datetime.starts_with(&today) || datetime.starts_with(&yesterday),
        "{datetime} is neither {today} nor {yesterday}"
    );
    assert!(datetime.ends_with("+00:00"), "{datetime}");

    // A fixed conversion: noon UTC is 21:00 in Tokyo (no DST there).
    let converted = call(
        &client,
        "time-convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    )
    .await?;
    assert_ne!(converted.is_error, Some(true), "{converted:?}");
    let converted = json_of(&converted);
    let target = converted["target"]["datetime"]
        .as_str()
        .context("target.datetime")?;
    assert!(target.ends_with("T21:00:00+09:00"), "{converted}");
    assert_eq!(converted["source"]["timezone"], "UTC");
    assert_eq!(converted["target"]["timezone"], "Asia/Tokyo");
    assert_eq!(converted["time_difference"], "+9.0h", "{converted}");

    // The demo server still answers next to them.
    let units = call(
        &client,
        "units-convert",
        json!({"value": 10, "from": "km", "to": "mi"}),
    )
    .await?;
    assert!(text_of(&units).contains("6.213712"), "{units:?}");

    tokio::time::timeout(STEP, client.cancel()).await??;
    Ok(())
}

#[tokio::test]
async fn third_party_tool_errors_come_back_and_the_gateway_keeps_answering() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_interop_config(dir.path());
    let client = connect(&config).await?;

    // mcp-server-time raises a ToolError: an `isError` result carrying its message.
    let args = json!({"timezone": "Mars/Olympus_Mons"});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let outcome = tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new("time-get_current_time").with_arguments(args)),
    )
    .await?;
    let message = match outcome {
        Ok(result) => {
            assert_eq!(result.is_error, Some(true), "{result:?}");
            text_of(&result)
        }
        Err(rmcp::ServiceError::McpError(error)) => error.message.to_string(),
        Err(other) => panic!("not a tool error but {other:?}"),
    };
    assert!(
        message.contains("Invalid timezone") && message.contains("Mars/Olympus_Mons"),
        "the server's message was lost: {message}"
    );

    // The time server rejects a malformed time with its own message too.
    let bad_time = call(
        &client,
        "time-convert_time",
        json!({"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"}),
    )
    .await?;
    assert_eq!(bad_time.is_error, Some(true), "{bad_time:?}");
    assert!(
        text_of(&bad_time).contains("Invalid time format"),
        "{}",
        text_of(&bad_time)
    );

    // everything rejects a wrongly typed argument: isError or a JSON-RPC error, not a hang.
    let args = json!({"message": 42});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let bad_echo = tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new("everything-echo").with_arguments(args)),
    )
    .await?;
    match bad_echo {
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Err(rmcp::ServiceError::McpError(error)) => {
            assert!(!error.message.is_empty(), "{error:?}");
        }
        Err(other) => panic!("not a tool error but {other:?}"),
    }

    // Afterwards both servers (and the gateway) still answer.
    let current = call(&client, "time-get_current_time", json!({"timezone": "UTC"})).await?;
    assert_ne!(current.is_error, Some(true), "{current:?}");
    assert_eq!(json_of(&current)["timezone"], "UTC");
    let echoed = call(&client, "everything-echo", json!({"message": "still here"})).await?;
    assert_eq!(text_of(&echoed), "Echo: still here");
    let tools = tokio::time::timeout(STEP, client.list_all_tools()).await??;
    assert!(tools.iter().any(|t| t.name == "time-convert_time"));

    tokio::time::timeout(STEP, client.cancel()).await??;
    Ok(())
}

#[tokio::test]
async fn tools_json_lists_the_third_party_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = write_interop_config(dir.path());
    let child = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--format", "json", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn pegboard tools");
    // Bounded: on timeout the child is dropped, which kills it.
    let out = tokio::time::timeout(STEP, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("`pegboard tools` did not finish within {STEP:?}"))
        .expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", out.status);
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not a JSON array ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names.len(), tools.len(), "a tool without a name: {tools:?}");
    for expected in [
        "everything-echo",
        "everything-get-sum",
        "time-get_current_time",
        "time-convert_time",
        "units-convert",
    ] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    let echo = tools
        .iter()
        .find(|t| t["name"] == "everything-echo")
        .unwrap();
    assert_eq!(
        echo["inputSchema"]["required"],
        json!(["message"]),
        "{echo}"
    );
    // The progress lines name each server.
    for server in ["everything", "time", "units"] {
        assert!(stderr.contains(server), "{server} not in stderr: {stderr}");
    }
}
