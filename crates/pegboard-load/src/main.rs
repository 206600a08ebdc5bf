//! `pegboard-load`: what `pegboard serve` adds to a `tools/call`, measured against the backend alone.
//!
//! One process, raw JSON-RPC. For each backend it starts the backend directly (stdio),
//! `pegboard serve` over stdio and `pegboard serve --http` in front of the same backend, then
//! runs `tools/call` with 1, 16 and 64 requests in flight, and `tools/list` on a 1,000-tool
//! board. See the crate's README for the columns.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod backend;
mod cpu;
mod footprint;
mod gateway;
mod http;
mod parse_cost;
mod relay;
mod relay_http;
mod report;
mod rpc;
mod stdio;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;

use crate::cpu::Probe;
use crate::http::HttpPeer;
use crate::report::Row;
use crate::rpc::{Budget, Template};
use crate::stdio::StdioPeer;

/// Load harness for the PegBoard gateway (loopback only).
#[derive(Debug, Parser)]
#[command(name = "pegboard-load", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Serve the built-in backend over stdio (`echo`, `work {ms}`, fillers up to --tools).
    Backend {
        /// Tools in all.
        #[arg(long, default_value = "2")]
        tools: usize,
    },
    /// How fast `pegboard serve` has the full board of N local servers, and its idle memory.
    Footprint {
        /// Local servers (`pegboard demo-server units`) on the board.
        #[arg(long, default_value = "5")]
        servers: usize,
        /// Starts measured (medians are reported).
        #[arg(long, default_value = "10")]
        rounds: usize,
    },
    /// The JSON work of one tools/call, rmcp's generic parse against a shape-known one (ns per message).
    ParseCost,
    /// The floor of an HTTP front: POSTed messages to BACKEND's stdin, its answers as the bodies.
    RelayHttp {
        /// The backend's command line.
        #[arg(trailing_var_arg = true, required = true)]
        backend: Vec<String>,
    },
    /// The floor of a stdio hop: forward lines to BACKEND and back, renaming `b-<tool>`.
    Relay {
        /// Also parse and re-serialise every message (serde_json::Value).
        #[arg(long)]
        parse: bool,
        /// The backend's command line.
        #[arg(trailing_var_arg = true, required = true)]
        backend: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendName {
    /// The demo units server's `convert` (`pegboard demo-server units`).
    Units,
    /// server-everything's `echo` (node).
    Everything,
    /// The built-in backend's `work {ms: 1}`: a tool that takes ~1 ms.
    Work1ms,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Front {
    /// The backend alone, over stdio.
    Direct,
    /// Through `pegboard serve`, over stdio.
    Stdio,
    /// Through `pegboard serve --http`, over streamable HTTP.
    Http,
    /// Through `pegboard-load relay`: the floor of a stdio hop (bytes forwarded, nothing parsed).
    Relay,
    /// Through `pegboard-load relay --parse`: the floor plus one JSON parse and write per message.
    RelayParse,
    /// Through `pegboard-load relay-http`: the floor of an HTTP front (hyper, bytes forwarded).
    RelayHttp,
    /// Through the `mcp-proxy` crate's gateway (streamable HTTP at `/`); needs --mcp-proxy.
    McpProxy,
}

impl Front {
    fn label(self) -> &'static str {
        match self {
            Front::Direct => "direct",
            Front::Stdio => "pegboard stdio",
            Front::Http => "pegboard http",
            Front::Relay => "relay (floor)",
            Front::RelayParse => "relay + parse",
            Front::RelayHttp => "relay http (floor)",
            Front::McpProxy => "mcp-proxy http",
        }
    }
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The `pegboard` binary (default: next to this one, i.e. target/release/pegboard).
    #[arg(long)]
    pegboard: Option<PathBuf>,
    /// server-everything's launcher (skipped when absent).
    #[arg(
        long,
        default_value = "target/test-deps/node/node_modules/.bin/mcp-server-everything"
    )]
    everything: PathBuf,
    /// Backends to measure.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "units,everything,work1ms"
    )]
    backends: Vec<BackendName>,
    /// Fronts to measure (direct is always run: the ratios need it).
    #[arg(long, value_delimiter = ',', default_value = "direct,stdio,http")]
    fronts: Vec<Front>,
    /// Requests in flight.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// At most this many measured calls per run.
    #[arg(long, default_value = "5000")]
    calls: u64,
    /// At most this many seconds per run.
    #[arg(long, default_value = "2")]
    seconds: f64,
    /// Unmeasured calls before each run.
    #[arg(long, default_value = "200")]
    warmup: u64,
    /// Rounds at each concurrency, the fronts interleaved (direct, then each front, again): each
    /// column is the median over the rounds, × and +p50 taken within a round. On a shared
    /// machine one round's numbers swing by tens of µs.
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Tools on the board listed with tools/list (0: skip the listing runs).
    #[arg(long, default_value = "1000")]
    list_tools: usize,
    /// The gateway binary, when it is not the one given by --pegboard (which also runs the units backend).
    #[arg(long)]
    gateway_bin: Option<PathBuf>,
    /// The `mcp-proxy` binary (crates.io `mcp-proxy`), for the `mcp-proxy` front.
    #[arg(long)]
    mcp_proxy: Option<PathBuf>,
    /// KEY=VALUE added to the gateway's environment (repeatable), e.g. TOKIO_WORKER_THREADS=1.
    #[arg(long, value_parser = parse_env)]
    gateway_env: Vec<(String, String)>,
    /// KEY=VALUE added to every backend's environment, direct or behind a gateway (repeatable).
    #[arg(long, value_parser = parse_env)]
    backend_env: Vec<(String, String)>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{s:?} is not KEY=VALUE"))
}

