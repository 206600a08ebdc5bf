//! Code mode over stdio with rmcp's client and the real binary: each call a script makes writes
//! its own audit line marked `"via": "code"`, and the `run_code` request one more; cancelling a
//! `run_code` whose script spins ends it (its line says `cancelled`) and the session answers on.

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
    let Value::Object(arguments) =
        json!({ "code": "await tools.units.list_units({});\nwhile (true) {}" })
    else {
        unreachable!()
    };
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("run_code").with_arguments(arguments),
    ));
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
    common::wait_for_line(&mut stderr, "\"name\":\"run_code\"").await?;
    let outcome = common::audit_lines(&stderr.borrow())
        .iter()
        .find(|l| l["name"] == "run_code")
        .map(|l| l["outcome"].clone());
    assert_eq!(outcome, Some(json!("cancelled")));
    Ok(())
}
