//! The MCP Inspector (`@modelcontextprotocol/inspector`, its `--cli` mode) against
//! `@modelcontextprotocol/server-everything` directly and through `pegboard serve` (the server
//! registered as namespace `everything`), over stdio and streamable HTTP: issue 9 asks that "the
//! MCP Inspector shows resources and prompts".
//!
//! For `resources/list`, `resources/templates/list`, `resources/read` of a static document,
//! `prompts/list`, `prompts/get` with arguments and `tools/list`, the Inspector's whole JSON answer
//! through the gateway, its names (`everything-x`) and URIs (`everything+demo://...`) decoded back,
//! must equal its answer directly. Each Inspector run is a new client session, as a person running
//! the CLI gets: over stdio it starts its own gateway (or server), so its one request comes right
//! after `initialize`.
//!
//! `tools/list` differs in three ways docs/passthrough.md documents, checked here as such, not ignored:
//! the gateway's `_meta["pegboard/namespace"]` on each tool; `execution` only where it says
//! `taskSupport: "forbidden"` (the gateway runs task-requiring tools itself, so it lists them as
//! plain tools); and the tools server-everything shows
//! only to a client that can answer sampling or elicitation, which the gateway always declares
//! upstream (the Inspector CLI declares neither; calling one through the gateway gets a clear error).
//!
//! The Inspector and server-everything come from `scripts/setup-test-deps.sh` (`target/test-deps`,
//! or `$PEGBOARD_TEST_DEPS`); when they are missing the tests fail and say so. The Inspector needs
//! no network when it runs; its `HOME` is a temporary directory (it creates `~/.mcp-inspector`).

mod common;

use common::{installed, test_deps};

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// One Inspector run (it connects, sends one request, prints the answer and exits).
const RUN: Duration = Duration::from_secs(60);
const NAMESPACE: &str = "everything";
/// server-everything's tools that it lists only to a client declaring sampling or elicitation.
const NEED_SAMPLING_OR_ELICITATION: [&str; 3] = [
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
];

fn inspector() -> PathBuf {
    installed(test_deps().join("node/node_modules/.bin/mcp-inspector"))
}

/// The installed Inspector's version (for the test's output).
fn inspector_version() -> Result<String> {
    let path = installed(
        test_deps().join("node/node_modules/@modelcontextprotocol/inspector/package.json"),
    );
    let package: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    Ok(package["version"].as_str().unwrap_or("?").to_owned())
}

/// Where the Inspector connects: a command it starts (stdio) or a streamable HTTP URL.
enum Target {
    Command(Vec<String>),
    Url(String),
}

