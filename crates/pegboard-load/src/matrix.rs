//! The measured matrix: for each backend, every front started once, then each concurrency in
//! interleaved rounds (see the crate's README for the fronts and the columns).

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use crate::cpu::Probe;
use crate::http::HttpPeer;
use crate::report::{self, Row};
use crate::rpc::{Budget, Template};
use crate::sink::OtlpSink;
use crate::stdio::StdioPeer;
use crate::{BackendName, Front, RunArgs, Telemetry, gateway, pegboard_binary};

/// Measure every backend `args` names through every front, and print the table (or the JSON).
pub(crate) async fn run(args: RunArgs) -> Result<()> {
    let pegboard = pegboard_binary(args.pegboard.as_deref())?;
    let dir = std::env::temp_dir().join(format!("pegboard-load-{}", std::process::id()));
    // The `traces` gateways export to `--otlp-endpoint`, else to a sink of the harness's own.
    let sink = match (
        args.telemetry.contains(&Telemetry::Traces),
        &args.otlp_endpoint,
    ) {
        (true, None) => Some(OtlpSink::start().await?),
        _ => None,
    };
    let otlp = match &sink {
        Some(sink) => Some(sink.endpoint.as_str()),
        None => args.otlp_endpoint.as_deref(),
    };
    let mut rows = Vec::new();
    let mut result = Ok(());
    for backend in backends(&args, &pegboard)? {
        match measure(&backend, &args, otlp, &pegboard, &dir).await {
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
    if let Some(sink) = &sink {
        // Proof that the spans left the gateways (each `traces` row exported its calls' spans).
        let (requests, bytes) = sink.received();
        eprintln!(
            "OTLP sink ({}): {requests} export requests, {bytes} bytes",
            sink.endpoint
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("{}", report::table(&rows));
    }
    result
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
    otlp: Option<&str>,
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
    // Each `pegboard serve` front once per `--telemetry` value, labelled with it; first, with
    // `--pegboard-before`, that binary as it starts by default.
    let mut telemetry = Vec::new();
    if let Some(before) = &args.pegboard_before {
        telemetry.push((
            report::BEFORE,
            before.as_path(),
            Vec::new(),
            args.gateway_env.clone(),
        ));
    }
    for &t in &args.telemetry {
        let (extra, mut env) = gateway::telemetry_setup(t, otlp, args.store.as_deref())?;
        env.extend(args.gateway_env.iter().cloned());
        telemetry.push((t.suffix(), gateway_bin, extra, env));
    }
    let limited_suffix = Telemetry::StoreLimit.suffix();
    let limited_config = if args.telemetry.contains(&Telemetry::StoreLimit) {
        Some(gateway::with_limited_client(&config)?)
    } else {
        None
    };
    let mut piped = Vec::new();
    for &front in &args.fronts {
        let mut runs = Vec::new();
        match front {
            Front::Direct | Front::Http | Front::McpProxy | Front::RelayHttp => continue,
            Front::Stdio => {
                // The stdio front counts its client's limits in memory: no `store limit` row.
                for (suffix, bin, extra, env) in telemetry.iter().filter(|t| t.0 != limited_suffix)
                {
                    let mut argv = gateway::stdio_argv(bin, &config);
                    argv.extend(extra.iter().cloned());
                    runs.push((format!("{}{suffix}", front.label()), argv, env.clone()));
                }
            }
            Front::Relay | Front::RelayParse => {
                let mut argv = vec![me.clone(), "relay".into()];
                if front == Front::RelayParse {
                    argv.push("--parse".into());
                }
                argv.push("--".into());
                argv.extend(backend.argv.iter().cloned());
                // The relay passes its environment on to the backend it starts, as pegboard does.
                runs.push((front.label().to_owned(), argv, args.backend_env.clone()));
            }
        }
        for (name, argv, env) in runs {
            let peer = StdioPeer::start(&argv, &env)
                .await
                .with_context(|| format!("{label}: {name}"))?;
            piped.push((front, name, peer));
        }
    }
    // The HTTP fronts, in this order: each a process listening, and the harness's client of it.
    let mut served = Vec::new();
    if args.fronts.contains(&Front::Http) {
        for (suffix, bin, extra, env) in &telemetry {
            let (config, token) = match &limited_config {
                Some(limited) if *suffix == limited_suffix => {
                    (limited, Some(gateway::LIMITED_TOKEN))
                }
                _ => (&config, None),
            };
            let gw = gateway::start_http(bin, config, extra, env).await?;
            let name = format!("{}{suffix}", Front::Http.label());
            let peer = HttpPeer::start_as(gw.addr, "/mcp", token)
                .await
                .with_context(|| format!("{label}: {name}"))?;
            served.push((Front::Http, name, gw, peer));
        }
    }
    if args.fronts.contains(&Front::RelayHttp) {
        let mut command = tokio::process::Command::new(&me);
        command
            .envs(args.backend_env.iter().map(|(k, v)| (k, v)))
            .args(["relay-http", "--"])
            .args(&backend.argv);
        let gw = gateway::listening(command, "pegboard-load relay-http").await?;
        let peer = HttpPeer::start(gw.addr, "/mcp")
            .await
            .with_context(|| format!("{label}: relay-http"))?;
        served.push((
            Front::RelayHttp,
            Front::RelayHttp.label().to_owned(),
            gw,
            peer,
        ));
    }
    if args.fronts.contains(&Front::McpProxy) {
        let Some(binary) = &args.mcp_proxy else {
            anyhow::bail!("the mcp-proxy front needs --mcp-proxy PATH");
        };
        let gw = gateway::start_mcp_proxy(binary, dir, &slug, &backend.argv).await?;
        let peer = HttpPeer::start(gw.addr, "/")
            .await
            .with_context(|| format!("{label}: mcp-proxy"))?;
        served.push((
            Front::McpProxy,
            Front::McpProxy.label().to_owned(),
            gw,
            peer,
        ));
    }
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
            for (front, name, peer) in &mut piped {
                let probe = Probe::of(peer.pid());
                let samples = peer
                    .load(&backend.request(*front), n, budget, probe)
                    .await?;
                round.push(Row::new(label, name, n, samples, Some(&base)));
            }
            for (front, name, gw, peer) in &mut served {
                let probe = Probe::of(gw.pid());
                let samples = peer
                    .load(&backend.request(*front), n, budget, probe)
                    .await?;
                round.push(Row::new(label, name, n, samples, Some(&base)));
            }
            round.insert(0, base);
            report::paired(&mut round);
            rounds.push(round);
        }
        let fronts = rounds.first().map_or(0, Vec::len);
        for i in 0..fronts {
            let runs: Vec<Row> = rounds.iter().filter_map(|r| r.get(i).cloned()).collect();
            rows.extend(Row::median(&runs));
        }
    }
    direct.close().await;
    for (_, _, peer) in piped {
        peer.close().await;
    }
    let (served, clients): (Vec<_>, Vec<_>) = served
        .into_iter()
        .map(|(_, _, gw, peer)| (gw, peer))
        .unzip();
    drop(clients);
    for gw in served {
        gw.stop().await;
    }
    Ok(rows)
}
