//! Code mode over stdio with rmcp's client and the real binary: each call a script makes writes
//! its own audit line marked `"via": "code"`, and the `run_code` request one more; cancelling a
//! `run_code` whose script spins ends it (its line says `cancelled`) and the session answers on;
//! cancelling one whose script awaits a call cancels that call at its server (the test server
//! hears it; the call's audit line says `cancelled`, from code); a script's calls count against
//! its client's `callsPerMinute` and are refused past it as plain calls are; the result cap
//! (`--max-result-tokens`) cuts a script's call's result as it cuts a plain call's; a script's
//! `Promise.all` runs `maxParallel` calls at once at the server, no more; code mode's
//! `search_tools` answers as search mode's, query for query.

mod common;

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// `pegboard serve --code-mode` on the demo servers in `dir`, its audit log on stderr: the
/// transport and the stderr lines as they come.
fn code_mode_gateway(
    dir: &std::path::Path,
) -> Result<(TokioChildProcess, tokio::sync::watch::Receiver<Vec<String>>)> {
    let config = common::write_demo_config(dir);
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args(["serve", "--code-mode", "--audit-log", "-", "--config"])
            .arg(&config);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    Ok((transport, common::collect_lines(stderr.context("stderr")?)))
}

#[tokio::test]
async fn each_inner_call_has_its_audit_line_and_the_run_one_more() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (transport, mut stderr) = code_mode_gateway(dir.path())?;
    let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .context("handshake")??;
    let code = r#"const a = await tools.units.convert({value: 1, from: "km", to: "mi"});
                  let failed = "";
                  try { await call("units-convert", {value: 1, from: "km", to: "parsec"}) } catch (e) { failed = e.tool }
                  return [a, failed]"#;
    let Value::Object(arguments) = json!({ "code": code }) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("run_code").with_arguments(arguments))
        .await?;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        result
            .structured_content
            .as_ref()
            .map(|s| s["result"].clone()),
        Some(json!(["1 km = 0.621371 mi", "units-convert"]))
    );
    client.cancel().await?;
    // The lines are written off the call path, the run's after its calls'.
    common::wait_for_line(&mut stderr, "\"name\":\"run_code\"").await?;
    let lines = common::audit_lines(&stderr.borrow());
    let summary: Vec<(String, String, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap_or_default().to_string(),
                l["outcome"].as_str().unwrap_or_default().to_string(),
                l["via"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("units-convert".into(), "ok".into(), json!("code")),
            ("units-convert".into(), "tool_error".into(), json!("code")),
            ("run_code".into(), "ok".into(), Value::Null),
        ],
        "{lines:?}"
    );
    Ok(())
}

/// A client that passes on every progress notification.
struct Progress(tokio::sync::mpsc::UnboundedSender<()>);

impl rmcp::ClientHandler for Progress {
    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn cancelling_run_code_stops_its_script() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (transport, mut stderr) = code_mode_gateway(dir.path())?;
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let client = tokio::time::timeout(Duration::from_secs(30), Progress(tx).serve(transport))
        .await
        .context("handshake")??;
    let request = run_code_request("await tools.units.list_units({});\nwhile (true) {}");
    let handle = client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await?;
    // The call's progress: the script is past it, spinning.
    tokio::time::timeout(Duration::from_secs(30), progress.recv())
        .await
        .context("progress of the script's call")?;
    handle.cancel(Some("enough".into())).await?;
    // The session answers on.
    let Value::Object(arguments) = json!({ "code": "return 6 * 7" }) else {
        unreachable!()
    };
    let next = client
        .call_tool(CallToolRequestParams::new("run_code").with_arguments(arguments))
        .await?;
    assert_eq!(
        next.structured_content
            .as_ref()
            .map(|s| s["result"].clone()),
        Some(json!(42))
    );
    client.cancel().await?;
    // Both runs' lines: the cancelled one's is written as its task sees the cancellation, which
    // may be after the next run has ended.
    common::wait_for_lines(&mut stderr, "\"name\":\"run_code\"", 2).await?;
    let mut outcomes: Vec<Value> = common::audit_lines(&stderr.borrow())
        .iter()
        .filter(|l| l["name"] == "run_code")
        .map(|l| l["outcome"].clone())
        .collect();
    outcomes.sort_by_key(Value::to_string);
    assert_eq!(outcomes, [json!("cancelled"), json!("ok")]);
    Ok(())
}

