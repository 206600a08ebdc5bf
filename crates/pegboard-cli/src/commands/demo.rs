//! `pegboard demo`: the board with the bundled demo servers, and a sample call.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::json;

use super::{fill_board_from, load_config};
use crate::cli::{DemoArgs, Format};
use crate::commands::{call, tools};
use pegboard_gateway::{Gateway, Progress};

/// Sample calls, tried in order: the first whose tool is on the board is made.
fn samples() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "units-convert",
            json!({"value": 10, "from": "km", "to": "mi"}),
        ),
        ("notes-search", json!({"query": "rust"})),
    ]
}

/// Run `pegboard demo`.
///
/// Without `--config`, the bundled demo servers run as child processes of this very binary
/// (`pegboard demo-server NAME`), so the demo needs nothing but the one build.
pub async fn run(args: DemoArgs, progress: Progress) -> Result<i32> {
    let (config, shown) = match args.config {
        Some(path) => {
            let config = load_config(Some(&path), false)?;
            (config, format!("--config {}", path.display()))
        }
        None => (bundled_config()?, "--config examples/demo.json".to_string()),
    };
    let gateway = Gateway::builder(config)
        .startup_timeout(Duration::from_secs(30))
        .restart(false)
        .progress(progress);
    let gateway = fill_board_from(gateway).await?;
    let board = gateway.board();
    crate::output::println(&format!("\n$ pegboard tools {shown}"))?;
    let listed = tools::print_tools(board, Format::Table);
    let mut code = 0;
    if listed.is_ok() {
        match samples()
            .into_iter()
            .find(|(name, _)| board.get_tool(name).is_some())
        {
            Some((name, arguments)) => {
                crate::output::println(&format!("\n$ pegboard call {name} '{arguments}'"))?;
                code = match call::call_and_print(board, name, arguments, None, false).await {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("error: {e:#}");
                        1
                    }
                };
                if code == 0 {
                    crate::output::println(&format!(
                        "\nThat is the board: every server's tools under one namespaced list. Next: {}",
                        next_step(&shown)
                    ))?;
                }
            }
            None => eprintln!("(no sample tool on the board to call)"),
        }
    }
    gateway.shutdown().await;
    listed.map(|()| code)
}

/// What to do after the demo: serve the demo config from a checkout; elsewhere (installed from a
/// package, no `examples/` at hand) put the user's own servers on the board and connect a client.
fn next_step(shown: &str) -> String {
    if shown != "--config examples/demo.json" || Path::new("examples/demo.json").is_file() {
        format!("`pegboard serve {shown}` to give it to an MCP client.")
    } else {
        "`pegboard import --all` to bring in the servers your MCP clients have, then \
         `pegboard connect CLIENT` (see `pegboard clients`) to give them the board."
            .to_string()
    }
}

/// The demo config with this binary as the command of each bundled server.
fn bundled_config() -> Result<crate::config::Config> {
    let exe = std::env::current_exe()
        .context("cannot find the pegboard binary to start the demo servers")?;
    let exe = exe.to_string_lossy();
    let servers: serde_json::Map<String, serde_json::Value> = ["notes", "units", "docs"]
        .iter()
        .map(|name| {
            (
                name.to_string(),
                json!({ "command": exe, "args": ["demo-server", name] }),
            )
        })
        .collect();
    let text = json!({ "mcpServers": servers }).to_string();
    Ok(crate::config::parse(
        &text,
        Path::new("(bundled demo)"),
        &|var| std::env::var(var).ok(),
    )?)
}

/// `pegboard demo-server NAME`: serve one bundled demo server over stdio (or `--http ADDR`).
pub async fn serve_one(args: crate::cli::DemoServerArgs) -> Result<i32> {
    demo_servers::launch::run_by_name(&args.name, args.args).await?;
    Ok(0)
}
