//! Issue 10 item 19: stateful clients across two replicas behind a real, stock nginx.
//!
//! Two `pegboard serve --http` replicas (`r1` by `--replica-id`, `r2` by `PEGBOARD_REPLICA_ID`) run
//! the demo servers behind nginx configured by `docs/deploy/nginx-replicas.conf` itself (its ports
//! substituted, wrapped in a main config that keeps nginx's pid, logs and temp files in a temp dir,
//! so it runs as any user). The official Python SDK client (legacy mode: the initialize handshake,
//! a session kept by the server) and the TypeScript SDK client each make 1,000 `tools/call`s over
//! 10 sessions; every one must succeed, and both replicas must have opened sessions. The same
//! replicas behind the same file with its `map` taken out (plain round robin) must fail a good share
//! of such calls: that is what the `map` is for.
//!
//! nginx comes from PATH or /usr/sbin/nginx; the SDK clients from `scripts/setup-test-deps.sh`
//! (`target/test-deps`, or `$PEGBOARD_TEST_DEPS`). When either is missing the tests fail and say so.

mod common;

use common::nginx::Nginx;
use common::sdk_replicas::{self, Sdk};

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The shipped config: the test runs this very file.
const SHIPPED: &str = include_str!("../../../docs/deploy/nginx-replicas.conf");
/// The shipped file's two replica addresses and listen line, replaced by the test's.
const SHIPPED_R1: &str = "127.0.0.1:8001";
const SHIPPED_R2: &str = "127.0.0.1:8002";
const SHIPPED_LISTEN: &str = "listen 80;";
const STICKY_PROXY_PASS: &str = "proxy_pass http://$pegboard_backend;";
/// The name the replicas are reached under in the shipped file (`server_name`, `--allow-host`).
const PUBLIC_HOST: &str = "mcp.example.com";

/// One client run, all its sessions and calls.
const RUN: Duration = Duration::from_secs(180);

/// The shipped config with the test's addresses; `sticky: false` takes the `map` routing out
/// (every request round robin over the pool).
fn site_config(r1: &str, r2: &str, listen: &str, sticky: bool) -> Result<String> {
    for needle in [SHIPPED_R1, SHIPPED_R2, SHIPPED_LISTEN, STICKY_PROXY_PASS] {
        if !SHIPPED.contains(needle) {
            bail!(
                "docs/deploy/nginx-replicas.conf no longer contains `{needle}`: update this test"
            );
        }
    }
    let mut site = SHIPPED
        .replace(SHIPPED_R1, r1)
        .replace(SHIPPED_R2, r2)
        .replace(SHIPPED_LISTEN, &format!("listen {listen};"));
    if !sticky {
        site = site.replace(STICKY_PROXY_PASS, "proxy_pass http://pegboard_pool;");
    }
    Ok(site)
}

/// The two replicas on the demo servers: `r1` named by flag, `r2` by environment.
async fn replicas(dir: &Path) -> Result<[(tokio::process::Child, String); 2]> {
    let config = common::write_demo_config(dir);
    let r1 = common::serve_http(
        &config,
        &["--replica-id", "r1", "--allow-host", PUBLIC_HOST],
        &[],
    )
    .await?;
    let r2 = common::serve_http(
        &config,
        &["--allow-host", PUBLIC_HOST],
        &[("PEGBOARD_REPLICA_ID", "r2")],
    )
    .await?;
    Ok([r1, r2])
}

/// nginx in front of the two replicas, with or without the sticky `map`.
async fn proxy(replicas: &[(tokio::process::Child, String); 2], sticky: bool) -> Result<Nginx> {
    let [(_, r1), (_, r2)] = replicas;
    let site = site_config(
        &common::host_port(r1),
        &common::host_port(r2),
        "{LISTEN}",
        sticky,
    )?;
    Nginx::start(&site).await
}

