//! Startup: servers start and list concurrently (two that never answer cost one timeout), and
//! `pegboard serve` serves at once while they start: each joins the board when it is up (clients get
//! `notifications/tools/list_changed`), a hung one costs one timeout in the background, and `--wait`
//! holds the first `tools/list` until every server has started or failed, at most that long.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

/// How long any one step may take. The hung servers below get a 30 s startup timeout: every test
/// that involves one finishes long before it, and checks that it has not failed yet.
const STEP: Duration = Duration::from_secs(15);
const HUNG_TIMEOUT: &str = "30";

#[tokio::test]
async fn two_hung_servers_cost_one_startup_timeout_not_two() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = json!({"mcpServers": {
        "hung1": common::demo_server("test", &["--hang-list"]),
        "hung2": common::demo_server("test", &["--hang-list"]),
        "units": common::demo_server("units", &[]),
    }});
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;

    let timeout = Duration::from_secs(3);
    let began = Instant::now();
    let out = tokio::process::Command::new(common::pegboard())
        .args(["tools", "--startup-timeout", "3", "--config"])
        .arg(&path)
        .output()
        .await?;
    let took = began.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("units-convert"), "{stdout}");
    // One after the other, the two hung listings alone would take 2 x 3 s.
    assert!(took < timeout * 2, "took {took:?}");
    Ok(())
}

/// Forwards each `notifications/tools/list_changed` into a channel.
#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

/// `pegboard serve` over stdio, connected, with its stderr lines in a channel and kept.
struct Gateway {
    client: RunningService<RoleClient, Listener>,
    changes: mpsc::UnboundedReceiver<()>,
    lines: mpsc::UnboundedReceiver<String>,
    log: String,
}

impl Gateway {
    /// Serve `servers` (an `mcpServers` object) with `flags`; returns once the handshake is done.
    async fn start(dir: &Path, servers: Value, flags: &[&str]) -> Result<Self> {
        let path = dir.join("pegboard.json");
        std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
        let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
            c.arg("serve").arg("--config").arg(&path).args(flags);
        });
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()?;
        let (line_tx, lines) = mpsc::unbounded_channel();
        let mut stderr = BufReader::new(stderr.context("stderr")?).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                let _ = line_tx.send(line);
            }
        });
        let (tx, changes) = mpsc::unbounded_channel();
        let client = tokio::time::timeout(STEP, Listener(tx).serve(transport))
            .await
            .context("the gateway did not answer initialize")??;
        Ok(Self {
            client,
            changes,
            lines,
            log: String::new(),
        })
    }

    /// Read stderr until a line contains `needle`.
    async fn wait_for_line(&mut self, needle: &str) -> Result<()> {
        let found = tokio::time::timeout(STEP, async {
            while let Some(line) = self.lines.recv().await {
                self.log.push_str(&line);
                self.log.push('\n');
                if line.contains(needle) {
                    return true;
                }
            }
            false
        })
        .await;
        match found {
            Ok(true) => Ok(()),
            Ok(false) => bail!("the gateway exited before `{needle}`:\n{}", self.log),
            Err(_) => bail!("no `{needle}` on stderr within {STEP:?}:\n{}", self.log),
        }
    }

    /// Everything on stderr so far.
    fn log(&mut self) -> &str {
        while let Ok(line) = self.lines.try_recv() {
            self.log.push_str(&line);
            self.log.push('\n');
        }
        &self.log
    }

    async fn tool_names(&self) -> Result<Vec<String>> {
        let tools = tokio::time::timeout(STEP, self.client.list_all_tools())
            .await
            .context("tools/list did not answer")??;
        Ok(tools.into_iter().map(|t| t.name.to_string()).collect())
    }
}

/// A config entry that starts the `name` demo server once a line is written to the FIFO `gate`.
fn gated(gate: &Path, name: &str) -> Value {
    let script = format!(
        "read go < '{}'; exec '{}' demo-server {name}",
        gate.display(),
        common::pegboard().display()
    );
    json!({"command": "sh", "args": ["-c", script]})
}

fn mkfifo(path: &Path) -> Result<()> {
    let status = std::process::Command::new("mkfifo").arg(path).status()?;
    anyhow::ensure!(status.success(), "mkfifo {} failed", path.display());
    Ok(())
}

fn has_prefix(names: &[String], prefix: &str) -> bool {
    names.iter().any(|n| n.starts_with(prefix))
}

