//! `pegboard-load footprint`: how fast `pegboard serve` has a board of N local servers, and how
//! much memory it holds once idle.
//!
//! Each round starts `pegboard serve -q` over stdio on N `pegboard demo-server units` servers,
//! times the handshake and the first `tools/list` that lists every server's tools (it waits for
//! all of them to start), then reads the gateway's resident memory (`VmRSS`, the gateway process
//! only, not its servers) after the answer. Medians over the rounds.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::rpc::Template;
use crate::stdio::StdioPeer;

/// Measure `rounds` starts of a gateway on `servers` units servers.
pub async fn run(pegboard: &Path, servers: usize, rounds: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("pegboard-footprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let entries: serde_json::Map<String, serde_json::Value> = (0..servers)
        .map(|i| {
            let entry = serde_json::json!({
                "command": pegboard.display().to_string(),
                "args": ["demo-server", "units"],
            });
            (format!("u{i}"), entry)
        })
        .collect();
    let config = dir.join("footprint.json");
    std::fs::write(
        &config,
        serde_json::json!({ "mcpServers": entries }).to_string(),
    )?;
    let argv = crate::gateway::stdio_argv(pegboard, &config);
    let list = Template::new("tools/list", &serde_json::json!({}));
    let (mut ready_ms, mut rss_kib) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        let began = Instant::now();
        let mut gateway = StdioPeer::start(&argv, &[]).await?;
        let answer = gateway.one(&list).await?;
        let took = began.elapsed();
        let listed: serde_json::Value = serde_json::from_slice(&answer)?;
        let tools = listed["result"]["tools"].as_array().map_or(0, Vec::len);
        let namespaces = (0..servers)
            .filter(|i| {
                answer
                    .windows(4)
                    .any(|w| w == format!("\"u{i}-").as_bytes())
            })
            .count();
        if namespaces != servers {
            bail!("the first tools/list had {namespaces} of {servers} servers ({tools} tools)");
        }
        ready_ms.push(took.as_secs_f64() * 1000.0);
        rss_kib.push(resident_kib(gateway.pid().context("the gateway exited")?)?);
        gateway.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{servers} servers, {} rounds: board ready (handshake + full tools/list) median {:.1} ms \
         (min {:.1}); gateway resident memory idle median {:.1} MiB (min {:.1})",
        ready_ms.len(),
        median(&mut ready_ms),
        min(&ready_ms),
        median(&mut rss_kib) / 1024.0,
        min(&rss_kib) / 1024.0,
    );
    Ok(())
}

/// `VmRSS` of process `pid`, in KiB (Linux).
fn resident_kib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .context("reading /proc (Linux only)")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .context("no VmRSS in /proc/PID/status")
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}