/// `search_tools` of each query on a gateway of the demo servers started with `flags`.
async fn searches(dir: &std::path::Path, flags: &[&str], queries: &[&str]) -> Result<Vec<Value>> {
    let config = common::observe::write_config(
        dir,
        json!({
            "notes": common::demo_server("notes", &[]),
            "units": common::demo_server("units", &[]),
            "docs": common::demo_server("docs", &[]),
        }),
    )?;
    let mut gateway = common::observe::Served::start(common::observe::Setup {
        front: common::observe::Front::Stdio,
        way: common::observe::Way::Express,
        config: &config,
        flags,
        env: &[],
    })
    .await?;
    let mut answers = Vec::new();
    for query in queries {
        let exchange = gateway
            .call("search_tools", json!({"query": query, "limit": 3}), None)
            .await?;
        answers.push(exchange.answer.context("an answer")?["result"].clone());
    }
    Ok(answers)
}

#[tokio::test]
async fn search_tools_answers_as_in_search_mode() -> Result<()> {
    let queries = [
        "convert units",
        "read a note",
        "search the documentation",
        "temperature",
    ];
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let code = searches(a.path(), &["--code-mode"], &queries).await?;
    let search = searches(b.path(), &["--tool-search", "on"], &queries).await?;
    assert_eq!(code, search);
    // Real answers, not two equal nothings.
    for answer in &code {
        let found = answer["structuredContent"]["tools"].as_array();
        assert!(found.is_some_and(|t| !t.is_empty()), "{answer}");
    }
    assert_eq!(
        code[0]["structuredContent"]["tools"][0]["name"],
        "units-convert"
    );
    Ok(())
}

#[tokio::test]
async fn cancelling_run_code_cancels_its_call_in_flight_at_the_server() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config =
        common::observe::write_config(dir.path(), json!({"t": common::demo_server("test", &[])}))?;
    // The test server's own log (through the gateway's stderr) says when its sleep starts and
    // when its client cancels it.
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args(["serve", "--code-mode", "--audit-log", "-", "--config"])
            .arg(&config)
            .env(
                "RUST_LOG",
                "warn,pegboard::server_stderr=debug,demo_servers=info",
            );
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = common::collect_lines(stderr.context("stderr")?);
    let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .context("handshake")??;
    let request = run_code_request("await tools.t.sleep({ms: 60000});\nreturn 'slept'");
    let handle = client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await?;
    common::wait_for_line(&mut stderr, "sleep started").await?;
    handle.cancel(Some("enough".into())).await?;
    common::wait_for_line(&mut stderr, "sleep cancelled by the client").await?;
    common::wait_for_line(&mut stderr, "\"name\":\"run_code\"").await?;
    client.cancel().await?;
    let lines = common::audit_lines(&stderr.borrow());
    let summary: Vec<(Value, Value, Value)> = lines
        .iter()
        .map(|l| (l["name"].clone(), l["outcome"].clone(), l["via"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (json!("t-sleep"), json!("cancelled"), json!("code")),
            (json!("run_code"), json!("cancelled"), Value::Null),
        ],
        "{lines:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_scripts_calls_count_against_its_clients_limits() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({
            "mcpServers": {"units": common::demo_server("units", &[])},
            "clients": {"limited": {"token": "limited-token-0123456789", "callsPerMinute": 3}},
        })
        .to_string(),
    )?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args([
            "serve",
            "--code-mode",
            "--client",
            "limited",
            "--audit-log",
            "-",
            "--config",
        ])
        .arg(&config);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = common::collect_lines(stderr.context("stderr")?);
    let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .context("handshake")??;
    let code = r#"const out = [];
                  for (let v = 1; v <= 5; v++) {
                    try { await tools.units.convert({value: v, from: "km", to: "mi"}); out.push("ok") }
                    catch (e) { out.push(e.message) }
                  }
                  return out"#;
    let Value::Object(arguments) = json!({ "code": code }) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("run_code").with_arguments(arguments))
        .await?;
    let out = result
        .structured_content
        .as_ref()
        .map(|s| s["result"].clone())
        .context("a result")?;
    let out: Vec<&str> = out
        .as_array()
        .context("a list")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(out[..3], ["ok", "ok", "ok"], "{out:?}");
    for refused in &out[3..] {
        assert!(
            refused.contains("limited") && refused.contains("callsPerMinute"),
            "{out:?}"
        );
    }
    // The same refusal a plain call gets now.
    let Value::Object(arguments) = json!({"value": 6, "from": "km", "to": "mi"}) else {
        unreachable!()
    };
    let plain = client
        .call_tool(CallToolRequestParams::new("units-convert").with_arguments(arguments))
        .await;
    let plain = match plain {
        Ok(result) => format!("{:?}", result.content),
        Err(e) => e.to_string(),
    };
    assert!(
        plain.contains(out[3]),
        "plain: {plain} / script: {}",
        out[3]
    );
    client.cancel().await?;
    common::wait_for_line(&mut stderr, "\"name\":\"run_code\"").await?;
    let outcomes: Vec<(Value, Value)> = common::audit_lines(&stderr.borrow())
        .iter()
        .filter(|l| l["name"] == "units-convert" && l["via"] == "code")
        .map(|l| (l["outcome"].clone(), l["client"].clone()))
        .collect();
    let want: Vec<(Value, Value)> = ["ok", "ok", "ok", "denied", "denied"]
        .iter()
        .map(|o| (json!(o), json!("limited")))
        .collect();
    assert_eq!(outcomes, want);
    Ok(())
}

