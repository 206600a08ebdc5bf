//! Traces through the real `pegboard serve`: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, an OTLP
//! receiver built on the official protobuf definitions (PyPI `opentelemetry-proto`) gets a SERVER
//! span per call (`tools/call units-convert`, in the client's trace, the child of the client's
//! span) and a CLIENT span per upstream request as its child, with the conventions' attributes,
//! over http/protobuf and gRPC, on rmcp's way and the express lane. A server written with the
//! official Python SDK that answers the `_meta` it received shows the trace context the gateway
//! passes on: the client's trace id with the gateway's span id (its CLIENT span's, when spans are
//! exported), over both fronts, both paths, tracing on and off; nothing without an incoming trace
//! and tracing off. 10,000 calls at once: every span exported, or counted as dropped.

mod common;

#[path = "../../pegboard-gateway/tests/telemetry_support/mod.rs"]
mod telemetry_support;

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use common::observe::{Front, Served, Setup, Way, meta_server, sample, write_config};
use telemetry_support::{PATIENCE, Receiver};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
/// Span kinds and the error status in OTLP's enums.
const KIND_SERVER: i64 = 2;
const KIND_CLIENT: i64 = 3;
const STATUS_ERROR: i64 = 2;

/// The client's span of its `n`th request (each its own, so the spans of each call are found).
fn client_span(n: u64) -> String {
    format!("{:016x}", 0xc11e_0000_u64 + n)
}

fn traceparent(span: &str) -> String {
    format!("00-{TRACE}-{span}-01")
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
        (
            "OTEL_TRACES_SAMPLER".into(),
            "parentbased_traceidratio".into(),
        ),
        ("OTEL_TRACES_SAMPLER_ARG".into(), "1.0".into()),
        // Batches leave every 100 ms, so the test need not wait the default 5 s.
        ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
    ]
}

fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Spans from `receiver` until `done` says they are enough (at most [`PATIENCE`]).
async fn spans_until(receiver: &mut Receiver, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut spans = Vec::new();
    while !done(&spans) {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match receiver.next_span(left).await {
            Some(span) => spans.push(span),
            None => panic!("the spans never were enough: {spans:#?}"),
        }
    }
    spans
}

fn child_of<'a>(spans: &'a [Value], parent: &str) -> Option<&'a Value> {
    spans.iter().find(|s| s["parent_span_id"] == parent)
}

