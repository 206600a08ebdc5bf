//! A real Prometheus (Debian's `prometheus`) scrapes the `--metrics` listener every second; after
//! a known set of calls (some failing, some `tool_error`, one of a name not on the board) its
//! HTTP API gives back the exact counts per `gen_ai_tool_name` and `error_type`. Then more calls,
//! and the next scrapes show the new totals.

#[path = "telemetry_support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use pegboard_gateway::testing::telemetry::{ErrorType, ServerState, Telemetry, TelemetryOptions};
use support::prometheus::{Counts, Prometheus};
use support::{Call, drive, listen};

const BY: &[&str] = &["gen_ai_tool_name", "error_type"];

fn counts(entries: &[(&str, &str, u64)]) -> Counts {
    entries
        .iter()
        .map(|(t, e, n)| (vec![(*t).to_string(), (*e).to_string()], *n))
        .collect()
}

fn repeat(call: Call, n: usize) -> Vec<Call> {
    vec![call; n]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_the_exact_counts_per_tool_and_error_type() {
    let telemetry = Telemetry::new(TelemetryOptions {
        servers: vec!["units".into(), "notes".into()],
        ..TelemetryOptions::default()
    })
    .expect("telemetry");
    telemetry.server_state("units", ServerState::Up, None);
    telemetry.server_tools("units", 2);
    telemetry.server_state("notes", ServerState::Failed, Some("exited with status 1"));
    telemetry.server_restarted("notes");

    let convert = Call::new("units", "convert", "units-convert", None);
    let mut calls = repeat(convert, 7);
    calls.extend(repeat(
        Call {
            outcome: Some(ErrorType::ToolError),
            ..convert
        },
        3,
    ));
    calls.extend(repeat(
        Call {
            outcome: Some(ErrorType::Timeout),
            ..convert
        },
        2,
    ));
    let search = Call::new("notes", "search", "notes-search", None);
    calls.extend(repeat(search, 4));
    calls.extend(repeat(
        Call {
            outcome: Some(ErrorType::ServerUnavailable),
            ..search
        },
        5,
    ));
    calls.extend(repeat(
        Call {
            tool: None,
            ..convert
        },
        2,
    )); // a name not on the board
    drive(&telemetry, &calls).await;

    let (addr, stop) = listen(&Arc::clone(&telemetry)).await;
    let prometheus = Prometheus::start(&[addr]).await;

    let by_tool = "sum by (gen_ai_tool_name, error_type) \
                   (mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\"})";
    let want = counts(&[
        ("units-convert", "", 7),
        ("units-convert", "tool_error", 3),
        ("units-convert", "timeout", 2),
        ("notes-search", "", 4),
        ("notes-search", "server_unavailable", 5),
        ("_unknown", "-32602", 2),
    ]);
    assert_eq!(prometheus.counts_when(by_tool, BY, &want).await, want);

    // The upstream side: the server's own names, no call of the unknown name went upstream.
    let upstream =
        "sum by (gen_ai_tool_name, error_type) (mcp_client_operation_duration_seconds_count)";
    let want_up = counts(&[
        ("convert", "", 7),
        ("convert", "tool_error", 3),
        ("convert", "timeout", 2),
        ("search", "", 4),
        ("search", "server_unavailable", 5),
    ]);
    assert_eq!(
        prometheus.counts_when(upstream, BY, &want_up).await,
        want_up
    );

    let up = prometheus.query("pegboard_server_up").await;
    let up: BTreeMap<String, String> = up
        .as_array()
        .expect("vector")
        .iter()
        .map(|s| {
            (
                s["metric"]["pegboard_server"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                s["value"][1].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(up.get("units").map(String::as_str), Some("1"));
    assert_eq!(up.get("notes").map(String::as_str), Some("0"));
    let restarts = prometheus
        .query("pegboard_server_restarts_total{pegboard_server=\"notes\"}")
        .await;
    assert_eq!(restarts[0]["value"][1], "1", "{restarts}");

    // More calls: the next scrapes show the new totals.
    let mut more = repeat(
        Call {
            outcome: Some(ErrorType::ToolError),
            ..convert
        },
        4,
    );
    more.extend(repeat(search, 6));
    drive(&telemetry, &more).await;
    let want = counts(&[
        ("units-convert", "", 7),
        ("units-convert", "tool_error", 7),
        ("units-convert", "timeout", 2),
        ("notes-search", "", 10),
        ("notes-search", "server_unavailable", 5),
        ("_unknown", "-32602", 2),
    ]);
    assert_eq!(prometheus.counts_when(by_tool, BY, &want).await, want);
    stop.cancel();
}
