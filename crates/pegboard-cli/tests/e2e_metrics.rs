//! `pegboard serve --metrics`, scraped by a real Prometheus (Debian's `prometheus`, every
//! second): after a known load of calls per tool — some ok, some `isError`, some a server's
//! JSON-RPC error, some over the server's message limit, some of a name not on the board — its
//! HTTP API gives back the exact counts per `gen_ai_tool_name` and `error_type`, on both fronts
//! and both paths (a tool's later calls take the express lane; `--no-express`), the same on all
//! four. The servers' gauges, oversized messages, refusals and sessions are there too, the
//! README's queries for a dashboard are valid PromQL on this Prometheus, and 10,000 calls sent at
//! once lose no count.

mod common;

#[path = "../../pegboard-gateway/tests/telemetry_support/mod.rs"]
mod telemetry_support;

use anyhow::Result;
use serde_json::{Value, json};

use common::observe::{Front, Served, Setup, Way, sample, write_config};
use telemetry_support::prometheus::{Counts, Prometheus, counts, counts_of};

/// What the gateway logs once an ended session is in its metrics.
const SESSION_RECORDED: &str = "session closed after";

/// 1.5 MiB: over the test server's `maxMessageMib` of 1.
const HUGE: usize = 3 * 512 * 1024;

/// The units demo server and the test server (its `huge` tool; at most 1 MiB a message).
fn servers() -> Value {
    let mut t = common::demo_server("test", &["--huge-tool"]);
    t["maxMessageMib"] = json!(1);
    json!({"units": common::demo_server("units", &[]), "t": t})
}

/// The known load: each call, and how many times. Later calls of a tool that answered a plain
/// call take the lane (on [`Way::Express`]): the first call of each tool here succeeds.
fn load() -> Vec<(&'static str, Value, usize)> {
    let convert = json!({"value": 10, "from": "km", "to": "mi"});
    let mismatch = json!({"value": 10, "from": "km", "to": "kg"});
    vec![
        ("units-convert", convert, 5),
        ("units-convert", mismatch, 3),
        ("t-echo", json!({"text": "hi"}), 2),
        ("t-echo", json!({}), 2),
        ("t-huge", json!({"bytes": 10}), 1),
        ("t-huge", json!({"bytes": HUGE}), 2),
        ("nope-missing", json!({}), 2),
    ]
}

/// What the load must count, per `(gen_ai_tool_name, error_type)`, downstream.
fn want_server() -> Counts {
    counts(&[
        (&["units-convert", ""], 5),
        (&["units-convert", "tool_error"], 3),
        (&["t-echo", ""], 2),
        (&["t-echo", "-32602"], 2),
        (&["t-huge", ""], 1),
        (&["t-huge", "-32603"], 2),
        (&["_unknown", "-32602"], 2),
    ])
}

/// ... and upstream (the servers' own names; the unknown name never went upstream).
fn want_client() -> Counts {
    counts(&[
        (&["convert", ""], 5),
        (&["convert", "tool_error"], 3),
        (&["echo", ""], 2),
        (&["echo", "-32602"], 2),
        (&["huge", ""], 1),
        (&["huge", "-32603"], 2),
    ])
}

/// Calls of the load that take the lane on [`Way::Express`]: all but each tool's first (and
/// the unknown name's): 7 of `convert`, 3 of `echo`, 2 of `huge`.
const LANE_CALLS: usize = 7 + 3 + 2;

async fn run_load(gateway: &mut Served) -> Result<()> {
    for (name, arguments, times) in load() {
        for _ in 0..times {
            let answer = gateway.call(name, arguments.clone(), None).await?;
            let answered = answer.answer.is_some();
            anyhow::ensure!(answered, "{name}: no answer over {:?}", gateway.front);
        }
    }
    Ok(())
}

/// `counts` with each key prefixed by `instance`.
fn at(instance: &str, counts: &Counts) -> Counts {
    counts
        .iter()
        .map(|(k, v)| {
            let mut key = vec![instance.to_string()];
            key.extend(k.iter().cloned());
            (key, *v)
        })
        .collect()
}

