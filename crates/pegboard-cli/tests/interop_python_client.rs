//! The OFFICIAL MCP Python SDK (`mcp` 2.x, `mcp.Client`) as a CLIENT of the gateway, over stdio
//! and streamable HTTP, in `legacy` mode (initialize handshake) and `auto` mode (`server/discover`
//! probe, 2026-07-28 if the server offers it), plus older handshake versions pinned.
//!
//! The SDK lives in the venv that `scripts/setup-test-deps.sh` installs into
//! `<workspace>/target/test-deps` (or `$PEGBOARD_TEST_DEPS`); when it is missing these tests fail
//! and say so. The client is `tests/python/client.py`; it prints one JSON line.

mod common;

use common::test_deps;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Per run of the Python client (it starts the gateway and two demo servers over stdio).
const RUN: Duration = Duration::from_secs(90);

const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The venv's python, with the `mcp` SDK importable; panics with the setup hint otherwise.
fn python() -> PathBuf {
    let python = test_deps().join("venv/bin/python");
    let hint =
        "run `scripts/setup-test-deps.sh` (or point PEGBOARD_TEST_DEPS at an installed copy)";
    assert!(
        python.exists(),
        "missing third-party test dependency {}: {hint}",
        python.display()
    );
    let check = std::process::Command::new(&python)
        .args([
            "-c",
            "import mcp; from mcp import Client, StdioServerParameters",
        ])
        .output()
        .expect("run the venv's python");
    assert!(
        check.status.success(),
        "the `mcp` Python SDK is not importable from {}: {hint}\n{}",
        python.display(),
        String::from_utf8_lossy(&check.stderr)
    );
    python
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py")
}

/// What `client.py` printed.
#[derive(Debug)]
struct Outcome {
    json: Value,
    stderr: String,
}

impl Outcome {
    fn protocol_version(&self) -> &str {
        self.json["protocol_version"].as_str().unwrap_or_default()
    }

    /// The namespaced demo tools, each with its namespace in `_meta`, and the real conversion.
    fn assert_board_works(&self) {
        let json = &self.json;
        let tools: Vec<&str> = json["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tool list: {json}"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for expected in [
            "notes-add_note",
            "notes-list_notes",
            "notes-search",
            "units-convert",
            "units-list_units",
        ] {
            assert!(tools.contains(&expected), "{expected} missing: {tools:?}");
        }
        assert_eq!(tools.len(), 5, "{tools:?}");
        for tool in &tools {
            let ns = tool.split('-').next().unwrap_or_default();
            assert_eq!(
                json["namespaces"][tool], ns,
                "{tool}: _meta[pegboard/namespace] in {json}"
            );
        }
        let text = json["result_text"].as_str().unwrap_or_default();
        assert!(text.contains("6.213712"), "units-convert answered {text:?}");
        assert_eq!(json["is_error"], false, "{json}");
        assert_eq!(json["server_info"]["name"], "pegboard", "{json}");
    }
}

/// Run `client.py ARGS` with the venv's python; the JSON line it printed, or its stderr (the
/// traceback, and in stdio mode the gateway's own log) as the error.
async fn run_client(args: &[&str]) -> Result<Outcome> {
    let started = Instant::now();
    let child = tokio::process::Command::new(python())
        .arg(client_script())
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn client.py")?;
    let out = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .with_context(|| format!("client.py {args:?} did not finish within {RUN:?}"))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        bail!(
            "client.py {args:?} failed ({}) after {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status,
            started.elapsed()
        );
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .with_context(|| format!("client.py printed nothing; stderr:\n{stderr}"))?;
    let json: Value = serde_json::from_str(line)
        .with_context(|| format!("client.py printed no JSON: {line}\nstderr:\n{stderr}"))?;
    eprintln!(
        "client.py {:?}: protocol_version={} in {:?}",
        &args[args.len().saturating_sub(2)..],
        json["protocol_version"],
        started.elapsed()
    );
    Ok(Outcome { json, stderr })
}

/// `client.py --stdio <pegboard> <config> --verbose-gateway EXTRA..` on the notes + units demo.
async fn run_stdio(extra: &[&str]) -> Result<Outcome> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let pegboard = common::pegboard();
    let mut args = vec![
        "--stdio",
        pegboard.to_str().context("utf-8 path")?,
        config.to_str().context("utf-8 path")?,
        "--verbose-gateway",
    ];
    args.extend_from_slice(extra);
    run_client(&args).await
}

/// A `pegboard serve --http 127.0.0.1:0 -v` on the demo config, its stderr collected.
struct HttpGateway {
    child: tokio::process::Child,
    url: String,
    log: Arc<Mutex<String>>,
    _dir: tempfile::TempDir,
}

impl HttpGateway {
    async fn start() -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = common::write_demo_config(dir.path());
        let mut child = tokio::process::Command::new(common::pegboard())
            .args(["serve", "-v", "--http", "127.0.0.1:0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stderr = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let seen = log.clone();
        let url = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = stderr.next_line().await? {
                seen.lock().unwrap().push_str(&format!("{line}\n"));
                if let Some(url) = common::serving_url(&line) {
                    return Ok(url);
                }
            }
            bail!("pegboard exited before serving")
        })
        .await
        .context("no `serving ... at URL` line")??;
        let sink = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Ok(Self {
            child,
            url,
            log,
            _dir: dir,
        })
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Run the client against this gateway; on failure the error carries the gateway's log too.
    async fn run(&self, extra: &[&str]) -> Result<Outcome> {
        let mut args = vec!["--http", self.url.as_str()];
        args.extend_from_slice(extra);
        run_client(&args)
            .await
            .with_context(|| format!("--- gateway stderr (-v)\n{}", self.log()))
    }

