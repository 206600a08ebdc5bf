//! The `--metrics` listener over real HTTP: `/metrics` in the text format, `/status` as JSON or
//! HTML by `Accept`, the guards (a token beyond loopback, loopback Host names on loopback), and
//! 10,000 concurrent calls counted exactly in a scrape.

#[path = "telemetry_support/mod.rs"]
mod support;

use std::sync::Arc;

use pegboard_gateway::testing::telemetry::{
    ErrorType, MetricsListener, ServerState, StatusReport, Telemetry, TelemetryError,
    TelemetryOptions, fetch_status,
};
use support::{Call, drive, drive_one, get, listen};
use tokio_util::sync::CancellationToken;

fn telemetry() -> Arc<Telemetry> {
    Telemetry::new(TelemetryOptions {
        servers: vec!["units".into(), "notes".into()],
        ..TelemetryOptions::default()
    })
    .expect("telemetry")
}

#[tokio::test]
async fn metrics_and_status_answer_in_their_formats() {
    let t = telemetry();
    t.server_state("units", ServerState::Up, None);
    t.server_tools("units", 2);
    t.server_state(
        "notes",
        ServerState::NeedsLogin,
        Some("run `pegboard login notes`"),
    );
    let ok = Call::new("units", "convert", "units-convert", None);
    drive(
        &t,
        &[
            ok,
            ok,
            Call {
                outcome: Some(ErrorType::ToolError),
                ..ok
            },
        ],
    )
    .await;
    let (addr, stop) = listen(&t).await;
    let base = format!("http://{addr}");

    let (status, text) = get(&format!("{base}/metrics"), "*/*", None).await;
    assert_eq!(status, 200);
    assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram"));

    let (status, json) = get(&format!("{base}/status"), "application/json", None).await;
    assert_eq!(status, 200);
    let report: StatusReport = serde_json::from_str(&json).expect("status JSON");
    let units = &report.servers[0];
    assert_eq!((units.name.as_str(), units.state.as_str()), ("units", "up"));
    assert_eq!((units.tools, units.calls, units.errors), (2, 3, 1));
    assert!(units.p50_ms.is_some() && units.p99_ms.is_some());
    assert_eq!(report.servers[1].state, "needs_login");
    assert_eq!(
        report.servers[1].reason.as_deref(),
        Some("run `pegboard login notes`")
    );

    let (status, html) = get(&format!("{base}/status"), "text/html", None).await;
    assert_eq!(status, 200);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("run `pegboard login notes`"));

    // `pegboard status` reads the same report.
    let fetched = fetch_status(&base, None).await.expect("fetch");
    assert_eq!(fetched.servers, report.servers);

    let (status, _) = get(&format!("{base}/nope"), "*/*", None).await;
    assert_eq!(status, 404);
    stop.cancel();
}

#[tokio::test]
async fn beyond_loopback_a_token_is_required_and_checked() {
    let t = telemetry();
    let all = "0.0.0.0:0".parse().expect("addr");
    let err = MetricsListener::bind(all, None)
        .await
        .expect_err("unguarded");
    assert!(matches!(err, TelemetryError::Unguarded(_)), "{err}");
    assert!(err.to_string().contains("PEGBOARD_TOKEN"));
    let err = MetricsListener::bind(all, Some("  "))
        .await
        .expect_err("blank");
    assert!(matches!(err, TelemetryError::BlankToken));

    let listener = MetricsListener::bind(all, Some("s3cret"))
        .await
        .expect("bind");
    let port = listener.local_addr().port();
    let stop = CancellationToken::new();
    tokio::spawn(listener.serve(Arc::clone(&t), stop.clone()));
    let base = format!("http://127.0.0.1:{port}");
    assert_eq!(get(&format!("{base}/metrics"), "*/*", None).await.0, 401);
    assert_eq!(
        get(&format!("{base}/metrics"), "*/*", Some("wrong"))
            .await
            .0,
        401
    );
    assert_eq!(
        get(&format!("{base}/metrics"), "*/*", Some("s3cret"))
            .await
            .0,
        200
    );
    let err = fetch_status(&base, None).await.expect_err("401");
    assert!(err.to_string().contains("token"), "{err}");
    assert!(fetch_status(&base, Some("s3cret")).await.is_ok());
    stop.cancel();
}

#[tokio::test]
async fn on_loopback_a_foreign_host_name_is_refused() {
    let t = telemetry();
    let (addr, stop) = listen(&t).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let answer = reqwest::Client::new()
        .get(format!("http://{addr}/status"))
        .header("host", "evil.example")
        .send()
        .await
        .expect("GET");
    assert_eq!(answer.status(), 403);
    stop.cancel();
}

#[tokio::test]
async fn fetching_from_nothing_says_what_to_start() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let err = fetch_status(&format!("http://127.0.0.1:{port}"), None)
        .await
        .expect_err("nothing listens");
    assert!(
        err.to_string().contains("pegboard serve --metrics"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_calls_are_all_counted() {
    let t = telemetry();
    let tasks: Vec<_> = (0..10_000)
        .map(|i| {
            let t = Arc::clone(&t);
            tokio::spawn(async move {
                let (server, original, tool) = if i % 2 == 0 {
                    ("units", "convert", "units-convert")
                } else {
                    ("notes", "search", "notes-search")
                };
                let outcome = (i % 5 == 0).then_some(ErrorType::Timeout);
                // Yield mid-call so calls interleave across both worker threads.
                let call = Call::new(server, original, tool, outcome).yielding();
                drive_one(&t, call, i, None).await;
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let (addr, stop) = listen(&t).await;
    let (_, text) = get(&format!("http://{addr}/metrics"), "*/*", None).await;
    let count = |tool: &str, server: &str, error: &str| -> u64 {
        let prefix = format!(
            "mcp_server_operation_duration_seconds_count{{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"{tool}\",error_type=\"{error}\",pegboard_server=\"{server}\",pegboard_client=\"default\"}} "
        );
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    // Even i: units; i % 5 == 0 fails; 10,000 calls: 5,000 each, 1,000 failures each.
    assert_eq!(count("units-convert", "units", ""), 4_000);
    assert_eq!(count("units-convert", "units", "timeout"), 1_000);
    assert_eq!(count("notes-search", "notes", ""), 4_000);
    assert_eq!(count("notes-search", "notes", "timeout"), 1_000);
    assert!(text.lines().any(|l| l == "pegboard_calls_in_flight 0"));
    let status = t.status();
    let totals: Vec<_> = status.servers.iter().map(|s| (s.calls, s.errors)).collect();
    assert_eq!(totals, vec![(5_000, 1_000), (5_000, 1_000)]);
    stop.cancel();
}