/// What a client run printed: calls answered right, of how many, sessions by replica, errors.
#[derive(Debug)]
struct Tally {
    ok: u64,
    total: u64,
    sessions: serde_json::Map<String, Value>,
    raw: String,
}

impl Tally {
    fn sessions_on(&self, replica: &str) -> u64 {
        self.sessions
            .get(replica)
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
}

/// `sessions` sessions of `calls` calls each through `url`, `concurrency` sessions at a time.
async fn run_client(
    sdk: Sdk,
    url: &str,
    sessions: u32,
    calls: u32,
    concurrency: u32,
    timeout_secs: u32,
) -> Result<Tally> {
    let mut command = sdk_replicas::command(sdk);
    for (flag, value) in [
        ("--sessions", sessions),
        ("--calls", calls),
        ("--concurrency", concurrency),
        ("--timeout", timeout_secs),
    ] {
        command.arg(flag).arg(value.to_string());
    }
    command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .with_context(|| format!("spawn the {sdk:?} client (is node/python installed?)"))?;
    let out = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .with_context(|| format!("the {sdk:?} client ran over {RUN:?}"))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let parsed: Value = serde_json::from_str(line).with_context(|| {
        format!(
            "the {sdk:?} client printed no result ({}); stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok(Tally {
        ok: parsed["ok"].as_u64().context("ok")?,
        total: parsed["total"].as_u64().context("total")?,
        sessions: parsed["sessions"].as_object().cloned().unwrap_or_default(),
        raw: line.to_string(),
    })
}

#[tokio::test]
async fn stateful_sdk_clients_make_every_call_through_nginx_with_the_shipped_map() -> Result<()> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let replicas = replicas(dir.path()).await?;
    let nginx = proxy(&replicas, true).await?;
    for sdk in [Sdk::Python, Sdk::Ts] {
        let tally = run_client(sdk, &nginx.url, 10, 100, 4, 10).await?;
        println!("{sdk:?} through nginx with the map: {}", tally.raw);
        assert_eq!(
            (tally.ok, tally.total),
            (1000, 1000),
            "{sdk:?}: {}",
            tally.raw
        );
        let (r1, r2) = (tally.sessions_on("r1"), tally.sessions_on("r2"));
        assert!(
            r1 > 0 && r2 > 0 && r1 + r2 == 10,
            "{sdk:?}: sessions should be spread over r1 and r2, all named after their replica: {}",
            tally.raw
        );
    }
    println!("sticky: 2 × 1,000 calls in {:?}", started.elapsed());
    Ok(())
}

#[tokio::test]
async fn without_the_map_round_robin_breaks_stateful_clients() -> Result<()> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let replicas = replicas(dir.path()).await?;
    let nginx = proxy(&replicas, false).await?;
    for sdk in [Sdk::Python, Sdk::Ts] {
        // All sessions at once, short deadlines: a client waiting on an answer that went to the
        // wrong replica gives up after 3 s.
        let tally = run_client(sdk, &nginx.url, 5, 20, 5, 3).await?;
        println!("{sdk:?} through nginx, round robin only: {}", tally.raw);
        assert_eq!(tally.total, 100);
        assert!(
            tally.ok * 5 <= tally.total * 4,
            "{sdk:?}: round robin alone should fail at least a fifth of stateful calls, so the test \
             with the map proves something: {}",
            tally.raw
        );
    }
    println!("round robin: 2 × 100 calls in {:?}", started.elapsed());
    Ok(())
}

#[test]
fn a_bad_replica_id_is_refused_with_the_reason() -> Result<()> {
    for (id, says) in [("r.1", "letters, digits"), ("", "empty")] {
        let out = std::process::Command::new(common::pegboard())
            .args(["serve", "--http", "127.0.0.1:0", "--replica-id", id])
            .env_remove("PEGBOARD_REPLICA_ID")
            .stdin(Stdio::null())
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{id:?} was accepted");
        assert!(stderr.contains(says), "{id:?}: {stderr}");
    }
    Ok(())
}
