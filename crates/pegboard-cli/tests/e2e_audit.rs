//! The audit log over HTTP: 1,000 concurrent `tools/call` from three named clients give exactly
//! 1,000 JSON lines, each naming its client, tool and the right outcome (`ok`, `tool_error`,
//! `denied`); `prompts/get` and `resources/read` get their lines too.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
const CALLS: usize = 1000;

/// The clients: (name, bearer token).
const CLIENTS: [(&str, &str); 3] = [
    ("ci-bot", "ci-bot-token-0123456789abcdef"),
    ("analyst", "analyst-token-0123456789abcdef"),
    ("reader", "reader-token-0123456789abcdef"),
];

/// A session of the gateway at `url` as the client holding `token`.
struct Session {
    http: reqwest::Client,
    url: String,
    token: &'static str,
    id: String,
}

impl Session {
    async fn open(http: &reqwest::Client, url: &str, token: &'static str) -> Result<Self> {
        let mut session = Self {
            http: http.clone(),
            url: url.to_string(),
            token,
            id: String::new(),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e-audit", "version": "1"}
        }});
        let response = session.post(&init).send().await?;
        session.id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("a session id")?
            .to_string();
        answer(response).await?;
        let done = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await?;
        if done.status() != reqwest::StatusCode::ACCEPTED {
            bail!("initialized: {}", done.status());
        }
        Ok(session)
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .bearer_auth(self.token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        match self.id.as_str() {
            "" => request,
            id => request.header("mcp-session-id", id),
        }
    }

    async fn request(&self, id: usize, method: &str, params: Value) -> Result<Value> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = tokio::time::timeout(WAIT, self.post(&body).send()).await??;
        answer(response).await
    }
}

/// The JSON-RPC answer in a response: its JSON body, or the SSE event that carries an id.
async fn answer(response: reqwest::Response) -> Result<Value> {
    let status = response.status();
    let text = tokio::time::timeout(WAIT, response.text()).await??;
    if !status.is_success() {
        bail!("HTTP {status}: {text}");
    }
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        return Ok(value);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .with_context(|| format!("no answer in {text}"))
}

#[tokio::test]
async fn a_thousand_concurrent_calls_from_three_clients_give_a_thousand_audit_lines() -> Result<()>
{
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let config = json!({
        "mcpServers": {
            "units": common::demo_server("units", &[]),
            "docs": common::demo_server("docs", &[])
        },
        "clients": {
            "ci-bot": { "token": "${CI_BOT_TOKEN}", "tools": ["units-*"] },
            "analyst": { "token": "${ANALYST_TOKEN}", "tools": ["units-convert", "docs-*"] },
            "reader": { "token": "${READER_TOKEN}", "tools": ["units-list_units"] }
        }
    });
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    let env = [
        ("CI_BOT_TOKEN", CLIENTS[0].1),
        ("ANALYST_TOKEN", CLIENTS[1].1),
        ("READER_TOKEN", CLIENTS[2].1),
        ("RUST_LOG", "warn"),
    ];
    let (_child, url, mut stderr) =
        common::serve_http_logged(&path, &["--audit-log", "-"], &env).await?;
    let http = reqwest::Client::new();
    let mut sessions = Vec::new();
    for (_, token) in CLIENTS {
        sessions.push(Session::open(&http, &url, token).await?);
    }
    // Wait for the board to hold the tools before calling them: the first listing waits for
    // the servers' startup.
    sessions[0].request(0, "tools/list", json!({})).await?;

    // Call i: client i % 3; ci-bot and analyst convert (every 4th with a unit that does not
    // exist: a tool error), reader converts though it may not (denied).
    let mut expected: HashMap<(String, String), usize> = HashMap::new();
    let mut calls = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let client = i % 3;
        let to = if i % 4 == 0 { "parsec" } else { "km" };
        let outcome = match (client, to) {
            (2, _) => "denied",
            (_, "parsec") => "tool_error",
            _ => "ok",
        };
        *expected
            .entry((CLIENTS[client].0.to_string(), outcome.to_string()))
            .or_default() += 1;
        let session = &sessions[client];
        let params =
            json!({"name": "units-convert", "arguments": {"value": i, "from": "m", "to": to}});
        calls.push(async move { session.request(i + 1, "tools/call", params).await });
    }
    let answers = futures::future::join_all(calls).await;
    for (i, answer) in answers.into_iter().enumerate() {
        let answer = answer.with_context(|| format!("call {i}"))?;
        let denied = i % 3 == 2;
        // A hidden tool is answered as an unknown one: an error, not a result.
        assert_eq!(answer.get("error").is_some(), denied, "call {i}: {answer}");
    }

    // One more line after all of them, to know every line of the 1,000 is written.
    sessions[1]
        .request(CALLS + 1, "tools/call", json!({"name": "units-list_units"}))
        .await?;
    common::wait_for_line(&mut stderr, "\"name\":\"units-list_units\"").await?;

    let lines = common::audit_lines(&stderr.borrow());
    let convert: Vec<&Value> = lines
        .iter()
        .filter(|l| l["name"] == "units-convert")
        .collect();
    assert_eq!(convert.len(), CALLS, "audit lines of the calls");
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for line in &convert {
        assert_eq!(line["method"], "tools/call", "{line}");
        let client = line["client"].as_str().context("client")?.to_string();
        let outcome = line["outcome"].as_str().context("outcome")?.to_string();
        if outcome != "denied" {
            assert_eq!(line["server"], "units", "{line}");
        }
        assert!(line["session"].is_string(), "{line}");
        *seen.entry((client, outcome)).or_default() += 1;
    }
    assert_eq!(seen, expected);
    Ok(())
}

