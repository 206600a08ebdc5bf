//! Spans exported over OTLP (http/protobuf and gRPC) to a receiver built on the official protobuf
//! definitions (PyPI `opentelemetry-proto`): names, kinds, parent and child, attributes, the
//! client's trace id; the `traceparent` sent upstream; 10,000 concurrent calls lose no span; a
//! full queue drops spans and counts them without blocking a call.

#[path = "telemetry_support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use pegboard_gateway::testing::telemetry::{
    ErrorType, Telemetry, TelemetryOptions, TraceContext, TraceExport,
};
use serde_json::Value;
use support::{Call, Receiver, drive_one};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// Span kinds in OTLP's enum.
const KIND_SERVER: i64 = 2;
const KIND_CLIENT: i64 = 3;
/// Status codes in OTLP's enum.
const STATUS_ERROR: i64 = 2;

fn telemetry(vars: &[(&str, String)]) -> Arc<Telemetry> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    let export =
        TraceExport::from_lookup(|key| vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
            .expect("config")
            .expect("an endpoint is set");
    Telemetry::new(TelemetryOptions {
        trace_export: Some(export),
        servers: vec!["units".into()],
        ..TelemetryOptions::default()
    })
    .expect("telemetry")
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

async fn one_traced_call(mode: &str) {
    let mut receiver = Receiver::start(mode).await;
    let (endpoint_var, endpoint) = match mode {
        "http" => (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        ),
        _ => (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        ),
    };
    let protocol = if mode == "http" {
        "http/protobuf"
    } else {
        "grpc"
    };
    let t = telemetry(&[
        (endpoint_var, endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol.into()),
        ("OTEL_SERVICE_NAME", "pegboard-test".into()),
        ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio".into()),
        ("OTEL_TRACES_SAMPLER_ARG", "1.0".into()),
    ]);
    let parent = TraceContext::parse(
        &format!("00-{TRACE_ID}-{CLIENT_SPAN}-01"),
        Some("rojo=00f067aa0ba902b7"),
        Some("userId=alice"),
    )
    .expect("traceparent");
    let call = Call::new(
        "units",
        "convert",
        "units-convert",
        Some(ErrorType::ToolError),
    );
    let upstream_meta = drive_one(&t, call, 42, Some(&parent)).await;
    t.flush().await;
    let spans = receiver.spans(2).await;
    let server = spans
        .iter()
        .find(|s| s["kind"] == KIND_SERVER)
        .expect("a SERVER span");
    let client = spans
        .iter()
        .find(|s| s["kind"] == KIND_CLIENT)
        .expect("a CLIENT span");

    // Names and parentage: client's span -> gateway SERVER span -> gateway CLIENT span.
    assert_eq!(server["name"], "tools/call units-convert");
    assert_eq!(client["name"], "tools/call convert");
    assert_eq!(server["trace_id"], TRACE_ID);
    assert_eq!(client["trace_id"], TRACE_ID);
    assert_eq!(server["parent_span_id"], CLIENT_SPAN);
    assert_eq!(client["parent_span_id"], server["span_id"]);
    assert_eq!(server["service_name"], "pegboard-test");

    // Attributes by the conventions.
    assert_eq!(attr(server, "mcp.method.name"), "tools/call");
    assert_eq!(attr(server, "gen_ai.tool.name"), "units-convert");
    assert_eq!(attr(server, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(server, "mcp.session.id"), "0f7c8d4a0c9e4b7f");
    assert_eq!(attr(server, "jsonrpc.request.id"), "42");
    assert_eq!(attr(server, "network.transport"), "tcp");
    assert_eq!(attr(server, "error.type"), "tool_error");
    assert_eq!(server["status"]["code"], STATUS_ERROR);
    assert_eq!(attr(client, "gen_ai.tool.name"), "convert");
    assert_eq!(attr(client, "network.transport"), "pipe");
    assert_eq!(attr(client, "error.type"), "tool_error");

    // What went upstream: the same trace, the gateway's CLIENT span, tracestate and baggage.
    let client_span = client["span_id"].as_str().expect("span id");
    assert_eq!(
        upstream_meta["traceparent"],
        format!("00-{TRACE_ID}-{client_span}-01")
    );
    assert_eq!(upstream_meta["tracestate"], "rojo=00f067aa0ba902b7");
    assert_eq!(upstream_meta["baggage"], "userId=alice");
    assert_eq!(t.metrics().spans_dropped(), 0);
    t.shutdown(Duration::from_secs(5)).await;
    receiver.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_over_http_protobuf_follow_the_conventions_and_the_clients_trace() {
    one_traced_call("http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_over_grpc_follow_the_conventions_and_the_clients_trace() {
    one_traced_call("grpc").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_trace_or_export_nothing_is_added_upstream_and_with_a_trace_it_is_carried() {
    let t = Telemetry::new(TelemetryOptions::default()).expect("telemetry");
    let call = Call::new("units", "convert", "units-convert", None);
    assert!(drive_one(&t, call, 1, None).await.is_empty());
    let parent = TraceContext::parse(&format!("00-{TRACE_ID}-{CLIENT_SPAN}-01"), None, None);
    let meta = drive_one(&t, call, 2, parent.as_ref()).await;
    let sent = meta["traceparent"].as_str().expect("a traceparent");
    let sent = TraceContext::parse(sent, None, None).expect("valid");
    assert_eq!(format!("{:032x}", sent.trace_id()), TRACE_ID);
    assert_ne!(format!("{:016x}", sent.span_id()), CLIENT_SPAN);
    assert!(sent.is_sampled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_calls_lose_no_span_and_no_count() {
    let mut receiver = Receiver::start("http").await;
    let t = telemetry(&[
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        ),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "65536".into()),
        ("OTEL_BSP_SCHEDULE_DELAY", "200".into()),
    ]);
    let parent = TraceContext::parse(&format!("00-{TRACE_ID}-{CLIENT_SPAN}-01"), None, None)
        .expect("traceparent");
    let calls = 10_000;
    let tasks: Vec<_> = (0..calls)
        .map(|i| {
            let t = Arc::clone(&t);
            let parent = parent.clone();
            let outcome = (i % 4 == 0).then_some(ErrorType::ToolError);
            tokio::spawn(async move {
                let call = Call::new("units", "convert", "units-convert", outcome);
                drive_one(&t, call, i, Some(&parent)).await
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("call task");
    }
    t.flush().await;
    let spans = receiver.spans(2 * 10_000).await;
    let servers = spans.iter().filter(|s| s["kind"] == KIND_SERVER).count();
    let errors = spans
        .iter()
        .filter(|s| s["kind"] == KIND_SERVER && attr(s, "error.type") == "tool_error")
        .count();
    assert_eq!((servers, errors), (10_000, 2_500));
    assert!(spans.iter().all(|s| s["trace_id"] == TRACE_ID));
    assert_eq!(t.metrics().spans_dropped(), 0);
    let text = t.render_metrics();
    for line in [
        r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="",pegboard_server="units",pegboard_client="default"} 7500"#,
        r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="tool_error",pegboard_server="units",pegboard_client="default"} 2500"#,
        r#"mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="convert",error_type="",pegboard_server="units"} 7500"#,
        "pegboard_calls_in_flight 0",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}");
    }
    let status = t.status();
    assert_eq!(
        (status.servers[0].calls, status.servers[0].errors),
        (10_000, 2_500)
    );
    t.shutdown(Duration::from_secs(5)).await;
    receiver.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_export_queue_drops_and_counts_spans_and_never_blocks_a_call() {
    // A collector that accepts connections and never answers: the first export hangs (its
    // timeout is far off), so the queue stays full.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let t = telemetry(&[
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        ),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "8".into()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "120000".into()),
    ]);
    let call = Call::new("units", "convert", "units-convert", None);
    for i in 0..1000 {
        drive_one(&t, call, i, None).await;
    }
    // 2,000 spans ended; 8 are queued or in the hanging export; every other one was counted.
    assert_eq!(t.metrics().spans_dropped(), 2_000 - 8);
    assert!(
        t.render_metrics()
            .lines()
            .any(|l| l == "pegboard_spans_dropped_total 1992")
    );
    let text = t.render_metrics();
    assert!(
        text.contains(r#"error_type="",pegboard_server="units",pegboard_client="default"} 1000"#)
    );
    drop(silent);
}