/// A backend: its argv, the tool called and the arguments.
struct Backend {
    label: String,
    argv: Vec<String>,
    method: &'static str,
    tool: Option<&'static str>,
    arguments: serde_json::Value,
}

impl Backend {
    fn request(&self, front: Front) -> Template {
        match self.tool {
            Some(tool) => {
                let name = match front {
                    Front::Direct => tool.to_owned(),
                    _ => format!("{}-{tool}", gateway::NAMESPACE),
                };
                Template::new(
                    self.method,
                    &json!({"name": name, "arguments": self.arguments}),
                )
            }
            None => Template::new(self.method, &json!({})),
        }
    }
}

fn backends(args: &RunArgs, pegboard: &std::path::Path) -> Result<Vec<Backend>> {
    let me = std::env::current_exe()?.display().to_string();
    let pb = pegboard.display().to_string();
    let mut out = Vec::new();
    for name in &args.backends {
        out.push(match name {
            BackendName::Units => Backend {
                label: "units convert".into(),
                argv: vec![pb.clone(), "demo-server".into(), "units".into()],
                method: "tools/call",
                tool: Some("convert"),
                arguments: json!({"value": 10, "from": "km", "to": "mi"}),
            },
            BackendName::Everything => {
                if !args.everything.exists() {
                    eprintln!(
                        "pegboard-load: skipping server-everything: {} not found (scripts/setup-test-deps.sh installs it)",
                        args.everything.display()
                    );
                    continue;
                }
                Backend {
                    label: "everything echo".into(),
                    argv: vec![
                        std::fs::canonicalize(&args.everything)?
                            .display()
                            .to_string(),
                        "stdio".into(),
                    ],
                    method: "tools/call",
                    tool: Some("echo"),
                    arguments: json!({"message": "hello"}),
                }
            }
            BackendName::Work1ms => Backend {
                label: "work 1 ms".into(),
                argv: vec![me.clone(), "backend".into()],
                method: "tools/call",
                tool: Some("work"),
                arguments: json!({"ms": 1}),
            },
        });
    }
    if args.list_tools > 0 {
        out.push(Backend {
            label: format!("tools/list {}", args.list_tools),
            argv: vec![
                me,
                "backend".into(),
                "--tools".into(),
                args.list_tools.to_string(),
            ],
            method: "tools/list",
            tool: None,
            arguments: json!({}),
        });
    }
    Ok(out)
}

