//! Named clients by JWT, end to end (issue 21): a real OpenID provider (`oidc-provider`, see
//! `common::oidc`) issues access tokens by the client_credentials grant, `pegboard serve --http`
//! validates them against the provider's keys and maps their scopes to two clients, and the
//! official Python and TypeScript SDK clients, each with a token, see exactly their client's
//! tools. A tool the client may not see is answered exactly like one that does not exist: same
//! code, same message but for the name, no suggestion naming a hidden tool; on rmcp's way and
//! with the express lane on (where the hidden tool is one the lane already takes for the client
//! that may see it). A token that matches no client gets 403 `insufficient_scope`; none gets 401
//! with the metadata URL.
//!
//! The clients are `tests/clients/python/bearer_client.py` and `tests/clients/ts/bearer_client.mjs`.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::sync::watch;

use common::oidc::Idp;

/// The gateway's resource URL: the `aud` the provider issues its tokens for and `auth.audience`.
/// A fixed name, not the gateway's loopback URL (known only once it has bound port 0).
const AUDIENCE: &str = "https://gateway.pegboard.test/mcp";
/// Upper bound for one client run (the SDKs start in a second or two).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);
/// Every tool on the board of [`config`].
const BOARD: [&str; 7] = [
    "docs-read",
    "docs-search",
    "notes-add_note",
    "notes-list_notes",
    "notes-search",
    "units-convert",
    "units-list_units",
];

/// What one client of the config may do, and what its calls are.
struct Expect {
    /// The client's name in the config (and in the audit log).
    client: &'static str,
    /// The provider's machine client, its secret and the scope asked for.
    grant: (&'static str, &'static str, &'static str),
    /// Its `tools/list`, sorted.
    tools: &'static [&'static str],
    /// A tool it may call, the arguments, a piece of the answer's text.
    visible: (&'static str, fn() -> Value, &'static str),
    /// Tools on the board it may not see, each with a name on no board that differs from it by
    /// one last character (so that the close matches among the client's tools are the same).
    hidden: [(&'static str, &'static str); 2],
}

const UNITS: Expect = Expect {
    client: "units",
    grant: ("writer-bot", "writer-secret", "mcp:write"),
    tools: &["units-convert"],
    visible: (
        "units-convert",
        || json!({"value": 10, "from": "km", "to": "mi"}),
        "6.21",
    ),
    hidden: [
        ("units-list_units", "units-list_unitz"),
        ("docs-search", "docs-searcz"),
    ],
};

const READERS: Expect = Expect {
    client: "readers",
    grant: ("reader-bot", "reader-secret", "mcp:read"),
    tools: &["docs-read", "docs-search"],
    visible: ("docs-search", || json!({"query": "mcp"}), "mcp-overview"),
    hidden: [
        ("units-convert", "units-converz"),
        ("notes-search", "notes-searcz"),
    ],
};