    async fn stop(mut self) -> Result<()> {
        self.child.start_kill()?;
        tokio::time::timeout(Duration::from_secs(15), self.child.wait())
            .await
            .context("gateway did not exit after kill")??;
        Ok(())
    }
}

fn assert_handshake_era(outcome: &Outcome) {
    let version = outcome.protocol_version();
    assert!(
        HANDSHAKE_VERSIONS.contains(&version),
        "legacy mode negotiated {version:?}, not a handshake-era version; stderr:\n{}",
        outcome.stderr
    );
}

fn assert_known_version(outcome: &Outcome) {
    let version = outcome.protocol_version();
    assert!(
        HANDSHAKE_VERSIONS.contains(&version) || MODERN_VERSIONS.contains(&version),
        "auto mode negotiated an unknown version {version:?}; stderr:\n{}",
        outcome.stderr
    );
}

#[tokio::test]
async fn python_sdk_stdio_legacy() -> Result<()> {
    let outcome = run_stdio(&["--mode", "legacy"]).await?;
    outcome.assert_board_works();
    assert_handshake_era(&outcome);
    // The SDK offers its newest handshake version; the gateway must not downgrade it.
    assert_eq!(
        outcome.protocol_version(),
        outcome.json["offered_version"].as_str().unwrap_or_default(),
        "{}",
        outcome.json
    );
    Ok(())
}

#[tokio::test]
async fn python_sdk_stdio_auto() -> Result<()> {
    let outcome = run_stdio(&["--mode", "auto"]).await?;
    outcome.assert_board_works();
    assert_known_version(&outcome);
    Ok(())
}

#[tokio::test]
async fn python_sdk_http_legacy() -> Result<()> {
    let gateway = HttpGateway::start().await?;
    let outcome = gateway.run(&["--mode", "legacy"]).await;
    let log = gateway.log();
    gateway.stop().await?;
    let outcome = outcome?;
    outcome.assert_board_works();
    assert_handshake_era(&outcome);
    assert_eq!(
        outcome.protocol_version(),
        outcome.json["offered_version"].as_str().unwrap_or_default(),
        "{}",
        outcome.json
    );
    assert!(log.contains("serving 5 tools"), "{log}");
    Ok(())
}

#[tokio::test]
async fn python_sdk_http_auto() -> Result<()> {
    let gateway = HttpGateway::start().await?;
    let outcome = gateway.run(&["--mode", "auto"]).await;
    gateway.stop().await?;
    let outcome = outcome?;
    outcome.assert_board_works();
    assert_known_version(&outcome);
    Ok(())
}

/// An older handshake version offered by the SDK (pinned in `client.py`: mcp 2.x has no public
/// option for it) is accepted as is, and the board works at it.
#[tokio::test]
async fn python_sdk_pinned_old_handshake_versions() -> Result<()> {
    for version in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let outcome = run_stdio(&["--pin-version", version])
            .await
            .with_context(|| format!("stdio, pinned {version}"))?;
        outcome.assert_board_works();
        assert_eq!(outcome.protocol_version(), version, "{}", outcome.json);
    }
    let gateway = HttpGateway::start().await?;
    let mut outcomes = Vec::new();
    for version in ["2025-03-26", "2024-11-05"] {
        outcomes.push((version, gateway.run(&["--pin-version", version]).await));
    }
    gateway.stop().await?;
    for (version, outcome) in outcomes {
        let outcome = outcome.with_context(|| format!("HTTP, pinned {version}"))?;
        outcome.assert_board_works();
        assert_eq!(outcome.protocol_version(), version, "{}", outcome.json);
    }
    Ok(())
}

/// The wire-level cause of an `auto`-mode failure, without Python: on a 2026-07-28 (sessionless,
/// `_meta`-enveloped) connection every result MUST carry `resultType`, and the SDK rejects a
/// `tools/call` result without it. `server/discover` and `tools/list` are checked alongside.
#[tokio::test]
async fn raw_2026_07_28_results_carry_result_type() -> Result<()> {
    use serde_json::json;
    use tokio::io::AsyncWriteExt;

    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let mut child = tokio::process::Command::new(common::pegboard())
        .args(["serve", "-q", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"_meta": meta,
            "name": "units-convert", "arguments": {"value": 10, "from": "km", "to": "mi"}}}),
    ];
    let mut replies = Vec::new();
    for request in requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await?;
        let reply = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                let line = stdout.next_line().await?.context("eof")?;
                let v: Value = serde_json::from_str(&line)
                    .with_context(|| format!("stdout is not JSON: {line}"))?;
                if v["id"] == request["id"] {
                    return anyhow::Ok(v);
                }
            }
        })
        .await
        .with_context(|| format!("no answer to {request}"))??;
        replies.push(reply);
    }
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(15), child.wait()).await;

    let discover = &replies[0]["result"];
    assert!(
        discover["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{discover}"
    );
    assert!(
        replies[2]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("6.213712")),
        "{}",
        replies[2]
    );
    for (method, reply) in ["server/discover", "tools/list", "tools/call"]
        .iter()
        .zip(&replies)
    {
        assert_eq!(
            reply["result"]["resultType"], "complete",
            "{method} at 2026-07-28 lacks resultType: {reply}"
        );
    }
    Ok(())
}
