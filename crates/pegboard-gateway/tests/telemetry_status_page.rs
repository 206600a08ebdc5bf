//! The status page in a real headless browser (Debian's `chromium`): the DOM it builds shows each
//! server's state, why it failed, tools, restarts, calls and errors; a screenshot of it is a PNG
//! of the window's size. (`docs/status.png` is a real gateway's page:
//! `crates/pegboard-cli/tests/e2e_status.rs`.)

#[path = "telemetry_support/mod.rs"]
mod support;

use std::time::Duration;

use pegboard_gateway::testing::telemetry::{ErrorType, ServerState, Telemetry, TelemetryOptions};
use support::chromium::{dom, row, screenshot};
use support::{Call, drive, listen};

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 520;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_shows_each_servers_state_counts_and_why() {
    let telemetry = Telemetry::new(TelemetryOptions {
        servers: ["units", "notes", "docs", "github", "search"]
            .map(String::from)
            .to_vec(),
        ..TelemetryOptions::default()
    })
    .expect("telemetry");
    let t = &telemetry;
    t.server_state("units", ServerState::Up, None);
    t.server_tools("units", 3);
    t.server_state("notes", ServerState::Up, None);
    t.server_tools("notes", 4);
    t.server_state(
        "docs",
        ServerState::Failed,
        Some("exited with status 1: ModuleNotFoundError: No module named 'docs_server'"),
    );
    for _ in 0..3 {
        t.server_restarted("docs");
    }
    t.server_state(
        "github",
        ServerState::NeedsLogin,
        Some("run `pegboard login github`"),
    );
    t.server_state(
        "search",
        ServerState::Restarting,
        Some("connection closed; retry in 4 s"),
    );
    t.server_restarted("search");

    let convert =
        Call::new("units", "convert", "units-convert", None).taking(Duration::from_millis(2));
    let search =
        Call::new("notes", "search", "notes-search", None).taking(Duration::from_millis(12));
    let mut calls = vec![convert; 40];
    calls.extend(vec![
        Call {
            outcome: Some(ErrorType::ToolError),
            ..convert
        };
        2
    ]);
    calls.extend(vec![search; 18]);
    calls.push(
        Call {
            outcome: Some(ErrorType::Timeout),
            ..search
        }
        .taking(Duration::from_millis(80)),
    );
    drive(t, &calls).await;

    let (addr, stop) = listen(&telemetry).await;
    let url = format!("http://{addr}/status");
    let dom = dom(&url).await;

    assert!(dom.contains("<h1>PegBoard status</h1>"), "{dom}");
    assert!(dom.contains("2 of 5 servers up"), "{dom}");
    assert!(!dom.contains("<script"));
    let units = row(&dom, "units");
    assert!(units.contains(">up<"), "{units}");
    // tools, restarts, calls, errors
    assert!(
        units.contains(
            r#"<td class="n">3</td><td class="n">0</td><td class="n">42</td><td class="n">2</td>"#
        ),
        "{units}"
    );
    assert!(units.contains(" ms</td>"), "p50/p99 shown: {units}");
    let notes = row(&dom, "notes");
    assert!(
        notes.contains(
            r#"<td class="n">4</td><td class="n">0</td><td class="n">19</td><td class="n">1</td>"#
        ),
        "{notes}"
    );
    let docs = row(&dom, "docs");
    assert!(
        docs.contains(">failed<") && docs.contains("No module named 'docs_server'"),
        "{docs}"
    );
    assert!(
        docs.contains(r#"<td class="n">0</td><td class="n">3</td>"#),
        "{docs}"
    );
    assert!(row(&dom, "github").contains(">needs login<"));
    assert!(row(&dom, "search").contains(">restarting<"));

    let shots = tempfile::tempdir().expect("dir");
    let png = shots.path().join("status.png");
    screenshot(&url, &png, WIDTH, HEIGHT).await;
    stop.cancel();
}