/// The demo servers and two clients matched by scope: `units` first, so that a token holding
/// both scopes would be `units` (first match wins).
fn config(dir: &Path, idp: &Idp) -> Result<std::path::PathBuf> {
    let config = json!({
        "mcpServers": {
            "docs": common::demo_server("docs", &[]),
            "notes": common::demo_server("notes", &[]),
            "units": common::demo_server("units", &[])
        },
        "clients": {
            "units": { "jwt": { "scope": "mcp:write" }, "tools": ["units-*", "!units-list_units"] },
            "readers": { "jwt": { "scope": "mcp:read" }, "tools": ["docs-*"] }
        },
        "auth": { "issuer": idp.issuer, "audience": AUDIENCE }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The calls of one client run: the visible tool twice (the first call of a tool goes rmcp's
/// way, later ones the lane), each hidden tool twice, each unknown twin twice.
fn plan(expect: &Expect) -> Value {
    let (visible, args, _) = expect.visible;
    let mut calls = vec![
        json!({"name": visible, "arguments": args()}),
        json!({"name": visible, "arguments": args()}),
    ];
    for (hidden, unknown) in expect.hidden {
        for name in [hidden, hidden, unknown, unknown] {
            calls.push(json!({"name": name, "arguments": args()}));
        }
    }
    Value::Array(calls)
}

#[derive(Clone, Copy, Debug)]
enum Sdk {
    /// mcp 2.x with `mode` (`legacy` or `auto`).
    Python(&'static str),
    TypeScript,
}

/// Run one SDK client against `url` with `token` and `plan`: the JSON line it printed.
async fn run_client(sdk: Sdk, url: &str, token: &str, plan: &Value) -> Result<Value> {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    let deps = common::test_deps();
    let mut command = match sdk {
        Sdk::Python(mode) => {
            let mut c =
                tokio::process::Command::new(common::installed(deps.join("venv/bin/python")));
            c.arg(clients.join("python/bearer_client.py"))
                .args([url, token, mode]);
            c
        }
        Sdk::TypeScript => {
            let modules = common::installed(deps.join("node/node_modules"));
            let mut c = tokio::process::Command::new("node");
            c.arg(clients.join("ts/bearer_client.mjs"))
                .arg(modules)
                .args([url, token]);
            c
        }
    };
    command.arg(plan.to_string()).kill_on_drop(true);
    let output = tokio::time::timeout(CLIENT_TIMEOUT, command.output())
        .await
        .with_context(|| format!("{sdk:?} did not finish within {CLIENT_TIMEOUT:?}"))??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("{sdk:?} failed ({}): {stderr}", output.status);
    }
    let line = stdout.lines().last().context("no output")?;
    serde_json::from_str(line).with_context(|| format!("{sdk:?}: {stdout}\n{stderr}"))
}

/// A call's answer without its name, the asked name written `{name}`: what must be the same for
/// a hidden tool and for one that does not exist.
fn shape(call: &Value, asked: &str) -> String {
    let mut answer = call.clone();
    answer.as_object_mut().map(|c| c.remove("name"));
    answer.to_string().replace(asked, "{name}")
}

/// Check one client run's output against `expect`.
fn check_run(sdk: Sdk, expect: &Expect, out: &Value) -> Result<()> {
    let what = format!("{sdk:?} as `{}`", expect.client);
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .context("tools")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(tools, expect.tools, "{what}: its tools/list");

    let calls = out["calls"].as_array().context("calls")?;
    assert_eq!(calls.len(), 2 + 4 * expect.hidden.len(), "{what}: {out}");
    let (visible, _, text) = expect.visible;
    for call in &calls[..2] {
        assert_eq!(call["name"], visible, "{what}");
        assert_eq!(call["result"]["is_error"], false, "{what}: {call}");
        let got = call["result"]["text"].as_str().unwrap_or_default();
        assert!(got.contains(text), "{what}: {visible} answered {call}");
    }
    assert_eq!(calls[0], calls[1], "{what}: rmcp's way and the lane differ");

    let not_visible: Vec<&str> = BOARD
        .into_iter()
        .filter(|t| !expect.tools.contains(t))
        .collect();
    for (i, (hidden, unknown)) in expect.hidden.into_iter().enumerate() {
        let four = &calls[2 + 4 * i..6 + 4 * i];
        let (hidden_calls, unknown_calls) = four.split_at(2);
        for (call, asked) in [
            (&hidden_calls[0], hidden),
            (&hidden_calls[1], hidden),
            (&unknown_calls[0], unknown),
            (&unknown_calls[1], unknown),
        ] {
            assert_eq!(call["name"], asked, "{what}");
            let refused =
                call.get("error").is_some() || call["result"]["is_error"] == Value::Bool(true);
            assert!(refused, "{what}: {asked} was answered: {call}");
            // No word of a tool the client may not see, but the name it asked for.
            let answer = call.to_string();
            for other in not_visible.iter().copied().filter(|t| *t != asked) {
                assert!(
                    !answer.contains(other),
                    "{what}: the answer for {asked} names the hidden {other}: {call}"
                );
            }
        }
        assert_eq!(
            hidden_calls[0], hidden_calls[1],
            "{what}: {hidden} answered differently the second time"
        );
        assert_eq!(
            shape(&hidden_calls[0], hidden),
            shape(&unknown_calls[0], unknown),
            "{what}: the hidden {hidden} is not answered as the unknown {unknown}"
        );
        assert_eq!(unknown_calls[0], unknown_calls[1], "{what}: {unknown}");
    }
    Ok(())
}

/// A gateway run, the provider's tokens, and the audit lines and lane calls it logged.
struct Run {
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
    url: String,
    stderr: watch::Receiver<Vec<String>>,
}

impl Run {
    async fn start(idp: &Idp, extra: &[&str]) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = config(dir.path(), idp)?;
        let mut args = vec!["--audit-log", "-"];
        args.extend_from_slice(extra);
        let log = "info,pegboard_gateway::express=trace";
        let (child, url, mut stderr) =
            common::serve_http_logged(&config, &args, &[("RUST_LOG", log)]).await?;
        // `serving at` comes before the servers are up: wait for the whole board, so that a
        // client's list is its view of all of it.
        common::wait_for_line(&mut stderr, &format!("serving {} tools", BOARD.len())).await?;
        Ok(Self {
            _dir: dir,
            _child: child,
            url,
            stderr,
        })
    }

    /// The `tools/call` audit lines so far.
    fn audit(&self) -> Vec<Value> {
        self.stderr
            .borrow()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["method"] == "tools/call")
            .collect()
    }
}

/// Both SDKs as both clients against one gateway (`extra` on its command line), in an order
/// where each client's hidden tools include one the other client has called before (so that the
/// lane, when on, would take it); then the audit log must hold each call the policy saw, by
/// client, and the lane must have taken `lane_calls` calls.
async fn both_sdks_see_only_their_tools(
    extra: &[&str],
    python_mode: &'static str,
    lane_calls: usize,
) -> Result<()> {
    let idp = Idp::start(AUDIENCE).await?;
    let mut run = Run::start(&idp, extra).await?;
    let runs = [
        (Sdk::Python(python_mode), &UNITS),
        (Sdk::Python(python_mode), &READERS),
        (Sdk::TypeScript, &UNITS),
        (Sdk::TypeScript, &READERS),
    ];
    for (sdk, expect) in runs {
        let (bot, secret, scope) = expect.grant;
        let token = idp.token(bot, secret, scope).await?;
        let out = run_client(sdk, &run.url, &token, &plan(expect)).await?;
        if let Sdk::Python("auto") = sdk {
            // The generation without `initialize`, which the lane leaves to rmcp's way.
            assert_eq!(out["protocol_version"], "2026-07-28", "{out}");
        }
        check_run(sdk, expect, &out)?;
    }

    // Each run: the visible tool twice (`ok`), each hidden tool twice (`denied`); an unknown
    // name reaches no server and is refused by no policy, so it has no line.
    let per_run = 2 + 2 * UNITS.hidden.len();
    let audit_line = "\"method\":\"tools/call\"";
    common::wait_for_lines(&mut run.stderr, audit_line, per_run * runs.len()).await?;
    let mut counted: HashMap<(String, String, String), usize> = HashMap::new();
    for line in run.audit() {
        let key = |k: &str| line[k].as_str().unwrap_or_default().to_string();
        *counted
            .entry((key("client"), key("name"), key("outcome")))
            .or_default() += 1;
    }
    let mut expected: HashMap<(String, String, String), usize> = HashMap::new();
    for expect in [&UNITS, &READERS] {
        let client = expect.client.to_string();
        expected.insert((client.clone(), expect.visible.0.into(), "ok".into()), 4);
        for (hidden, _) in expect.hidden {
            expected.insert((client.clone(), hidden.into(), "denied".into()), 4);
        }
    }
    assert_eq!(counted, expected, "the audit log");
    // The lane logs each call it takes before the call ends, so before its audit line.
    let lane = common::count_lines(&run.stderr.borrow(), "express call");
    assert_eq!(lane, lane_calls, "calls the express lane took");
    Ok(())
}

#[tokio::test]
async fn jwt_clients_see_their_tools_with_the_express_lane() -> Result<()> {
    // The first call of a visible tool goes rmcp's way, the rest the lane: 1 + 1 for the
    // Python runs (legacy mode, a protocol the lane speaks), 2 + 2 for the TypeScript ones.
    both_sdks_see_only_their_tools(&[], "legacy", 6).await
}

#[tokio::test]
async fn jwt_clients_see_their_tools_on_rmcps_way() -> Result<()> {
    both_sdks_see_only_their_tools(&["--no-express"], "auto", 0).await
}

/// An `initialize` POST to `url` with `token`, if any.
async fn initialize(url: &str, token: Option<&str>) -> Result<reqwest::Response> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "e2e-jwt", "version": "1"}
    }});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    Ok(request.send().await?)
}

