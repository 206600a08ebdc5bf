//! What telemetry costs a call: the hooks the pipeline runs for one `tools/call` (a downstream
//! request, its upstream request, both finished), off, with metrics on, with an incoming trace
//! context, and with spans exported at ratio 1.0. Target: metrics on adds at most ~1 µs of CPU per
//! call; off is a branch.
//!
//! `calls_2_threads` runs the same call on two threads at once against the same series (the
//! contended case: one tool called from every core); it reports CPU per call (wall time × 2
//! threads / calls).
//!
//! `*_cold` time one call at a time after writing over 4 MiB (more than this machine's 1 MiB L2 a
//! core), so each call finds its lines where the other processes on its core leave them: in the
//! shared cache at best. That is the gateway's lot at one call in flight, when the client, the
//! gateway and the server take turns on a core, and it is where the metrics' cost is the lines
//! they touch, not their instructions. Off and on are timed alike (the clock reads included), so
//! their difference is what metrics add to a cold call.
//!
//! `spans_ratio_1` exports to a local collector that takes every batch (an in-process HTTP sink
//! answering 200): the span work on the call path (build, end, hand-off to the queue). It times
//! 1,000 calls at a time (2,000 spans, within the default queue of 2,048), then, untimed, waits
//! for the export to drain the queue: a flood of calls would otherwise fill it and measure the
//! drop path. `spans_ratio_1_queue_full` exports to a port nothing listens on, so the queue stays
//! full: the drop-and-count path.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pegboard_gateway::testing::telemetry::{
    ErrorType, Method, RequestInfo, Telemetry, TelemetryOptions, ToolMemo, TraceContext,
    TraceExport, Transport, UpstreamInfo,
};

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn options() -> TelemetryOptions {
    TelemetryOptions {
        servers: vec!["units".into(), "notes".into()],
        clients: vec!["ci".into()],
        ..TelemetryOptions::default()
    }
}