#[tokio::test]
async fn prompts_get_and_resources_read_get_audit_lines_as_calls_do() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let config = json!({
        "mcpServers": {
            "everything": { "command": common::everything(), "args": ["stdio"] },
            "units": common::demo_server("units", &[])
        },
        "clients": {
            "ci-bot": { "token": "${CI_BOT_TOKEN}", "tools": ["everything-*"] },
            "reader": { "token": "${READER_TOKEN}", "tools": ["units-*"] }
        }
    });
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    let env = [
        ("CI_BOT_TOKEN", CLIENTS[0].1),
        ("READER_TOKEN", CLIENTS[2].1),
        ("RUST_LOG", "warn"),
    ];
    let (_child, url, mut stderr) =
        common::serve_http_logged(&path, &["--audit-log", "-"], &env).await?;
    let http = reqwest::Client::new();
    let allowed = Session::open(&http, &url, CLIENTS[0].1).await?;
    let reader = Session::open(&http, &url, CLIENTS[2].1).await?;
    allowed.request(1, "prompts/list", json!({})).await?;

    let prompt = json!({"name": "everything-simple-prompt"});
    let doc = "everything+demo://resource/static/document/features.md";
    // A prompt not on the board reaches no server and is refused by no policy: no line.
    let missing = allowed
        .request(
            2,
            "prompts/get",
            json!({"name": "everything-no-such-prompt"}),
        )
        .await?;
    assert!(missing.get("error").is_some(), "{missing}");
    let got = allowed.request(3, "prompts/get", prompt.clone()).await?;
    assert!(got.get("result").is_some(), "{got}");
    let read = allowed
        .request(4, "resources/read", json!({"uri": doc}))
        .await?;
    assert!(read.get("result").is_some(), "{read}");
    // The other client may see none of that server: refused, answered as not on the board.
    let hidden = reader.request(5, "prompts/get", prompt).await?;
    assert!(hidden.get("error").is_some(), "{hidden}");
    let hidden = reader
        .request(6, "resources/read", json!({"uri": doc}))
        .await?;
    assert!(hidden.get("error").is_some(), "{hidden}");
    common::wait_for_lines(&mut stderr, "\"outcome\":\"denied\"", 2).await?;

    let lines = common::audit_lines(&stderr.borrow());
    let got: Vec<(&str, &str, &str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["client"].as_str().unwrap_or_default(),
                l["method"].as_str().unwrap_or_default(),
                l["name"].as_str().unwrap_or_default(),
                l["outcome"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ci-bot", "prompts/get", "everything-simple-prompt", "ok"),
            ("ci-bot", "resources/read", doc, "ok"),
            (
                "reader",
                "prompts/get",
                "everything-simple-prompt",
                "denied"
            ),
            ("reader", "resources/read", doc, "denied"),
        ]
    );
    // Both name the server they went to; a refused one names none (it went nowhere).
    assert_eq!(lines[0]["server"], "everything", "{}", lines[0]);
    assert_eq!(lines[1]["server"], "everything", "{}", lines[1]);
    assert!(
        lines[2].get("server").is_none_or(Value::is_null),
        "{}",
        lines[2]
    );
    for line in &lines[..2] {
        assert!(line["bytes_in"].as_u64() > Some(0), "{line}");
        assert!(line["bytes_out"].as_u64() > Some(0), "{line}");
        assert!(line["session"].is_string(), "{line}");
    }
    Ok(())
}
