//! The MCP feature matrix (issue 9, PASSTHROUGH.md §10): the official Python SDK client (`mcp` 2.3,
//! legacy and auto mode) and TypeScript SDK client (`@modelcontextprotocol/sdk` 1.32.2), over stdio
//! and streamable HTTP, against `@modelcontextprotocol/server-everything` directly and through
//! `pegboard serve` (registered as namespace `everything`). For every feature, the gateway's result
//! must equal the direct one: same `ok`, same `value` (the clients decode PegBoard's names and URIs
//! back, and fail a feature whose names are not namespaced as expected).
//!
//! What does not pass through yet is written down, with the reason, in
//! `tests/clients/known_gaps.json` (per client and transport). A test fails when a feature differs
//! that the file does not list (a regression), and also when a listed feature now comes through
//! the same (the list is stale: take it out), so the file always says exactly what is missing.
//!
//! The clients are `tests/clients/{python/features.py,ts/features.mjs}`: one JSON line per feature,
//! each with its own deadline inside the client, so no test waits on a sleep. One test per
//! client × transport prints a per-feature table and fails naming the features that differ.
//! Third-party pieces come from `scripts/setup-test-deps.sh` (`target/test-deps`, or
//! `$PEGBOARD_TEST_DEPS`); when they are missing the tests fail and say so.

mod common;