#[tokio::test]
async fn serving_starts_at_once_and_late_servers_join_with_list_changed() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let gate = dir.path().join("gate");
    mkfifo(&gate)?;
    let servers = json!({
        "units": common::demo_server("units", &[]),
        "hung": common::demo_server("test", &["--hang-list"]),
        "late": gated(&gate, "notes"),
    });
    let flags = ["--wait", "0", "--startup-timeout", HUNG_TIMEOUT];
    // `initialize` is answered while `late` waits for its gate and `hung` for its 30 s timeout.
    let mut gw = Gateway::start(dir.path(), servers, &flags).await?;

    // Once `units` is ready its tools are listed at once, the others' not (yet).
    gw.wait_for_line("units: ready").await?;
    let names = gw.tool_names().await?;
    assert!(names.iter().any(|n| n == "units-convert"), "{names:?}");
    assert!(
        !has_prefix(&names, "hung-") && !has_prefix(&names, "late-"),
        "{names:?}"
    );

    // Open the gate: `late` starts, joins the board, and the client is told.
    let writer = tokio::task::spawn_blocking(move || std::fs::write(&gate, "go\n"));
    let names = tokio::time::timeout(STEP, async {
        loop {
            gw.changes
                .recv()
                .await
                .context("the gateway closed the session")?;
            let names = gw.tool_names().await?;
            if has_prefix(&names, "late-") {
                return anyhow::Ok(names);
            }
        }
    })
    .await
    .context("no tools/list_changed bringing the late server's tools")??;
    writer.await??;
    assert!(
        names.iter().any(|n| n == "late-search") && names.iter().any(|n| n == "units-convert"),
        "{names:?}"
    );
    gw.wait_for_line("late: ready").await?;
    // All of this happened while the hung server was still within its startup timeout.
    let log = gw.log().to_string();
    assert!(!log.contains("hung: failed"), "{log}");
    gw.client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_first_tools_list_waits_for_a_server_that_takes_a_second() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let slow = format!(
        "sleep 1; exec '{}' demo-server notes",
        common::pegboard().display()
    );
    let servers = json!({
        "units": common::demo_server("units", &[]),
        "slow": {"command": "sh", "args": ["-c", slow]},
    });
    // The default --wait: the first tools/list, sent right after initialize, has both servers.
    let gw = Gateway::start(dir.path(), servers, &[]).await?;
    let names = gw.tool_names().await?;
    assert!(
        names.iter().any(|n| n == "slow-search") && names.iter().any(|n| n == "units-convert"),
        "{names:?}"
    );
    gw.client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_wait_ends_at_its_limit_when_a_server_hangs() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let servers = json!({
        "units": common::demo_server("units", &[]),
        "hung": common::demo_server("test", &["--hang-list"]),
    });
    let flags = ["--wait", "2", "--startup-timeout", HUNG_TIMEOUT];
    let mut gw = Gateway::start(dir.path(), servers, &flags).await?;
    // Answered after at most 2 s, with what started by then; the hung server is still starting.
    let names = gw.tool_names().await?;
    assert!(names.iter().any(|n| n == "units-convert"), "{names:?}");
    assert!(!has_prefix(&names, "hung-"), "{names:?}");
    let log = gw.log().to_string();
    assert!(!log.contains("hung: failed"), "{log}");
    gw.client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn when_every_server_fails_the_gateway_serves_first_then_exits_with_an_error() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("pegboard.json");
    let servers = json!({
        "crash": {"command": "sh", "args": ["-c", "echo 'no API key' >&2; exit 3"]},
        "ghost": {"command": "pegboard-no-such-program-xyz"},
    });
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
    let mut child = tokio::process::Command::new(common::pegboard())
        .args(["serve", "--config"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    // Kept open: the client stays, so only the failed startup can end the gateway.
    let _stdin = child.stdin.take().context("stdin")?;
    let mut err = child.stderr.take().context("stderr")?;
    let mut stderr = String::new();
    let status = tokio::time::timeout(STEP, async {
        tokio::io::AsyncReadExt::read_to_string(&mut err, &mut stderr).await?;
        child.wait().await
    })
    .await
    .context("the gateway did not exit when every server had failed")??;
    assert_eq!(status.code(), Some(1), "{stderr}");
    let served = stderr.find("pegboard: serving over stdio");
    let failed = stderr.find("error: none of the 2 configured servers started");
    assert!(
        served.is_some() && failed.is_some() && served < failed,
        "{stderr}"
    );
    assert!(stderr.contains("no API key"), "{stderr}");
    Ok(())
}
