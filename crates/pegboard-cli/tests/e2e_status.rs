//! The status of a real `pegboard serve --metrics`: after known calls, a crash and a restart,
//! and a server that cannot start, `pegboard status` prints each server's state, tools,
//! restarts, calls and errors as a table (and as JSON), and headless Chromium (Debian's
//! `chromium`) shows the same on the status page. With `PEGBOARD_STATUS_SCREENSHOT=path` the
//! page's screenshot is copied there (how `docs/status.png` is made).

mod common;

#[path = "../../pegboard-gateway/tests/telemetry_support/mod.rs"]
mod telemetry_support;

use anyhow::{Context, Result};
use pegboard_gateway::status::StatusReport;
use serde_json::json;

use common::observe::{Front, Served, Setup, Way, sample, write_config};
use telemetry_support::chromium::{dom, row, screenshot};

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 420;

async fn pegboard(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(common::pegboard())
        .args(args)
        .env_remove("PEGBOARD_TOKEN")
        .output()
        .await
        .expect("run pegboard")
}

/// A gateway with `units` (up), `search` (the test server: crashed once by a call, restarted) and
/// `docs` (a command that exits at once), after known calls.
async fn gateway(dir: &std::path::Path) -> Result<Served> {
    let docs = json!({"command": "sh", "args": ["-c",
        "echo \"ModuleNotFoundError: No module named 'docs_server'\" >&2; exit 1"]});
    let config = write_config(
        dir,
        json!({
            "units": common::demo_server("units", &[]),
            "search": common::demo_server("test", &[]),
            "docs": docs,
        }),
    )?;
    let mut gateway = Served::start(Setup {
        front: Front::Http,
        way: Way::Express,
        config: &config,
        flags: &[],
        env: &[],
    })
    .await?;
    let ok = json!({"value": 10, "from": "km", "to": "mi"});
    for _ in 0..5 {
        gateway.call("units-convert", ok.clone(), None).await?;
    }
    let mismatch = json!({"value": 1, "from": "kg", "to": "mi"});
    gateway.call("units-convert", mismatch, None).await?;
    for _ in 0..3 {
        gateway
            .call("search-echo", json!({"text": "hi"}), None)
            .await?;
    }
    // The server exits: the call fails, the gateway restarts it.
    let crashed = gateway.call("search-crash", json!({}), None).await?;
    assert!(
        crashed.result()["isError"] == true || !crashed.error().is_null(),
        "{:?}",
        crashed.answer
    );
    // The gateway logs that it has recorded the restart (and the server's state) once it has.
    gateway
        .wait_log(
            "search: up again after a restart (recorded in the metrics)",
            1,
        )
        .await?;
    let text = gateway.metrics_text().await?;
    let server = [("pegboard_server", "search")];
    assert_eq!(
        sample(&text, "pegboard_server_restarts_total", &server),
        1.0,
        "{text}"
    );
    assert_eq!(sample(&text, "pegboard_server_up", &server), 1.0, "{text}");
    Ok(gateway)
}

/// The table's row of `server`, split on whitespace.
fn table_row<'a>(text: &'a str, server: &str) -> Vec<&'a str> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(server))
        .unwrap_or_else(|| panic!("no row for {server}:\n{text}"))
        .split_whitespace()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_of_a_real_gateway_as_a_table_json_and_a_page_in_chromium() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let gateway = gateway(dir.path()).await?;
    let url = format!("http://{}", gateway.metrics);

    let out = pegboard(&["status", "--metrics-url", &url]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .next()
            .unwrap_or_default()
            .starts_with("SERVER  STATE"),
        "{text}"
    );
    // server, state, tools, restarts, calls, errors
    assert_eq!(
        &table_row(&text, "units")[..6],
        ["units", "up", "2", "0", "6", "1"],
        "{text}"
    );
    assert_eq!(
        &table_row(&text, "search")[..6],
        ["search", "up", "6", "1", "4", "1"],
        "{text}"
    );
    assert_eq!(
        &table_row(&text, "docs")[..6],
        ["docs", "failed", "0", "0", "0", "0"],
        "{text}"
    );
    // The first line of why (`--json` and the page have the server's stderr too).
    assert!(
        text.contains("docs: failed: `sh` exited during the MCP handshake"),
        "why docs failed: {text}"
    );
    assert!(text.contains("2 of 3 servers up"), "{text}");

    let out = pegboard(&["status", "--metrics-url", &url, "--json"]).await;
    assert!(out.status.success());
    let report: StatusReport = serde_json::from_slice(&out.stdout).context("JSON")?;
    let units = report
        .servers
        .iter()
        .find(|s| s.name == "units")
        .context("units")?;
    assert_eq!((units.calls, units.errors, units.tools), (6, 1, 2));
    let docs = report
        .servers
        .iter()
        .find(|s| s.name == "docs")
        .context("docs")?;
    assert_eq!(docs.state, "failed");
    let why = docs.reason.as_deref().unwrap_or_default();
    assert!(why.contains("No module named 'docs_server'"), "{why}");
    assert!(units.p50_ms.is_some() && units.p99_ms.is_some());
    assert_eq!(report.sessions, 1);

    let page = format!("{url}/status");
    let dom = dom(&page).await;
    assert!(dom.contains("2 of 3 servers up"), "{dom}");
    assert!(!dom.contains("<script"));
    let units = row(&dom, "units");
    assert!(units.contains(">up<"), "{units}");
    // tools, restarts, calls, errors; then p50 and p99
    assert!(
        units.contains(
            r#"<td class="n">2</td><td class="n">0</td><td class="n">6</td><td class="n">1</td>"#
        ),
        "{units}"
    );
    assert!(units.contains(" ms</td>"), "p50/p99 shown: {units}");
    let t = row(&dom, "search");
    assert!(
        t.contains(">up<")
            && t.contains(
                r#"<td class="n">6</td><td class="n">1</td><td class="n">4</td><td class="n">1</td>"#
            ),
        "{t}"
    );
    let docs = row(&dom, "docs");
    assert!(
        docs.contains(">failed<") && docs.contains("No module named 'docs_server'"),
        "{docs}"
    );

    let shots = tempfile::tempdir()?;
    let png = shots.path().join("status.png");
    screenshot(&page, &png, WIDTH, HEIGHT).await;
    if let Some(to) = std::env::var_os("PEGBOARD_STATUS_SCREENSHOT") {
        std::fs::copy(&png, &to)?;
    }
    Ok(())
}

#[tokio::test]
async fn status_without_a_gateway_says_what_to_start_and_exits_1() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let out = pegboard(&[
        "status",
        "--metrics-url",
        &format!("http://127.0.0.1:{port}"),
    ])
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pegboard serve --metrics"), "{err}");
    assert!(out.stdout.is_empty());
}