use common::{installed, test_deps};

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// One client run: 26 features, each with a deadline of at most 30 s inside the client.
const RUN: Duration = Duration::from_secs(300);
/// The 25 features every run must report, each once (`connect`, their precondition, comes
/// first and is not counted): the README's and docs/passthrough.md's "25 of 25". Both clients
/// (`python/features.py`, `ts/matrix.mjs`) check exactly these; a run that stops early, skips
/// one or reports one twice fails, direct or through pegboard.
const FEATURES: [&str; 25] = [
    "tools-list",
    "echo",
    "resources-list",
    "resource-templates",
    "resource-read",
    "resource-links",
    "embedded-resource",
    "session-resource-link",
    "prompts-list",
    "prompt-get",
    "prompt-embedded-resource",
    "complete-prompt",
    "complete-resource-template",
    "logging-set-level",
    "logging-message",
    "subscribe",
    "progress",
    "progress-two-clients",
    "cancel",
    "sampling",
    "elicitation-form",
    "elicitation-url",
    "roots",
    "roots-list-changed",
    "task-2025",
];
/// Until a spawned server says where it listens.
const NAMESPACE: &str = "everything";

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sdk {
    Python(&'static str),
    Ts,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Transport {
    Stdio,
    Http,
}

/// One feature line of a client run.
#[derive(Debug, Clone)]
struct Feature {
    ok: bool,
    value: Value,
    detail: Value,
}

/// Everything a client run printed, by feature, and its stderr (for failure messages).
struct Run {
    features: BTreeMap<String, Feature>,
    order: Vec<String>,
    stderr: String,
    /// How the client exited.
    status: std::process::ExitStatus,
}

impl Run {
    /// Every feature once, `connect` first, and a clean exit: what a whole run looks like.
    fn check_whole(&self, which: &str) -> Result<()> {
        let expected: Vec<&str> = std::iter::once("connect").chain(FEATURES).collect();
        let mut order = self.order.clone();
        order.sort_unstable();
        let mut wanted = expected.clone();
        wanted.sort_unstable();
        if order != wanted || self.order.first().map(String::as_str) != Some("connect") {
            let missing: Vec<&&str> = expected
                .iter()
                .filter(|f| !self.features.contains_key(**f))
                .collect();
            bail!(
                "the {which} run reported {} feature lines, not connect and the {} features once each \
                 (missing: {missing:?}; reported: {:?}); stderr (tail):\n{}",
                self.order.len(),
                FEATURES.len(),
                self.order,
                tail(&self.stderr, 40)
            );
        }
        if !self.status.success() {
            bail!(
                "the {which} run's client exited with {}; stderr (tail):\n{}",
                self.status,
                tail(&self.stderr, 40)
            );
        }
        Ok(())
    }
}

/// Run the client with `target_args` (`[--namespace NS] stdio CMD ARGS..` or `.. http URL`).
async fn run_client(sdk: Sdk, target_args: &[String]) -> Result<Run> {
    let mut command = match sdk {
        Sdk::Python(mode) => {
            let mut c =
                tokio::process::Command::new(installed(test_deps().join("venv/bin/python")));
            c.arg(clients_dir().join("python/features.py"))
                .args(["--mode", mode])
                .env("PYTHONUNBUFFERED", "1");
            c
        }
        Sdk::Ts => {
            let modules = test_deps().join("node/node_modules");
            installed(modules.join("@modelcontextprotocol/sdk/package.json"));
            let mut c = tokio::process::Command::new("node");
            c.arg(clients_dir().join("ts/features.mjs"))
                .arg("--node-modules")
                .arg(modules);
            c
        }
    };
    command
        .args(target_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .with_context(|| format!("spawn the {sdk:?} client (is node/python installed?)"))?;
    let out = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .with_context(|| format!("{sdk:?} client {target_args:?} ran over {RUN:?}"))??;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut run = Run {
        features: BTreeMap::new(),
        order: Vec::new(),
        stderr,
        status: out.status,
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).with_context(|| {
            format!(
                "client printed a non-JSON line: {line}\nstderr:\n{}",
                run.stderr
            )
        })?;
        let name = v["feature"]
            .as_str()
            .context("line without feature")?
            .to_owned();
        let feature = Feature {
            ok: v["ok"] == json!(true),
            value: v["value"].clone(),
            detail: v["detail"].clone(),
        };
        run.order.push(name.clone());
        run.features.insert(name, feature);
    }
    if run.features.is_empty() {
        bail!(
            "{sdk:?} client printed no feature ({}); stderr:\n{}",
            out.status,
            run.stderr
        );
    }
    Ok(run)
}

/// A child process serving at `url` (and the folder of its config).
struct Served {
    _child: tokio::process::Child,
    url: String,
    _dir: Option<tempfile::TempDir>,
}

/// server-everything over streamable HTTP.
async fn everything_http() -> Result<Served> {
    let (child, url) = common::everything_http().await?;
    Ok(Served {
        _child: child,
        url,
        _dir: None,
    })
}

/// `pegboard serve --http 127.0.0.1:0` in front of server-everything.
async fn gateway_http() -> Result<Served> {
    let dir = tempfile::tempdir()?;
    let config = common::everything_config(dir.path(), NAMESPACE)?;
    let (child, url) = common::serve_http(&config, &[], &[]).await?;
    Ok(Served {
        _child: child,
        url,
        _dir: Some(dir),
    })
}

fn strings(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.as_ref().to_string_lossy().into_owned())
        .collect()
}

async fn direct(sdk: Sdk, transport: Transport) -> Result<Run> {
    match transport {
        Transport::Stdio => {
            run_client(sdk, &strings(&[&"stdio", &common::everything(), &"stdio"])).await
        }
        Transport::Http => {
            let server = everything_http().await?;
            run_client(sdk, &strings(&[&"http", &server.url])).await
        }
    }
}

async fn through_gateway(sdk: Sdk, transport: Transport) -> Result<Run> {
    let ns = ["--namespace".to_owned(), NAMESPACE.to_owned()];
    match transport {
        Transport::Stdio => {
            let dir = tempfile::tempdir()?;
            let config = common::everything_config(dir.path(), NAMESPACE)?;
            let target = strings(&[
                &"stdio",
                &common::pegboard(),
                &"serve",
                &"--config",
                &config,
            ]);
            run_client(sdk, &[&ns[..], &target[..]].concat()).await
        }
        Transport::Http => {
            let gateway = gateway_http().await?;
            run_client(
                sdk,
                &[&ns[..], &strings(&[&"http", &gateway.url])[..]].concat(),
            )
            .await
        }
    }
}

/// The key of a client run in `known_gaps.json`, e.g. `python-legacy/stdio`.
fn run_key(sdk: Sdk, transport: Transport) -> String {
    let sdk = match sdk {
        Sdk::Python(mode) => format!("python-{mode}"),
        Sdk::Ts => "typescript".to_owned(),
    };
    let transport = match transport {
        Transport::Stdio => "stdio",
        Transport::Http => "http",
    };
    format!("{sdk}/{transport}")
}

/// The features known not to pass through for this run, each with its reason.
fn known_gaps(key: &str) -> Result<BTreeMap<String, String>> {
    let path = clients_dir().join("known_gaps.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    let all: BTreeMap<String, Value> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a JSON object", path.display()))?;
    let Some(gaps) = all.get(key) else {
        return Ok(BTreeMap::new());
    };
    serde_json::from_value(gaps.clone()).with_context(|| {
        format!(
            "{}: `{key}` must map feature names to reasons",
            path.display()
        )
    })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(160).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Run both sides, print the table, fail listing every feature whose gateway result differs from
/// the direct one and is not a known gap, every known gap that now comes through the same, and
/// every feature that fails directly (then the client or the environment is broken).
async fn matrix(sdk: Sdk, transport: Transport) -> Result<()> {
    let key = run_key(sdk, transport);
    let gaps = known_gaps(&key)?;
    let direct = direct(sdk, transport).await.context("direct run")?;
    let gateway = through_gateway(sdk, transport)
        .await
        .context("run through pegboard")?;
    direct.check_whole("direct")?;
    gateway.check_whole("through pegboard")?;
    let mut table = format!("{sdk:?} over {transport:?}: feature | direct | through pegboard\n");
    let mut differ = Vec::new();
    let mut known = Vec::new();
    let mut stale = Vec::new();
    let mut broken = Vec::new();
    let (mut same, mut total) = (0_usize, 0_usize);
    for name in &direct.order {
        let d = &direct.features[name];
        let g = gateway.features.get(name);
        let equal = g.is_some_and(|g| g.ok == d.ok && g.value == d.value);
        // `connect` is the precondition of the others, not one of the 25 features.
        let counted = name != "connect";
        total += usize::from(counted);
        let mark = |f: &Feature| if f.ok { "ok" } else { "FAIL" };
        let _ = writeln!(
            table,
            "  {name:28} {:5} {:5} {}",
            mark(d),
            g.map_or("MISSING", mark),
            if equal {
                "same".to_owned()
            } else {
                format!(
                    "DIFFERS: {}",
                    g.map_or("no line".into(), |g| short(&g.detail))
                )
            }
        );
        if !d.ok {
            broken.push(format!("{name}: fails directly: {}", short(&d.detail)));
        } else if equal {
            same += usize::from(counted);
            if gaps.contains_key(name) {
                stale.push(name.clone());
            }
        } else if gaps.contains_key(name) {
            known.push(name.clone());
        } else {
            let g_value = g.map_or(Value::Null, |g| g.value.clone());
            differ.push(format!(
                "{name}\n    direct:  {}\n    gateway: {} ({})",
                short(&d.value),
                short(&g_value),
                g.map_or("no line".into(), |g| short(&g.detail))
            ));
        }
    }
    let _ = writeln!(
        table,
        "  {same} of {total} features the same through pegboard (connect aside); known gaps ({key}): {}",
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    );
    for name in &known {
        let _ = writeln!(table, "    {name}: {}", gaps[name]);
    }
    println!("{table}");
    let unknown: Vec<&String> = gaps
        .keys()
        .filter(|name| !direct.features.contains_key(*name))
        .collect();
    if !broken.is_empty() || !differ.is_empty() || !stale.is_empty() || !unknown.is_empty() {
        bail!(
            "{sdk:?} over {transport:?}: {} features differ through pegboard that known_gaps.json does not list, {} listed there now come through the same (take them out: {}), {} listed there are not features the client checks ({}), {} fail directly\n{}\n{}\n--- client stderr through pegboard (tail)\n{}",
            differ.len(),
            stale.len(),
            stale.join(", "),
            unknown.len(),
            unknown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            broken.len(),
            broken.join("\n"),
            differ.join("\n"),
            tail(&gateway.stderr, 40)
        );
    }
    // Every one of the 25 came through the same, but for the listed gaps.
    assert_eq!(same + known.len(), FEATURES.len(), "{table}");
    assert_eq!(total, FEATURES.len(), "{table}");
    Ok(())
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[tokio::test]
async fn python_legacy_stdio() -> Result<()> {
    matrix(Sdk::Python("legacy"), Transport::Stdio).await
}

#[tokio::test]
async fn python_legacy_http() -> Result<()> {
    matrix(Sdk::Python("legacy"), Transport::Http).await
}

#[tokio::test]
async fn python_auto_stdio() -> Result<()> {
    matrix(Sdk::Python("auto"), Transport::Stdio).await
}

#[tokio::test]
async fn python_auto_http() -> Result<()> {
    matrix(Sdk::Python("auto"), Transport::Http).await
}

#[tokio::test]
async fn typescript_stdio() -> Result<()> {
    matrix(Sdk::Ts, Transport::Stdio).await
}

#[tokio::test]
async fn typescript_http() -> Result<()> {
    matrix(Sdk::Ts, Transport::Http).await
}