/// Every front of one backend, all concurrencies; direct first at each concurrency.
async fn measure(
    backend: &Backend,
    args: &RunArgs,
    pegboard: &std::path::Path,
    dir: &std::path::Path,
) -> Result<Vec<Row>> {
    let label = &backend.label;
    let slug: String = label
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let config = gateway::write_config(dir, &slug, &backend.argv, &args.backend_env)?;
    let gateway_bin = args.gateway_bin.as_deref().unwrap_or(pegboard);
    let mut direct = StdioPeer::start(&backend.argv, &args.backend_env)
        .await
        .with_context(|| format!("{label}: direct"))?;
    let me = std::env::current_exe()?.display().to_string();
    let mut piped = Vec::new();
    for &front in &args.fronts {
        let argv = match front {
            Front::Direct | Front::Http | Front::McpProxy | Front::RelayHttp => continue,
            Front::Stdio => gateway::stdio_argv(gateway_bin, &config),
            Front::Relay | Front::RelayParse => {
                let mut argv = vec![me.clone(), "relay".into()];
                if front == Front::RelayParse {
                    argv.push("--parse".into());
                }
                argv.push("--".into());
                argv.extend(backend.argv.iter().cloned());
                argv
            }
        };
        // The relay passes its environment on to the backend it starts, as pegboard does.
        let env = match front {
            Front::Stdio => args.gateway_env.clone(),
            _ => args.backend_env.clone(),
        };
        let peer = StdioPeer::start(&argv, &env)
            .await
            .with_context(|| format!("{label}: {}", front.label()))?;
        piped.push((front, peer));
    }
    let (http_gateway, mut via_http) = match args.fronts.contains(&Front::Http) {
        true => {
            let gw = gateway::start_http(gateway_bin, &config, &args.gateway_env).await?;
            let peer = HttpPeer::start(gw.addr, "/mcp")
                .await
                .with_context(|| format!("{label}: pegboard serve --http"))?;
            (Some(gw), Some(peer))
        }
        false => (None, None),
    };
    let (relay_http, mut via_relay_http) = match args.fronts.contains(&Front::RelayHttp) {
        true => {
            let mut command = tokio::process::Command::new(&me);
            command
                .envs(args.backend_env.iter().map(|(k, v)| (k, v)))
                .args(["relay-http", "--"])
                .args(&backend.argv);
            let gw = gateway::listening(command, "pegboard-load relay-http").await?;
            let peer = HttpPeer::start(gw.addr, "/mcp")
                .await
                .with_context(|| format!("{label}: relay-http"))?;
            (Some(gw), Some(peer))
        }
        false => (None, None),
    };
    let (proxy_gateway, mut via_proxy) =
        match (args.fronts.contains(&Front::McpProxy), &args.mcp_proxy) {
            (false, _) => (None, None),
            (true, None) => anyhow::bail!("the mcp-proxy front needs --mcp-proxy PATH"),
            (true, Some(binary)) => {
                let gw = gateway::start_mcp_proxy(binary, dir, &slug, &backend.argv).await?;
                let peer = HttpPeer::start(gw.addr, "/")
                    .await
                    .with_context(|| format!("{label}: mcp-proxy"))?;
                (Some(gw), Some(peer))
            }
        };
    // tools/list is what a client does once per session: sequential only.
    let levels: &[usize] = if backend.tool.is_none() {
        &[1]
    } else {
        &args.concurrency
    };
    let budget = Budget {
        warmup: args.warmup,
        calls: args.calls,
        time: Duration::from_secs_f64(args.seconds),
    };
    let direct_probe = Probe::of(direct.pid());
    let [http_probe, relay_http_probe, proxy_probe] = [&http_gateway, &relay_http, &proxy_gateway]
        .map(|gw| Probe::of(gw.as_ref().and_then(gateway::HttpGateway::pid)));
    let mut rows = Vec::new();
    for &n in levels {
        // Per round: the direct row, then one row per front (in the order below).
        let mut rounds: Vec<Vec<Row>> = Vec::new();
        for _ in 0..args.rounds {
            let samples = direct
                .load(&backend.request(Front::Direct), n, budget, direct_probe)
                .await?;
            let base = Row::new(label, "direct", n, samples, None);
            let mut round = Vec::new();
            for (front, peer) in &mut piped {
                let probe = Probe::of(peer.pid());
                let samples = peer
                    .load(&backend.request(*front), n, budget, probe)
                    .await?;
                round.push(Row::new(label, front.label(), n, samples, Some(&base)));
            }
            if let Some(peer) = via_http.as_mut() {
                let samples = peer
                    .load(&backend.request(Front::Http), n, budget, http_probe)
                    .await?;
                round.push(Row::new(label, "pegboard http", n, samples, Some(&base)));
            }
            if let Some(peer) = via_relay_http.as_mut() {
                let samples = peer
                    .load(
                        &backend.request(Front::RelayHttp),
                        n,
                        budget,
                        relay_http_probe,
                    )
                    .await?;
                round.push(Row::new(
                    label,
                    Front::RelayHttp.label(),
                    n,
                    samples,
                    Some(&base),
                ));
            }
            if let Some(peer) = via_proxy.as_mut() {
                let samples = peer
                    .load(&backend.request(Front::McpProxy), n, budget, proxy_probe)
                    .await?;
                round.push(Row::new(
                    label,
                    Front::McpProxy.label(),
                    n,
                    samples,
                    Some(&base),
                ));
            }
            round.insert(0, base);
            rounds.push(round);
        }
        let fronts = rounds.first().map_or(0, Vec::len);
        for i in 0..fronts {
            let runs: Vec<Row> = rounds.iter().filter_map(|r| r.get(i).cloned()).collect();
            rows.extend(Row::median(&runs));
        }
    }
    direct.close().await;
    for (_, peer) in piped {
        peer.close().await;
    }
    drop((via_http, via_relay_http, via_proxy));
    for gw in [http_gateway, relay_http, proxy_gateway]
        .into_iter()
        .flatten()
    {
        gw.stop().await;
    }
    Ok(rows)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match &cli.command {
        Some(Cmd::Relay { parse, backend }) => return relay::run(backend, *parse),
        Some(Cmd::RelayHttp { backend }) => return relay_http::run(backend),
        Some(Cmd::ParseCost) => return parse_cost::run(),
        _ => {}
    }
    let runtime = tokio::runtime::Runtime::new()?;
    match cli.command {
        Some(Cmd::Backend { tools }) => runtime.block_on(backend::run(tools)),
        Some(Cmd::Footprint { servers, rounds }) => runtime.block_on(async {
            let pegboard = pegboard_binary(cli.run.pegboard.as_deref())?;
            footprint::run(&pegboard, servers, rounds).await
        }),
        _ => runtime.block_on(run(cli.run)),
    }
}

/// `--pegboard`, else the `pegboard` next to this binary.
fn pegboard_binary(given: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
    let pegboard = match given {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()?
            .parent()
            .context("no folder for this binary")?
            .join("pegboard"),
    };
    std::fs::canonicalize(&pegboard).with_context(|| {
        format!(
            "{} not found: build it with `cargo build --release -p pegboard-cli` or pass --pegboard",
            pegboard.display()
        )
    })
}

async fn run(args: RunArgs) -> Result<()> {
    let pegboard = pegboard_binary(args.pegboard.as_deref())?;
    let dir = std::env::temp_dir().join(format!("pegboard-load-{}", std::process::id()));
    let mut rows = Vec::new();
    let mut result = Ok(());
    for backend in backends(&args, &pegboard)? {
        match measure(&backend, &args, &pegboard, &dir).await {
            Ok(r) => {
                if !args.json {
                    eprintln!("{}", report::table(&r));
                }
                rows.extend(r);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("{}", report::table(&rows));
    }
    result
}