fn www_authenticate(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn no_token_is_401_with_the_metadata_and_a_token_of_no_client_is_403() -> Result<()> {
    let idp = Idp::start(AUDIENCE).await?;
    let run = Run::start(&idp, &[]).await?;

    let response = initialize(&run.url, None).await?;
    assert_eq!(response.status(), 401);
    let challenge = www_authenticate(&response);
    let metadata_url = "https://gateway.pegboard.test/.well-known/oauth-protected-resource/mcp";
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    // The metadata the challenge points at (served here under the gateway's loopback address)
    // names the provider, whose tokens the clients then get.
    let path = metadata_url.trim_start_matches("https://gateway.pegboard.test");
    let base = run.url.trim_end_matches("/mcp");
    let metadata: Value = reqwest::get(format!("{base}{path}")).await?.json().await?;
    assert_eq!(metadata["resource"], AUDIENCE, "{metadata}");
    assert_eq!(
        metadata["authorization_servers"],
        json!([idp.issuer]),
        "{metadata}"
    );

    // A valid token of the provider with no scope matches neither client.
    let unscoped = idp.token("writer-bot", "writer-secret", "").await?;
    let response = initialize(&run.url, Some(&unscoped)).await?;
    assert_eq!(response.status(), 403);
    let challenge = www_authenticate(&response);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );

    // The same provider's token with a client's scope is let in (the 403 is the scope's).
    let reader = idp.token("reader-bot", "reader-secret", "mcp:read").await?;
    let response = initialize(&run.url, Some(&reader)).await?;
    let status = response.status();
    assert_eq!(status, 200, "{}", response.text().await?);
    Ok(())
}