#[tokio::test]
async fn the_result_cap_cuts_a_scripts_call_as_a_plain_one() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config =
        common::observe::write_config(dir.path(), json!({"t": common::demo_server("test", &[])}))?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args([
            "serve",
            "--code-mode",
            "--max-result-tokens",
            "100",
            "--config",
        ])
        .arg(&config);
    });
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        ().serve(TokioChildProcess::new(cmd)?),
    )
    .await
    .context("handshake")??;
    let long = "word ".repeat(2000);
    let Value::Object(arguments) = json!({ "text": long }) else {
        unreachable!()
    };
    let plain = client
        .call_tool(CallToolRequestParams::new("t-echo").with_arguments(arguments))
        .await?;
    let plain: Vec<&str> = plain
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let plain = plain.join("\n");
    assert!(
        plain.len() < long.len() / 2,
        "capped: {} bytes",
        plain.len()
    );
    let Value::Object(arguments) =
        json!({ "code": "return await call('t-echo', {text: 'word '.repeat(2000)})" })
    else {
        unreachable!()
    };
    let ran = client
        .call_tool(CallToolRequestParams::new("run_code").with_arguments(arguments))
        .await?;
    let got = ran
        .structured_content
        .as_ref()
        .map(|s| s["result"].clone())
        .context("a result")?;
    assert_eq!(got, json!(plain));
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn promise_all_runs_max_parallel_calls_at_once_at_the_server() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({
            "mcpServers": {"t": common::demo_server("test", &[])},
            "codeMode": {"maxParallel": 2},
        })
        .to_string(),
    )?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.args(["serve", "--config"]).arg(&config).env(
            "RUST_LOG",
            "warn,pegboard::server_stderr=debug,demo_servers=info",
        );
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = common::collect_lines(stderr.context("stderr")?);
    let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .context("handshake")??;
    let code =
        "return await Promise.all([1, 2, 3, 4, 5, 6].map(() => call('t-sleep', {ms: 1000})))";
    let Value::Object(arguments) = json!({ "code": code }) else {
        unreachable!()
    };
    let ran = client
        .call_tool(CallToolRequestParams::new("run_code").with_arguments(arguments))
        .await?;
    let result = ran.structured_content.as_ref().map(|s| s["result"].clone());
    assert_eq!(result, Some(json!(vec!["slept 1000 ms"; 6])), "{ran:?}");
    common::wait_for_lines(&mut stderr, "sleep finished", 6).await?;
    client.cancel().await?;
    // The server's own log, in its order: how many sleeps were under way at each step.
    let (mut now, mut most, mut started) = (0_i32, 0, 0);
    for line in stderr.borrow().iter() {
        if line.contains("sleep started") {
            (now, started) = (now + 1, started + 1);
            most = most.max(now);
        } else if line.contains("sleep finished") {
            now -= 1;
        }
    }
    assert_eq!((started, most), (6, 2));
    Ok(())
}

/// A `tools/call` of `run_code` with `code`, to send as a cancellable request.
fn run_code_request(code: &str) -> rmcp::model::ClientRequest {
    let mut arguments = serde_json::Map::new();
    arguments.insert("code".into(), Value::String(code.into()));
    rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("run_code").with_arguments(arguments),
    ))
}