/// The hooks of one `tools/call`, as the lane runs them: the call's clock read (its deadline's,
/// made whether or not telemetry is on) is its records' start, and its route's memo (`memo`)
/// holds its series.
#[inline]
fn one_call(
    telemetry: Option<&Arc<Telemetry>>,
    parent: Option<&TraceContext>,
    error: Option<ErrorType>,
    memo: &ToolMemo,
) {
    let started = black_box(Instant::now());
    let Some(t) = telemetry else {
        // Off: what the pipeline pays is this branch (and carrying a client's trace, if any).
        black_box(parent.map(TraceContext::child));
        return;
    };
    let mut info = RequestInfo::new(Method::ToolsCall, Transport::Pipe);
    info.tool = Some("units-convert");
    info.server = Some("units");
    info.original = Some("convert");
    info.client = Some("ci");
    info.parent = parent;
    info.started = Some(started);
    info.memo = Some(memo);
    let call = t.start_request(black_box(&info));
    let mut up = UpstreamInfo::new(Method::ToolsCall, "units", Transport::Pipe);
    up.tool = Some("convert");
    up.started = Some(started);
    let upstream = call.upstream(&up, parent);
    black_box(upstream.trace_context());
    upstream.finish(error);
    call.finish(error);
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let _entered = runtime.enter();
    let parent = TraceContext::parse(TRACEPARENT, Some("rojo=00f067aa0ba902b7"), None);
    let metrics = Telemetry::new(options()).expect("telemetry");
    // One per telemetry, as one per gateway's connection: the first call fills it.
    let memo = ToolMemo::new();

    let mut group = c.benchmark_group("telemetry");
    group.bench_function("off", |b| {
        b.iter(|| one_call(black_box(None), None, None, &memo))
    });
    group.bench_function("off_with_traceparent", |b| {
        b.iter(|| one_call(black_box(None), parent.as_ref(), None, &memo));
    });
    group.bench_function("metrics_on", |b| {
        b.iter(|| one_call(Some(&metrics), None, None, &memo));
    });
    group.bench_function("metrics_on_tool_error", |b| {
        b.iter(|| one_call(Some(&metrics), None, Some(ErrorType::ToolError), &memo));
    });
    group.bench_function("metrics_on_with_traceparent", |b| {
        b.iter(|| one_call(Some(&metrics), parent.as_ref(), None, &memo));
    });
    group.bench_function("calls_2_threads", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(2);
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for _ in 0..per_thread {
                            one_call(Some(&metrics), None, None, &memo);
                        }
                    });
                }
            });
            // CPU per call: two threads busy for the wall time.
            start.elapsed() * 2 * u32::try_from(iters).unwrap_or(u32::MAX)
                / u32::try_from(per_thread * 2).unwrap_or(u32::MAX)
        });
    });
    let mut evict = vec![0u8; 4 << 20];
    for (name, telemetry) in [("off_cold", None), ("metrics_on_cold", Some(&metrics))] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for i in 0..iters {
                    // One write per 64-byte line: every line of this core's caches is replaced.
                    for line in evict.chunks_mut(64) {
                        line[0] = line[0].wrapping_add(i as u8);
                    }
                    black_box(&evict);
                    let start = Instant::now();
                    one_call(telemetry, None, None, &memo);
                    timed += start.elapsed();
                }
                timed
            });
        });
    }
    group.bench_function("parse_traceparent_from_meta", |b| {
        let meta = serde_json::json!({ "traceparent": TRACEPARENT, "progressToken": 7 });
        let meta = meta.as_object().cloned().unwrap_or_default();
        b.iter(|| black_box(TraceContext::from_meta(black_box(&meta))));
    });

    // Spans at ratio 1.0, exported to a sink that takes everything.
    let sink = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let sink_port = sink.local_addr().expect("addr").port();
    let app = axum::Router::new().route("/v1/traces", axum::routing::post(|| async { "" }));
    runtime.spawn(async move { axum::serve(sink, app).await });
    let spans = with_spans(sink_port);
    let spans_memo = ToolMemo::new();
    for (name, parent) in [
        ("spans_ratio_1", None),
        ("spans_ratio_1_with_traceparent", parent.as_ref()),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = left.min(1000);
                    let start = Instant::now();
                    for _ in 0..n {
                        one_call(Some(&spans), parent, None, &spans_memo);
                    }
                    timed += start.elapsed();
                    left -= n;
                    runtime.block_on(spans.flush());
                }
                timed
            });
        });
    }
    let exported_dropped = spans.metrics().spans_dropped();

    // The same, to a port nothing listens on: the queue stays full.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed_port = closed.local_addr().expect("addr").port();
    drop(closed);
    let full = with_spans(closed_port);
    let full_memo = ToolMemo::new();
    group.bench_function("spans_ratio_1_queue_full", |b| {
        b.iter(|| one_call(Some(&full), None, None, &full_memo));
    });
    group.finish();
    eprintln!(
        "spans dropped: {exported_dropped} with the sink, {} with nothing listening",
        full.metrics().spans_dropped()
    );
    runtime.block_on(spans.shutdown(Duration::from_secs(1)));
    runtime.block_on(full.shutdown(Duration::from_secs(1)));
}

/// Telemetry exporting every span (ratio 1.0) to `http://127.0.0.1:{port}`.
fn with_spans(port: u16) -> Arc<Telemetry> {
    let export = TraceExport::from_lookup(|key| match key {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(format!("http://127.0.0.1:{port}")),
        "OTEL_TRACES_SAMPLER" => Some("parentbased_traceidratio".into()),
        "OTEL_TRACES_SAMPLER_ARG" => Some("1.0".into()),
        "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("1000".into()),
        _ => None,
    })
    .expect("config");
    Telemetry::new(TelemetryOptions {
        trace_export: export,
        ..options()
    })
    .expect("telemetry with spans")
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
