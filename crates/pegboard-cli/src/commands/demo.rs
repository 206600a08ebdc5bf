//! `pegboard demo`: the board with the bundled demo servers, and a sample call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::json;

use super::{Loaded, fill_board_from, load_config};
use crate::cli::{DemoArgs, Format};
use crate::commands::{call, tools};
use crate::config::Transport;
use crate::connect::Progress;

/// Where the demo config lives in the checkout.
const DEMO_CONFIG: &str = "examples/demo.json";

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
pub async fn run(args: DemoArgs, progress: Progress) -> Result<i32> {
    let path = match args.config {
        Some(p) => p,
        None => find_demo_config()?,
    };
    eprintln!("pegboard demo: using {}", path.display());
    let mut config = load_config(Some(&path))?;
    // The demo config's commands are relative to the checkout (examples/..): run them from there.
    let root = checkout_root(&path);
    let mut uses_cargo = false;
    for server in &mut config.servers {
        if let Transport::Stdio { command, cwd, .. } = &mut server.transport {
            if cwd.is_none() {
                *cwd = Some(root.clone());
            }
            if command.contains('/') && Path::new(command.as_str()).is_relative() {
                *command = root.join(command.as_str()).to_string_lossy().into_owned();
            }
            if command.contains('/') && !Path::new(command.as_str()).exists() {
                bail!(
                    "the demo server `{}` is not built yet ({command} is missing); build the demo servers with \
                     `cargo build -p demo-servers`, then run `pegboard demo` again",
                    server.name
                );
            }
            uses_cargo |= command == "cargo";
        }
    }
    let startup = if uses_cargo {
        eprintln!(
            "(the demo servers start with `cargo run`: the first run compiles them, which can take minutes)"
        );
        Duration::from_secs(1_800)
    } else {
        Duration::from_secs(30)
    };
    let Loaded { board, .. } = fill_board_from(config, startup, progress).await?;
    println!("\n$ pegboard tools --config {}", path.display());
    let listed = tools::print_tools(&board, Format::Table);
    let mut code = 0;
    if listed.is_ok() {
        match samples()
            .into_iter()
            .find(|(name, _)| board.get_tool(name).is_some())
        {
            Some((name, arguments)) => {
                println!("\n$ pegboard call {name} '{arguments}'");
                code = match call::call_and_print(&board, name, arguments, None, false).await {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("error: {e:#}");
                        1
                    }
                };
                if code == 0 {
                    println!(
                        "\nThat is the board: every server's tools under one namespaced list. Next: \
                         `pegboard serve --config {}` to give it to an MCP client.",
                        path.display()
                    );
                }
            }
            None => eprintln!("(no sample tool on the board to call)"),
        }
    }
    board.shutdown().await;
    listed.map(|()| code)
}

/// The folder holding `examples/` (the demo config's folder's parent), absolute.
fn checkout_root(config: &Path) -> PathBuf {
    let abs = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
    let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|n| n == "examples") {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir)
    } else {
        dir
    }
}

/// `examples/demo.json` in the current folder or a parent, else in this binary's checkout.
fn find_demo_config() -> Result<PathBuf> {
    let mut looked = Vec::new();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut roots: Vec<PathBuf> = cwd.ancestors().map(Path::to_path_buf).collect();
    if let Ok(exe) = std::env::current_exe() {
        // target/debug/pegboard → the checkout is a few folders up.
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_path_buf));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for root in roots {
        let candidate = root.join(DEMO_CONFIG);
        if candidate.is_file() {
            return Ok(candidate);
        }
        if !looked.contains(&candidate) {
            looked.push(candidate);
        }
    }
    let shown: Vec<String> = looked
        .iter()
        .take(6)
        .map(|p| format!("  {}", p.display()))
        .collect();
    bail!(
        "cannot find the demo config `{DEMO_CONFIG}`; looked at:\n{}\nrun `pegboard demo` from the pegboard \
         checkout, or pass --config FILE",
        shown.join("\n")
    )
}
