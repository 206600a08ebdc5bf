//! Code mode's calls in the gateway's telemetry, through the real `pegboard serve --code-mode`
//! over stdio and HTTP: `/metrics` counts a script's calls with `pegboard_caller="code"` (apart
//! from the same tool's plain calls, which carry no such label) and the `run_code` request as
//! its own series; the OTLP receiver of `e2e_traces` gets a SERVER span `tools/call run_code`
//! (in the client's trace when it sent one, a trace of its own when not) whose children are
//! the script's calls' SERVER spans, each with its CLIENT span to the server; with a
//! `progressToken`, `run_code` reports each finished call in order.

mod common;

#[path = "../../pegboard-gateway/tests/telemetry_support/mod.rs"]
mod telemetry_support;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use common::observe::{Front, Served, Setup, Way, sample, write_config};
use telemetry_support::{PATIENCE, Receiver};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
const KIND_SERVER: i64 = 2;
const KIND_CLIENT: i64 = 3;
const OPS: &str = "mcp_server_operation_duration_seconds_count";
const UPSTREAM_OPS: &str = "mcp_client_operation_duration_seconds_count";

/// Two calls at once, then one that fails (caught): three calls from code.
const SCRIPT: &str = r#"const [a, b] = await Promise.all([
  tools.units.convert({value: 1, from: "km", to: "mi"}),
  call("units-convert", {value: 2, from: "km", to: "mi"}),
]);
let failed = "";
try { await tools.units.convert({value: 1, from: "km", to: "kg"}) } catch (e) { failed = e.tool }
return {a, b, failed};"#;

async fn gateway(dir: &std::path::Path, front: Front, env: &[(&str, &str)]) -> Result<Served> {
    let config = write_config(dir, json!({"units": common::demo_server("units", &[])}))?;
    Served::start(Setup {
        front,
        way: Way::Express,
        config: &config,
        flags: &["--code-mode"],
        env,
    })
    .await
}

/// `run_code` of `code` with `meta` as its `_meta`: its `structuredContent` and the messages
/// before its answer.
async fn run(gateway: &mut Served, code: &str, meta: Option<Value>) -> Result<(Value, Vec<Value>)> {
    let exchange = gateway
        .call("run_code", json!({"code": code}), meta)
        .await?;
    let answer = exchange.answer.context("run_code got no answer")?;
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    Ok((result["structuredContent"].clone(), exchange.before))
}

fn check_result(structured: &Value) {
    assert_eq!(
        structured["result"],
        json!({"a": "1 km = 0.621371 mi", "b": "2 km = 1.242742 mi", "failed": "units-convert"}),
        "{structured}"
    );
}

async fn metrics_on(front: Front) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut gateway = gateway(dir.path(), front, &[]).await?;
    let (structured, _) = run(&mut gateway, SCRIPT, None).await?;
    check_result(&structured);
    // One plain call of the same tool: the client's own, no `pegboard_caller`.
    let plain = gateway
        .call(
            "units-convert",
            json!({"value": 3, "from": "km", "to": "mi"}),
            None,
        )
        .await?;
    assert_eq!(
        plain.answer.context("an answer")?["result"]["isError"],
        false
    );
    let text = gateway.metrics_text().await?;
    let tool = ("gen_ai_tool_name", "units-convert");
    let code = ("pegboard_caller", "code");
    let (ok, failed) = (("error_type", ""), ("error_type", "tool_error"));
    let counts = [
        sample(&text, OPS, &[tool, code, ok]),
        sample(&text, OPS, &[tool, code, failed]),
        sample(&text, OPS, &[tool, ok]),
        sample(&text, OPS, &[tool, failed]),
        sample(&text, OPS, &[("gen_ai_tool_name", "run_code"), ok]),
        sample(&text, OPS, &[("gen_ai_tool_name", "run_code"), code]),
        sample(&text, UPSTREAM_OPS, &[("gen_ai_tool_name", "convert")]),
    ];
    // Code: 2 ok, 1 tool_error; with the plain call, 3 ok in all; `run_code` once, as the
    // client's; four requests reached the server.
    assert_eq!(
        counts,
        [2.0, 1.0, 3.0, 1.0, 1.0, 0.0, 4.0],
        "{front:?}:\n{text}"
    );
    let plain_series = format!(
        r#"{OPS}{{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="",pegboard_server="units",pegboard_client="default"}} 1"#
    );
    assert!(
        text.lines().any(|l| l == plain_series),
        "the plain call's series has no pegboard_caller: {front:?}:\n{text}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_calls_are_counted_as_from_code_over_stdio_and_http() -> Result<()> {
    tokio::try_join!(metrics_on(Front::Stdio), metrics_on(Front::Http))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_code_reports_each_finished_call_as_progress() -> Result<()> {
    for front in [Front::Stdio, Front::Http] {
        let dir = tempfile::tempdir()?;
        let mut gateway = gateway(dir.path(), front, &[]).await?;
        let code = r#"for (const value of [1, 2, 3]) await tools.units.convert({value, from: "km", to: "mi"});
                      try { await call("units-convert", {value: 1, from: "km", to: "kg"}) } catch {}
                      return "done""#;
        let (structured, before) =
            run(&mut gateway, code, Some(json!({"progressToken": "run-1"}))).await?;
        assert_eq!(structured["result"], "done");
        let progress: Vec<(Value, Value, String)> = before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| {
                let p = &m["params"];
                let message = p["message"].as_str().unwrap_or_default();
                // "units-convert ok (N ms)": the time varies.
                let kept = message.split(" (").next().unwrap_or_default().to_string();
                (p["progressToken"].clone(), p["progress"].clone(), kept)
            })
            .collect();
        let want: Vec<(Value, Value, String)> = [
            (1, "units-convert ok"),
            (2, "units-convert ok"),
            (3, "units-convert ok"),
            (4, "units-convert failed"),
        ]
        .into_iter()
        .map(|(n, m)| (json!("run-1"), json!(f64::from(n)), m.to_string()))
        .collect();
        assert_eq!(progress, want, "{front:?}: {before:#?}");
    }
    Ok(())
}