/// A request as the Inspector CLI takes it: `--method M` and its own options.
struct Request {
    method: &'static str,
    /// Options naming a prompt or resource: `(direct, through the gateway)`.
    args: (Vec<String>, Vec<String>),
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The six requests, with the gateway's names and URIs for the same prompt and resource.
fn requests() -> Vec<Request> {
    let doc = "demo://resource/static/document/features.md";
    let prompt_args = ["--prompt-args", "city=Paris", "state=Texas"];
    let plain = |method| Request {
        method,
        args: (Vec::new(), Vec::new()),
    };
    vec![
        plain("resources/list"),
        plain("resources/templates/list"),
        Request {
            method: "resources/read",
            args: (
                strings(&["--uri", doc]),
                vec!["--uri".into(), format!("{NAMESPACE}+{doc}")],
            ),
        },
        plain("prompts/list"),
        Request {
            method: "prompts/get",
            args: (
                [
                    strings(&["--prompt-name", "args-prompt"]),
                    strings(&prompt_args),
                ]
                .concat(),
                [
                    vec!["--prompt-name".into(), format!("{NAMESPACE}-args-prompt")],
                    strings(&prompt_args),
                ]
                .concat(),
            ),
        },
        plain("tools/list"),
    ]
}

/// What one Inspector run answered: `{"result": ..}` or `{"error": ..}` (the Inspector's own
/// envelope), and its stderr (for a stdio target also the server's or gateway's log).
struct Answer {
    json: Value,
    stderr: String,
}

/// `mcp-inspector --cli --format json --method M ARGS.. (--transport http --server-url URL | -- CMD..)`
/// with `HOME` in `home`, under [`RUN`].
async fn inspect(home: &Path, method: &str, args: &[String], target: &Target) -> Result<Answer> {
    let started = Instant::now();
    let mut command = tokio::process::Command::new(inspector());
    command
        .args(["--cli", "--format", "json", "--method", method])
        .args(args);
    match target {
        Target::Url(url) => command.args(["--transport", "http", "--server-url", url]),
        // After `--`: `pegboard serve --config` is not the Inspector's own `--config`.
        Target::Command(argv) => command.arg("--").args(argv),
    };
    let child = command
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn the MCP Inspector (is node installed?)")?;
    let out = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .with_context(|| format!("the Inspector's {method} {args:?} ran over {RUN:?}"))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // An answer on stdout; a failure as an `{"error": ..}` line, the last one on stderr.
    let line = match stdout.trim() {
        "" => stderr
            .lines()
            .rev()
            .find(|l| l.starts_with("{\"error\""))
            .unwrap_or_default(),
        text => text,
    };
    let json: Value = serde_json::from_str(line).with_context(|| {
        format!(
            "the Inspector's {method} {args:?} printed no JSON answer ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        )
    })?;
    eprintln!(
        "inspector {method} {args:?}: {} in {:?}",
        if json.get("result").is_some() {
            "result"
        } else {
            "error"
        },
        started.elapsed()
    );
    Ok(Answer { json, stderr })
}

/// A URI as the gateway shows it decoded back to the server's own: `everything+demo://x` →
/// `demo://x`, `ui://everything+x` → `ui://x`; one without the alias is kept (and then differs).
fn decode_uri(uri: &str) -> String {
    let alias = format!("{NAMESPACE}+");
    if let Some(rest) = uri.strip_prefix(&alias) {
        return rest.to_owned();
    }
    if let Some(rest) = uri
        .strip_prefix("ui://")
        .and_then(|r| r.strip_prefix(&alias))
    {
        return format!("ui://{rest}");
    }
    uri.to_owned()
}

/// `value` with every `uri` and `uriTemplate` decoded (resource lists, contents, embedded
/// resources and resource links in prompt messages).
fn decode_uris(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match (key.as_str(), &*item) {
                    ("uri" | "uriTemplate", Value::String(uri)) => *item = decode_uri(uri).into(),
                    _ => decode_uris(item),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(decode_uris),
        _ => {}
    }
}

/// The `name` of each item of `result[list]` without the namespace prefix; a name without it is
/// kept as it is (and then differs).
fn decode_names(answer: &mut Value, list: &str) {
    let prefix = format!("{NAMESPACE}-");
    if let Some(items) = answer["result"][list].as_array_mut() {
        for item in items {
            if let Some(name) = item["name"].as_str().and_then(|n| n.strip_prefix(&prefix)) {
                item["name"] = name.to_owned().into();
            }
        }
    }
}

/// The gateway's `tools/list` as it compares with the direct one: its `_meta["pegboard/namespace"]`
/// (which must name the namespace) taken off, and the tools the gateway can show because it
/// declares sampling and elicitation upstream (which must be exactly those) taken out. The direct
/// answer's `execution` is kept only where it forbids tasks, as the gateway lists it
/// (docs/passthrough.md).
fn normalise_tools(direct: &mut Value, gateway: &mut Value) -> Result<()> {
    for tool in direct["result"]["tools"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if let Some(map) = tool.as_object_mut()
            && map
                .get("execution")
                .and_then(|e| e.get("taskSupport"))
                .is_some_and(|support| support != "forbidden")
        {
            map.remove("execution");
        }
    }
    let tools = gateway["result"]["tools"]
        .as_array_mut()
        .context("no tools through the gateway")?;
    for tool in tools.iter_mut() {
        let name = tool["name"].clone();
        let meta = tool
            .get_mut("_meta")
            .and_then(Value::as_object_mut)
            .with_context(|| format!("{name}: no _meta through the gateway"))?;
        let namespace = meta.remove("pegboard/namespace");
        if namespace != Some(json!(NAMESPACE)) {
            bail!("{name}: _meta[pegboard/namespace] is {namespace:?}");
        }
        if meta.is_empty() {
            tool.as_object_mut().map(|t| t.remove("_meta"));
        }
    }
    let direct_names: Vec<&str> = direct["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let mut extra: Vec<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| !direct_names.contains(n))
        .map(str::to_owned)
        .collect();
    extra.sort();
    let mut expected = NEED_SAMPLING_OR_ELICITATION.map(str::to_owned).to_vec();
    expected.sort();
    if extra != expected {
        bail!(
            "through the gateway the tools not listed directly are {extra:?}, expected {expected:?} (server-everything's sampling and elicitation tools)"
        );
    }
    tools.retain(|t| {
        !t["name"]
            .as_str()
            .is_some_and(|n| extra.iter().any(|e| e == n))
    });
    Ok(())
}

/// The Inspector's answer through the gateway as it compares with the direct one.
fn decode(method: &str, direct: &mut Value, gateway: &mut Value) -> Result<()> {
    match method {
        "prompts/list" => decode_names(gateway, "prompts"),
        "tools/list" => {
            decode_names(gateway, "tools");
            normalise_tools(direct, gateway)?;
        }
        _ => {}
    }
    decode_uris(gateway);
    Ok(())
}

/// Run every request directly and through the gateway and compare; fails listing every request
/// whose answers differ, with where they first differ.
async fn compare(direct: &Target, gateway: &Target) -> Result<()> {
    eprintln!("MCP Inspector {}", inspector_version()?);
    let home = tempfile::tempdir()?;
    let mut differ = Vec::new();
    for request in requests() {
        let method = request.method;
        let d = inspect(home.path(), method, &request.args.0, direct)
            .await
            .with_context(|| format!("{method} directly"))?;
        if d.json.get("result").is_none() {
            bail!(
                "{method} fails directly: {}\n--- stderr\n{}",
                short(&d.json),
                d.stderr
            );
        }
        let g = inspect(home.path(), method, &request.args.1, gateway)
            .await
            .with_context(|| format!("{method} through pegboard"))?;
        let (mut d_json, mut g_json) = (d.json, g.json.clone());
        decode(method, &mut d_json, &mut g_json)
            .with_context(|| format!("{method}: {}", short(&g.json)))?;
        let (d_json, g_json) = (
            common::numbers_as_f64(&d_json),
            common::numbers_as_f64(&g_json),
        );
        if let Some((path, d_at, g_at)) = first_difference(&d_json, &g_json, String::new()) {
            differ.push(format!(
                "{method} {:?}: first difference at `{path}`\n    direct:  {}\n    gateway: {} (decoded)\n    gateway answer: {}\n    Inspector stderr (tail):\n{}",
                request.args.1,
                short(&d_at),
                short(&g_at),
                short(&g.json),
                tail(&g.stderr, 8)
            ));
        }
    }
    if !differ.is_empty() {
        bail!(
            "{} of {} Inspector answers differ through pegboard:\n{}",
            differ.len(),
            requests().len(),
            differ.join("\n")
        );
    }
    Ok(())
}

/// Where `a` and `b` first differ (a JSON path, `a`'s and `b`'s value there); `None` if equal.
fn first_difference(a: &Value, b: &Value, path: String) -> Option<(String, Value, Value)> {
    match (a, b) {
        _ if a == b => None,
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let here = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => first_difference(p, q, here),
                    (p, q) => Some((here, p.cloned().into(), q.cloned().into())),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]"))),
        _ => Some((path, a.clone(), b.clone())),
    }
}

/// `value` as JSON, cut after 300 characters.
fn short(value: &Value) -> String {
    let s = value.to_string();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn path_string(path: &Path) -> Result<String> {
    Ok(path.to_str().context("utf-8 path")?.to_owned())
}

#[tokio::test]
async fn inspector_stdio() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::everything_config(dir.path(), NAMESPACE)?;
    let direct = Target::Command(vec![path_string(&common::everything())?, "stdio".into()]);
    let gateway = Target::Command(vec![
        path_string(&common::pegboard())?,
        "serve".into(),
        "--config".into(),
        path_string(&config)?,
    ]);
    compare(&direct, &gateway).await
}

#[tokio::test]
async fn inspector_http() -> Result<()> {
    let (_everything, direct_url) = common::everything_http().await?;
    let dir = tempfile::tempdir()?;
    let config = common::everything_config(dir.path(), NAMESPACE)?;
    let (_gateway, gateway_url) = common::serve_http(&config, &[], &[]).await?;
    compare(&Target::Url(direct_url), &Target::Url(gateway_url)).await
}
