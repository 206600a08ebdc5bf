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
mod matrix;
mod parse_cost;
mod relay;
mod relay_http;
mod report;
mod rpc;
mod sink;
mod stdio;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

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

/// What `pegboard serve` records while it is measured (`--telemetry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Telemetry {
    /// Neither metrics nor spans: `pegboard serve` as it starts by default.
    Off,
    /// `--metrics 127.0.0.1:0`: every call counted (nothing scrapes it during the run).
    Metrics,
    /// Spans of every call (sampler ratio 1.0) exported over OTLP/HTTP to `--otlp-endpoint`,
    /// else to a sink in the harness's process that counts and drops them.
    Traces,
    /// `--store URL` (the harness's `--store`): sessions kept in Redis or Valkey (a gateway
    /// built with the `store` feature). The measured session is held by the gateway, so a call
    /// should cost no store round trip.
    Store,
    /// `--store URL` as `store`, the measured session being a client's with a fleet-wide
    /// `callsPerMinute` (60,000,000: never reached): each call is counted in the store, one
    /// round trip (HTTP fronts only; the stdio front counts its client in memory).
    StoreLimit,
}

impl Telemetry {
    /// What a front's label gets for it.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Telemetry::Off => "",
            Telemetry::Metrics => " +metrics",
            Telemetry::Traces => " +traces",
            Telemetry::Store => " +store",
            Telemetry::StoreLimit => " +store limit",
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
    /// How each `pegboard serve` front runs, one gateway per value, measured in the same
    /// interleaved rounds: `off`, `metrics` (`--metrics`), `traces` (spans at ratio 1.0, exported
    /// over OTLP/HTTP), `store` (`--store`, the URL below), e.g. `--telemetry off,metrics,traces`.
    #[arg(long, value_delimiter = ',', default_value = "off")]
    telemetry: Vec<Telemetry>,
    /// Another `pegboard` binary (e.g. a build of the code before a change) measured beside the
    /// `--telemetry` gateways in the same rounds, as it starts by default: its rows say `(before)`.
    #[arg(long)]
    pegboard_before: Option<PathBuf>,
    /// The OTLP/HTTP endpoint the `traces` gateways export to (default: a sink of the harness's
    /// own on loopback, which counts the export requests and drops them).
    #[arg(long)]
    otlp_endpoint: Option<String>,
    /// The store the `store` gateways keep their sessions in (`redis://HOST:PORT/DB`).
    #[arg(long)]
    store: Option<String>,
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
        _ => runtime.block_on(matrix::run(cli.run)),
    }
}

/// `--pegboard`, else the `pegboard` next to this binary.
pub(crate) fn pegboard_binary(given: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
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