/// The Grafana queries of the README's "Metrics, traces and status" section: every `` `...` ``
/// in the second column of its table.
fn readme_queries() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Metrics, traces and status")
        .nth(1)
        .expect("the README has the section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut queries = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let Some(cell) = cells.get(1) else { continue };
        queries.extend(
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(|q| q.replace("\\|", "|")),
        );
    }
    queries
}

/// The queries of docs/telemetry.md's `promql` block: each line not a comment, with the lines
/// indented under it (a query's continuation).
fn docs_queries() -> Vec<String> {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/telemetry.md"
    ))
    .expect("docs/telemetry.md");
    let block = docs
        .split("```promql\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/telemetry.md has a promql block");
    let mut queries: Vec<String> = Vec::new();
    for line in block
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        match queries.last_mut() {
            Some(query) if line.starts_with(' ') => query.push_str(line),
            _ => queries.push(line.to_string()),
        }
    }
    queries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_finds_the_exact_counts_per_tool_and_error_on_both_fronts_and_paths()
-> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), servers())?;
    let start = |front, way| {
        Served::start(Setup {
            front,
            way,
            config: &config,
            flags: &[],
            env: &[],
        })
    };
    let (a, b, c, d) = tokio::try_join!(
        start(Front::Stdio, Way::Express),
        start(Front::Stdio, Way::NoExpress),
        start(Front::Http, Way::Express),
        start(Front::Http, Way::NoExpress),
    )?;
    let mut gateways = [a, b, c, d];
    for gateway in &mut gateways {
        run_load(gateway).await?;
        let want = match gateway.way {
            Way::Express => LANE_CALLS,
            Way::NoExpress => 0,
        };
        if want > 0 {
            gateway.wait_lane_calls(want).await?;
        }
        assert_eq!(
            gateway.lane_calls(),
            want,
            "calls on the lane over {:?}, {:?}",
            gateway.front,
            gateway.way
        );
    }
    // A request from a page of another origin: refused, and counted.
    for gateway in gateways.iter().filter(|g| g.front == Front::Http) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let refused = reqwest::Client::new()
            .post(gateway.url.as_deref().unwrap_or_default())
            .header("origin", "http://evil.example")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send()
            .await?;
        assert_eq!(refused.status().as_u16(), 403);
    }

    let targets: Vec<_> = gateways.iter().map(|g| g.metrics).collect();
    let prometheus = Prometheus::start(&targets).await;
    let by = ["instance", "gen_ai_tool_name", "error_type"];
    let mut want = Counts::new();
    let mut want_up = Counts::new();
    for gateway in &gateways {
        let instance = gateway.metrics.to_string();
        want.extend(at(&instance, &want_server()));
        want_up.extend(at(&instance, &want_client()));
    }
    let downstream = "sum by (instance, gen_ai_tool_name, error_type) \
                      (mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\"})";
    assert_eq!(prometheus.counts_when(downstream, &by, &want).await, want);
    let upstream = "sum by (instance, gen_ai_tool_name, error_type) \
                    (mcp_client_operation_duration_seconds_count{mcp_method_name=\"tools/call\"})";
    assert_eq!(
        prometheus.counts_when(upstream, &by, &want_up).await,
        want_up
    );

    let every = |entries: &[(&str, u64)]| -> Counts {
        let mut all = Counts::new();
        for gateway in &gateways {
            for (server, n) in entries {
                all.insert(vec![gateway.metrics.to_string(), (*server).to_string()], *n);
            }
        }
        all
    };
    let per_server = ["instance", "pegboard_server"];
    for (query, want) in [
        ("pegboard_server_up", every(&[("units", 1), ("t", 1)])),
        // units: convert, list_units; t: six base tools and huge.
        ("pegboard_tools", every(&[("units", 2), ("t", 7)])),
        (
            "pegboard_server_restarts_total",
            every(&[("units", 0), ("t", 0)]),
        ),
        // The two answers over 1 MiB.
        (
            "pegboard_messages_over_limit_total",
            every(&[("units", 0), ("t", 2)]),
        ),
    ] {
        assert_eq!(
            prometheus.counts_when(query, &per_server, &want).await,
            want,
            "{query}"
        );
    }
    let mut want_denied = Counts::new();
    for gateway in &gateways {
        let origin = u64::from(gateway.front == Front::Http);
        want_denied.insert(vec![gateway.metrics.to_string(), "origin".into()], origin);
    }
    let denied = prometheus
        .counts_when(
            "pegboard_denied_total{reason=\"origin\"}",
            &["instance", "reason"],
            &want_denied,
        )
        .await;
    assert_eq!(denied, want_denied);
    // One session open on each; none in flight.
    let mut one_each = Counts::new();
    let mut none_each = Counts::new();
    for gateway in &gateways {
        one_each.insert(vec![gateway.metrics.to_string()], 1);
        none_each.insert(vec![gateway.metrics.to_string()], 0);
    }
    assert_eq!(
        prometheus
            .counts_when("pegboard_sessions", &["instance"], &one_each)
            .await,
        one_each
    );
    assert_eq!(
        prometheus
            .counts_when("pegboard_calls_in_flight", &["instance"], &none_each)
            .await,
        none_each
    );

    // The README's dashboard queries and the docs' list: valid PromQL here; the call rate by
    // tool has data.
    let queries = readme_queries();
    assert!(
        queries.len() >= 8,
        "the README lists the queries: {queries:?}"
    );
    let documented = docs_queries();
    assert!(
        documented.len() >= 10,
        "docs/telemetry.md lists the queries: {documented:?}"
    );
    for query in queries.iter().chain(&documented) {
        let answer = prometheus.answer(query).await;
        assert_eq!(
            answer["status"], "success",
            "documented query {query}: {answer}"
        );
    }
    let rate = queries
        .iter()
        .find(|q| q.starts_with("sum by (gen_ai_tool_name) (rate("))
        .expect("a calls/s by tool query");
    // A rate needs two samples of the counter in its window: asked again after each round of
    // scrapes.
    loop {
        let tools = counts_of(&prometheus.query(rate).await, &["gen_ai_tool_name"]);
        if tools.contains_key(&vec!["units-convert".to_string()]) {
            break;
        }
        assert!(
            prometheus.next_scrapes().await,
            "no rate by tool in {rate}: {tools:?}"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_counts_while_open_and_its_duration_when_it_ends() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_config(
        dir.path(),
        json!({"units": common::demo_server("units", &[])}),
    )?;
    let mut gateway = Served::start(Setup {
        front: Front::Http,
        way: Way::Express,
        config: &config,
        flags: &[],
        env: &[],
    })
    .await?;
    let text = gateway.metrics_text().await?;
    assert_eq!(sample(&text, "pegboard_sessions", &[]), 1.0, "{text}");
    assert_eq!(
        sample(&text, "mcp_server_session_duration_seconds_count", &[]),
        0.0
    );
    gateway.end_session().await?;
    // The session's handler ends after the DELETE's answer: wait for its record's log line.
    gateway.wait_log(SESSION_RECORDED, 1).await?;
    let text = gateway.metrics_text().await?;
    assert_eq!(
        sample(&text, "mcp_server_session_duration_seconds_count", &[]),
        1.0,
        "{text}"
    );
    assert_eq!(sample(&text, "pegboard_sessions", &[]), 0.0, "{text}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_at_once_lose_no_count() -> Result<()> {
    const CALLS: usize = 10_000;
    let dir = tempfile::tempdir()?;
    let config = write_config(
        dir.path(),
        json!({"units": common::demo_server("units", &[])}),
    )?;
    let convert = json!({"value": 10, "from": "km", "to": "mi"});
    for way in [Way::Express, Way::NoExpress] {
        let mut gateway = Served::start(Setup {
            front: Front::Stdio,
            way,
            config: &config,
            flags: &[],
            env: &[],
        })
        .await?;
        // The first call goes rmcp's way and opens the lane for the rest.
        gateway.call("units-convert", convert.clone(), None).await?;
        let answers = gateway
            .call_at_once("units-convert", &convert, CALLS)
            .await?;
        let ok = answers
            .iter()
            .filter(|a| a["result"]["content"][0]["text"] == "10 km = 6.213712 mi")
            .count();
        assert_eq!(ok, CALLS, "{way:?}: every call answered");
        let text = gateway.metrics_text().await?;
        let total = (CALLS + 1) as f64;
        let tool = [
            ("mcp_method_name", "tools/call"),
            ("gen_ai_tool_name", "units-convert"),
            ("error_type", ""),
        ];
        assert_eq!(
            sample(&text, "mcp_server_operation_duration_seconds_count", &tool),
            total,
            "{way:?}"
        );
        let upstream = [("gen_ai_tool_name", "convert"), ("error_type", "")];
        assert_eq!(
            sample(
                &text,
                "mcp_client_operation_duration_seconds_count",
                &upstream
            ),
            total,
            "{way:?}"
        );
        // The histogram's +Inf bucket holds them all; nothing is left in flight.
        let inf = [("gen_ai_tool_name", "units-convert"), ("le", "+Inf")];
        assert_eq!(
            sample(&text, "mcp_server_operation_duration_seconds_bucket", &inf),
            total
        );
        assert_eq!(sample(&text, "pegboard_calls_in_flight", &[]), 0.0);
        let lane = gateway.lane_calls();
        match way {
            Way::Express => assert!(lane >= CALLS, "{lane} calls on the lane"),
            Way::NoExpress => assert_eq!(lane, 0),
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_its_clients_limits_refuse_is_counted_alike_on_both_paths() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        json!({
            "mcpServers": {"units": common::demo_server("units", &[])},
            "clients": {"ci": {"token": "${PB_TEST_CI_TOKEN}", "callsPerMinute": 2}}
        })
        .to_string(),
    )?;
    let convert = json!({"value": 10, "from": "km", "to": "mi"});
    let answer = |e: &common::observe::Exchange| e.answer.as_ref().map(Value::to_string);
    for way in [Way::Express, Way::NoExpress] {
        let mut gateway = Served::start(Setup {
            front: Front::Stdio,
            way,
            config: &config,
            flags: &["--client", "ci"],
            env: &[("PB_TEST_CI_TOKEN", "a-token-for-the-ci-client")],
        })
        .await?;
        // The first goes rmcp's way and opens the lane; the third is over the limit (on the
        // lane with it, rmcp's way without).
        for _ in 0..2 {
            let ok = gateway.call("units-convert", convert.clone(), None).await?;
            let ok = answer(&ok).unwrap_or_default();
            assert!(ok.contains("6.213712 mi"), "{way:?}: {ok}");
        }
        let refused = gateway.call("units-convert", convert.clone(), None).await?;
        let refused = answer(&refused).unwrap_or_default();
        assert!(refused.contains("callsPerMinute"), "{way:?}: {refused}");
        let text = gateway.metrics_text().await?;
        let ci = ("pegboard_client", "ci");
        let ok = [
            ci,
            ("gen_ai_tool_name", "units-convert"),
            ("error_type", ""),
        ];
        assert_eq!(
            sample(&text, "mcp_server_operation_duration_seconds_count", &ok),
            2.0,
            "{way:?}: {text}"
        );
        // Refused before it was routed: no tool, no server, and no request upstream.
        let denied = [
            ci,
            ("gen_ai_tool_name", "_unknown"),
            ("pegboard_server", ""),
            ("error_type", "denied"),
        ];
        assert_eq!(
            sample(
                &text,
                "mcp_server_operation_duration_seconds_count",
                &denied
            ),
            1.0,
            "{way:?}: {text}"
        );
        assert_eq!(
            sample(&text, "mcp_client_operation_duration_seconds_count", &[]),
            2.0,
            "{way:?}: only the calls sent upstream: {text}"
        );
        let lane = gateway.lane_calls();
        match way {
            Way::Express => assert_eq!(lane, 2, "the second and the refused call"),
            Way::NoExpress => assert_eq!(lane, 0),
        }
    }
    Ok(())
}