/// The environment that makes the gateway export to `receiver` over `protocol`.
fn export_env(receiver: &Receiver, protocol: &str) -> Vec<(String, String)> {
    vec![
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
            format!("http://127.0.0.1:{}", receiver.port),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL".into(), protocol.into()),
        ("OTEL_SERVICE_NAME".into(), "pegboard-e2e".into()),
        ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
    ]
}

fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["parent_span_id"] == *parent)
        .collect()
}

/// The `run_code` span of the trace `trace` (any, when `None`), once it and all its
/// descendants (3 calls, each with its upstream request) have arrived.
fn run_tree(spans: &[Value], trace: Option<&str>) -> Option<(Value, Vec<(Value, Value)>)> {
    let run = spans
        .iter()
        .find(|s| s["name"] == "tools/call run_code" && trace.is_none_or(|t| s["trace_id"] == t))?;
    let calls: Vec<(Value, Value)> = children(spans, &run["span_id"])
        .into_iter()
        .filter_map(|call| {
            let upstream = children(spans, &call["span_id"]).first().copied()?;
            Some((call.clone(), upstream.clone()))
        })
        .collect();
    (calls.len() == 3).then(|| (run.clone(), calls))
}

async fn traces_on(front: Front, mode: &str) -> Result<()> {
    let mut receiver = Receiver::start(mode).await;
    let protocol = if mode == "grpc" {
        "grpc"
    } else {
        "http/protobuf"
    };
    let env = export_env(&receiver, protocol);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir()?;
    let mut gateway = gateway(dir.path(), front, &env).await?;
    // In the client's trace, then without one.
    let meta = json!({"traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01")});
    check_result(&run(&mut gateway, SCRIPT, Some(meta)).await?.0);
    check_result(&run(&mut gateway, SCRIPT, None).await?.0);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut spans = Vec::new();
    let trees = loop {
        let ours = run_tree(&spans, Some(TRACE));
        let other = spans
            .iter()
            .filter(|s| s["name"] == "tools/call run_code" && s["trace_id"] != TRACE)
            .find_map(|s| run_tree(&spans, s["trace_id"].as_str()));
        if let (Some(ours), Some(other)) = (ours, other) {
            break [ours, other];
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match receiver.next_span(left).await {
            Some(span) => spans.push(span),
            None => panic!("{front:?}: the runs' spans never all came: {spans:#?}"),
        }
    };
    for (n, (run, calls)) in trees.iter().enumerate() {
        assert_eq!(run["kind"], KIND_SERVER, "{run}");
        assert_eq!(run["attributes"]["gen_ai.tool.name"], "run_code");
        if n == 0 {
            assert_eq!(run["parent_span_id"], CLIENT_SPAN, "{run}");
        } else {
            assert!(
                run["parent_span_id"].as_str().is_none_or(str::is_empty),
                "a root span: {run}"
            );
        }
        let mut errors = 0;
        for (call, upstream) in calls {
            assert_eq!(call["name"], "tools/call units-convert", "{call}");
            assert_eq!(call["kind"], KIND_SERVER);
            assert_eq!(call["trace_id"], run["trace_id"]);
            assert_eq!(upstream["name"], "tools/call convert", "{upstream}");
            assert_eq!(upstream["kind"], KIND_CLIENT);
            assert_eq!(upstream["trace_id"], run["trace_id"]);
            if call["attributes"]["error.type"] == "tool_error" {
                errors += 1;
            }
        }
        assert_eq!(errors, 1, "{front:?}: one call failed: {calls:#?}");
    }
    receiver.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_calls_are_child_spans_of_the_run_code_span() -> Result<()> {
    tokio::try_join!(
        traces_on(Front::Stdio, "http"),
        traces_on(Front::Http, "grpc"),
    )?;
    Ok(())
}