/// The SERVER span whose parent is the client's span `client`, and its CLIENT child.
fn pair<'a>(spans: &'a [Value], client: &str) -> Option<(&'a Value, &'a Value)> {
    let server = child_of(spans, client)?;
    let upstream = child_of(spans, server["span_id"].as_str()?)?;
    Some((server, upstream))
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// Check one call's SERVER and CLIENT spans.
fn check_pair(
    spans: &[Value],
    client: &str,
    gateway: &Served,
    request_id: &str,
    tool_error: bool,
) -> Result<()> {
    let (server, upstream) = pair(spans, client).context("the call's spans")?;
    let front = match gateway.front {
        Front::Stdio => "pipe",
        Front::Http => "tcp",
    };
    assert_eq!(server["name"], "tools/call units-convert", "{server}");
    assert_eq!(server["kind"], KIND_SERVER);
    assert_eq!(server["trace_id"], TRACE);
    assert_eq!(server["service_name"], "pegboard-e2e");
    assert_eq!(attr(server, "mcp.method.name"), "tools/call");
    assert_eq!(attr(server, "gen_ai.tool.name"), "units-convert");
    assert_eq!(attr(server, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(server, "network.transport"), front);
    assert_eq!(attr(server, "jsonrpc.request.id"), request_id);
    match gateway.session_id() {
        Some(id) => assert_eq!(attr(server, "mcp.session.id"), id),
        None => assert!(attr(server, "mcp.session.id").is_null()),
    }
    assert_eq!(upstream["name"], "tools/call convert", "{upstream}");
    assert_eq!(upstream["kind"], KIND_CLIENT);
    assert_eq!(upstream["trace_id"], TRACE);
    assert_eq!(attr(upstream, "gen_ai.tool.name"), "convert");
    assert_eq!(attr(upstream, "network.transport"), "pipe");
    for span in [server, upstream] {
        if tool_error {
            assert_eq!(attr(span, "error.type"), "tool_error", "{span}");
            assert_eq!(span["status"]["code"], STATUS_ERROR, "{span}");
        } else {
            assert!(attr(span, "error.type").is_null(), "{span}");
            assert_ne!(span["status"]["code"], STATUS_ERROR, "{span}");
        }
    }
    Ok(())
}

/// One gateway on `front` exporting over `mode` (`http` or `grpc`): three calls in the client's
/// trace (the first rmcp's way, the others on the lane, the last `isError`), their spans.
async fn spans_of(front: Front, mode: &str) -> Result<()> {
    let mut receiver = Receiver::start(mode).await;
    let protocol = if mode == "grpc" {
        "grpc"
    } else {
        "http/protobuf"
    };
    let env = export_env(&receiver, protocol);
    let dir = tempfile::tempdir()?;
    let config = write_config(
        dir.path(),
        json!({"units": common::demo_server("units", &[])}),
    )?;
    let mut gateway = Served::start(Setup {
        front,
        way: Way::Express,
        config: &config,
        flags: &[],
        env: &pairs(&env),
    })
    .await?;
    let ok = json!({"value": 10, "from": "km", "to": "mi"});
    let mismatch = json!({"value": 10, "from": "km", "to": "kg"});
    let calls = [(0, &ok, false), (1, &ok, false), (2, &mismatch, true)];
    let mut ids = Vec::new();
    for (n, arguments, _) in calls {
        let meta = json!({"traceparent": traceparent(&client_span(n))});
        let answer = gateway
            .call("units-convert", arguments.clone(), Some(meta))
            .await?;
        ids.push(answer.answer.context("an answer")?["id"].to_string());
    }
    gateway.wait_lane_calls(2).await?;
    assert_eq!(gateway.lane_calls(), 2, "the later calls took the lane");
    let spans = spans_until(&mut receiver, |spans| {
        (0..3).all(|n| pair(spans, &client_span(n)).is_some())
    })
    .await;
    for ((n, _, tool_error), id) in calls.into_iter().zip(&ids) {
        check_pair(&spans, &client_span(n), &gateway, id, tool_error)
            .with_context(|| format!("call {n} over {front:?}, {mode}"))?;
    }
    receiver.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_an_otlp_receiver_over_http_protobuf_and_grpc() -> Result<()> {
    tokio::try_join!(
        spans_of(Front::Stdio, "http"),
        spans_of(Front::Http, "grpc"),
    )?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_span_of_an_http_server_names_its_address() -> Result<()> {
    let mut receiver = Receiver::start("http").await;
    let env = export_env(&receiver, "http/protobuf");
    let mut units = tokio::process::Command::new(common::pegboard());
    units.args(["demo-server", "units", "--http", "127.0.0.1:0"]);
    let (_units, url) = common::spawn_serving(units, common::observe::WAIT, |line| {
        line.strip_prefix("listening on ").map(str::to_string)
    })
    .await?;
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|p| p.parse::<i64>().ok())
        .with_context(|| format!("a port in {url}"))?;
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({"web": {"url": url}}))?;
    let mut gateway = Served::start(Setup {
        front: Front::Stdio,
        way: Way::Express,
        config: &config,
        flags: &[],
        env: &pairs(&env),
    })
    .await?;
    let meta = json!({"traceparent": traceparent(&client_span(0))});
    let answer = gateway
        .call(
            "web-convert",
            json!({"value": 1, "from": "m", "to": "ft"}),
            Some(meta),
        )
        .await?;
    assert!(answer.text().starts_with("1 m = "), "{:?}", answer.answer);
    let spans = spans_until(&mut receiver, |spans| {
        pair(spans, &client_span(0)).is_some()
    })
    .await;
    let (server, upstream) = pair(&spans, &client_span(0)).context("the call's spans")?;
    assert_eq!(server["name"], "tools/call web-convert");
    assert_eq!(upstream["name"], "tools/call convert");
    assert_eq!(attr(upstream, "server.address"), "127.0.0.1");
    assert_eq!(attr(upstream, "server.port"), port);
    assert_eq!(attr(upstream, "network.transport"), "tcp");
    // The SERVER span is the gateway's own side: no server address.
    assert!(attr(server, "server.address").is_null());
    Ok(())
}

/// What the Python server received as `_meta`, from its answer's text.
fn received(text: &str) -> Result<Value> {
    serde_json::from_str(text).with_context(|| format!("not the server's _meta: {text:?}"))
}

/// The trace id and span id of a `traceparent` the server received, checked for form.
fn carried(meta: &Value) -> Result<(String, String)> {
    let traceparent = meta["traceparent"]
        .as_str()
        .with_context(|| format!("no traceparent in {meta}"))?;
    let parts: Vec<&str> = traceparent.split('-').collect();
    ensure!(
        parts.len() == 4 && parts[0] == "00" && parts[3] == "01",
        "{traceparent}"
    );
    ensure!(
        parts[2].len() == 16
            && parts[2].bytes().all(|b| b.is_ascii_hexdigit())
            && parts[2] != "0000000000000000",
        "{traceparent}"
    );
    Ok((parts[1].to_string(), parts[2].to_string()))
}

/// The Python server behind one gateway: what its requests carried upstream, checked.
async fn propagation(front: Front, way: Way, tracing: bool) -> Result<()> {
    let what = format!("{front:?}, {way:?}, tracing {tracing}");
    let mut receiver = match tracing {
        true => Some(Receiver::start("http").await),
        false => None,
    };
    let env = receiver
        .as_ref()
        .map(|r| export_env(r, "http/protobuf"))
        .unwrap_or_default();
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), json!({"m": meta_server()}))?;
    let mut gateway = Served::start(Setup {
        front,
        way,
        config: &config,
        flags: &[],
        env: &pairs(&env),
    })
    .await
    .with_context(|| what.clone())?;
    // The gateway's span id each traced request carried, by the client's span id.
    let mut gateway_spans = Vec::new();
    for n in 0..2 {
        let client = client_span(n);
        let meta = json!({"traceparent": traceparent(&client), "tracestate": "vendor=1",
            "baggage": "tenant=a", "com.example/tenant": "a"});
        let answer = gateway.call("m-echo_meta", json!({}), Some(meta)).await?;
        let got = received(answer.text())?;
        let (trace, span) = carried(&got).with_context(|| what.clone())?;
        assert_eq!(trace, TRACE, "{what}: the client's trace");
        assert_ne!(span, client, "{what}: a span id of the gateway's");
        assert_eq!(got["tracestate"], "vendor=1", "{what}");
        assert_eq!(got["baggage"], "tenant=a", "{what}");
        assert_eq!(got["com.example/tenant"], "a", "{what}");
        gateway_spans.push((client, span));
    }
    // Without a trace of the client's.
    let answer = gateway.call("m-echo_meta", json!({}), None).await?;
    let untraced = received(answer.text())?;
    let root = match tracing {
        false => {
            // (rmcp's way gives every upstream request a progress token of its own.)
            for key in ["traceparent", "tracestate", "baggage"] {
                assert!(
                    untraced.get(key).is_none(),
                    "{what}: {key} added: {untraced}"
                );
            }
            None
        }
        // The gateway's own trace, begun by its SERVER span.
        true => Some(carried(&untraced).with_context(|| what.clone())?),
    };
    // prompts/get and resources/read carry it too.
    let prompt = gateway
        .request(
            "prompts/get",
            json!({"name": "m-meta", "_meta": {"traceparent": traceparent(&client_span(8))}}),
        )
        .await?;
    let text = prompt.result()["messages"][0]["content"]["text"]
        .as_str()
        .with_context(|| format!("{what}: prompts/get answered {:?}", prompt.answer))?;
    let (trace, prompt_span) = carried(&received(text)?)?;
    assert_eq!(trace, TRACE, "{what}: prompts/get");
    let templates = gateway
        .request("resources/templates/list", json!({}))
        .await?;
    let template = templates.result()["resourceTemplates"][0]["uriTemplate"]
        .as_str()
        .with_context(|| format!("{what}: {:?}", templates.answer))?
        .replace("{name}", "x");
    let read = gateway
        .request(
            "resources/read",
            json!({"uri": template, "_meta": {"traceparent": traceparent(&client_span(9))}}),
        )
        .await?;
    let text = read.result()["contents"][0]["text"]
        .as_str()
        .with_context(|| format!("{what}: resources/read answered {:?}", read.answer))?;
    let (trace, read_span) = carried(&received(text)?)?;
    assert_eq!(trace, TRACE, "{what}: resources/read");

    // The tool's later calls took the lane (the traced one and the untraced one).
    let lane = match way {
        Way::Express => 2,
        Way::NoExpress => 0,
    };
    if lane > 0
        && let Err(e) = gateway.wait_lane_calls(lane).await
    {
        // Which gateway, and what it logged: a call that went rmcp's way says why in its log.
        let log = gateway.log();
        bail!(
            "{what}: {e:#}; the lane carried {}; the gateway's last lines: {:#?}",
            gateway.lane_calls(),
            &log[log.len().saturating_sub(40)..]
        );
    }
    assert_eq!(gateway.lane_calls(), lane, "{what}");

    let Some(receiver) = &mut receiver else {
        return Ok(());
    };
    // The span id each request carried is its CLIENT span's, the child of the SERVER span of
    // the client's request.
    let mut expected: Vec<(String, String, &str, &str)> = gateway_spans
        .iter()
        .map(|(client, span)| {
            (
                client.clone(),
                span.clone(),
                "tools/call m-echo_meta",
                "tools/call echo_meta",
            )
        })
        .collect();
    expected.push((
        client_span(8),
        prompt_span,
        "prompts/get m-meta",
        "prompts/get meta",
    ));
    expected.push((
        client_span(9),
        read_span,
        "resources/read",
        "resources/read",
    ));
    let spans = spans_until(receiver, |spans| {
        expected
            .iter()
            .all(|(client, ..)| pair(spans, client).is_some())
            && root
                .as_ref()
                .is_none_or(|(_, span)| spans.iter().any(|s| s["span_id"] == span.as_str()))
    })
    .await;
    for (client, carried_span, server_name, client_name) in &expected {
        let (server, upstream) = pair(&spans, client).context("spans")?;
        assert_eq!(server["name"], *server_name, "{what}");
        assert_eq!(upstream["name"], *client_name, "{what}");
        assert_eq!(
            upstream["span_id"],
            carried_span.as_str(),
            "{what}: {client_name}"
        );
        assert_eq!(upstream["trace_id"], TRACE);
    }
    if let Some((trace, span)) = &root {
        let upstream = spans
            .iter()
            .find(|s| s["span_id"] == span.as_str())
            .context("the untraced call's CLIENT span")?;
        assert_eq!(upstream["trace_id"], trace.as_str());
        assert_eq!(upstream["kind"], KIND_CLIENT);
        let server = spans
            .iter()
            .find(|s| s["span_id"] == upstream["parent_span_id"])
            .context("its SERVER span")?;
        assert_eq!(server["parent_span_id"], "", "{what}: a root span");
        assert_ne!(trace, TRACE);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_server_receives_the_clients_trace_with_the_gateways_span() -> Result<()> {
    for tracing in [false, true] {
        tokio::try_join!(
            propagation(Front::Stdio, Way::Express, tracing),
            propagation(Front::Stdio, Way::NoExpress, tracing),
            propagation(Front::Http, Way::Express, tracing),
            propagation(Front::Http, Way::NoExpress, tracing),
        )?;
    }
    Ok(())
}

/// 10,000 calls sent at once through a gateway exporting to `receiver` with an export queue of
/// `queue` spans: every span is received or counted in `pegboard_spans_dropped_total`. Returns
/// (received, dropped).
async fn ten_thousand(queue: usize) -> Result<(u64, u64)> {
    const CALLS: usize = 10_000;
    let mut receiver = Receiver::start("http").await;
    let mut env = export_env(&receiver, "http/protobuf");
    env.push(("OTEL_BSP_MAX_QUEUE_SIZE".into(), queue.to_string()));
    env.push(("OTEL_BSP_MAX_EXPORT_BATCH_SIZE".into(), "512".into()));
    let dir = tempfile::tempdir()?;
    let config = write_config(
        dir.path(),
        json!({"units": common::demo_server("units", &[])}),
    )?;
    let mut gateway = Served::start(Setup {
        front: Front::Stdio,
        way: Way::Express,
        config: &config,
        flags: &[],
        env: &pairs(&env),
    })
    .await?;
    let convert = json!({"value": 10, "from": "km", "to": "mi"});
    gateway.call("units-convert", convert.clone(), None).await?;
    let answers = gateway
        .call_at_once("units-convert", &convert, CALLS)
        .await?;
    let ok = answers.iter().filter(|a| a.get("result").is_some()).count();
    assert_eq!(ok, CALLS);
    // A SERVER and a CLIENT span per call.
    let expected = 2 * (CALLS as u64 + 1);
    let mut received = 0_u64;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        // Drain what has come; then see whether every span is accounted for.
        while receiver
            .next_span(Duration::from_millis(300))
            .await
            .is_some()
        {
            received += 1;
        }
        let text = gateway.metrics_text().await?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let dropped = sample(&text, "pegboard_spans_dropped_total", &[]) as u64;
        if received + dropped >= expected {
            assert_eq!(received + dropped, expected, "no span counted twice");
            receiver.stop().await;
            return Ok((received, dropped));
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{received} spans received and {dropped} dropped of {expected}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_at_once_export_every_span_or_count_it_dropped() -> Result<()> {
    // A queue that holds them all: every span is exported.
    let (received, dropped) = ten_thousand(65_536).await?;
    assert_eq!((received, dropped), (20_002, 0));
    // A small queue: some are dropped, none is lost uncounted, and every call was answered.
    let (received, dropped) = ten_thousand(64).await?;
    assert!(
        dropped > 0,
        "a queue of 64 dropped spans: {received} received"
    );
    Ok(())
}
