//! Replicas sharing one store, for the fleet's tests: `pegboard serve --http --store URL`
//! processes, and a plain streamable-HTTP session (reqwest) that shows each answer's HTTP
//! status and `Retry-After` as well as its JSON-RPC message.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// A `pegboard serve --http` replica: its process, URL and stderr lines.
pub struct Replica {
    pub child: tokio::process::Child,
    pub url: String,
    pub log: tokio::sync::watch::Receiver<Vec<String>>,
}

impl Replica {
    /// A replica of `config` on the store at `store`, with `extra` arguments and `env`.
    pub async fn start(
        config: &Path,
        store: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self> {
        let mut args = vec!["--store", store];
        args.extend_from_slice(extra);
        let (child, url, log) = super::serve_http_logged(config, &args, env).await?;
        Ok(Self { child, url, log })
    }

    /// Kill it at once (SIGKILL: nothing it holds is given back) and wait until it is gone.
    pub async fn kill(&mut self) -> Result<()> {
        self.child.kill().await.context("kill the replica")
    }
}

/// One answer: its HTTP status, `Retry-After`, and the JSON-RPC message (if any) or the text.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub message: Option<Value>,
    pub text: String,
}

impl Answer {
    /// The result's first text, or the error's message.
    pub fn said(&self) -> String {
        let Some(message) = &self.message else {
            return self.text.clone();
        };
        if let Some(text) = message["result"]["content"][0]["text"].as_str() {
            return text.to_string();
        }
        message["error"]["message"]
            .as_str()
            .map_or_else(|| message.to_string(), str::to_string)
    }

    /// Whether it is a tool result that is not an error.
    pub fn ok(&self) -> bool {
        self.status == 200
            && self
                .message
                .as_ref()
                .is_some_and(|m| m.get("result").is_some() && m["result"]["isError"] != true)
    }
}

/// A streamable-HTTP session of one client (`token`) on one replica.
pub struct Session {
    http: reqwest::Client,
    url: String,
    token: Option<String>,
    pub id: String,
    next: std::sync::atomic::AtomicU64,
}

impl Session {
    /// `initialize` then `notifications/initialized` on `url` as `token`.
    pub async fn open(url: &str, token: Option<&str>) -> Result<Self> {
        match Self::try_open(url, token).await? {
            Ok(session) => Ok(session),
            Err(refused) => bail!("initialize answered {}: {}", refused.status, refused.text),
        }
    }

    /// [`Session::open`], or the answer that refused it (a limit: 429 or 503).
    pub async fn try_open(
        url: &str,
        token: Option<&str>,
    ) -> Result<std::result::Result<Self, Answer>> {
        super::oauth::install_tls();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()?;
        let mut session = Self {
            http,
            url: url.to_string(),
            token: token.map(str::to_string),
            id: String::new(),
            next: std::sync::atomic::AtomicU64::new(1),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "fleet-test", "version": "0"}}});
        let response = session.post(&init).await?;
        let status = response.status().as_u16();
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response.text().await?;
        let Some(id) = id.filter(|_| status == 200) else {
            return Ok(Err(Answer {
                status,
                retry_after,
                message: message_of(&text),
                text,
            }));
        };
        session.id = id;
        let done = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        anyhow::ensure!(done.status().is_success(), "initialized: {}", done.status());
        Ok(Ok(session))
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if !self.id.is_empty() {
            request = request
                .header("mcp-session-id", &self.id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        Ok(request.send().await?)
    }

    /// `tools/call` of `name` with `arguments`: the answer, whatever it is.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Answer> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let response = self.post(&call).await?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response.text().await?;
        Ok(Answer {
            status,
            retry_after,
            message: message_of(&text),
            text,
        })
    }
}

/// The JSON-RPC message of a body: JSON, or the last `data:` of an event stream.
fn message_of(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("id").is_some())
}

/// How many members the sorted set `key` of database `db` holds in the redis-server on
/// `port` (inline commands over a fresh connection: `SELECT`, then `ZCARD`).
pub async fn zcard(port: u16, db: u8, key: &str) -> Result<u64> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let mut stream = tokio::io::BufReader::new(stream);
    stream
        .get_mut()
        .write_all(format!("SELECT {db}\r\nZCARD {key}\r\n").as_bytes())
        .await?;
    let mut selected = String::new();
    stream.read_line(&mut selected).await?;
    anyhow::ensure!(selected.starts_with("+OK"), "SELECT {db}: {selected}");
    let mut count = String::new();
    stream.read_line(&mut count).await?;
    count
        .trim()
        .strip_prefix(':')
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("ZCARD {key}: {count}"))
}

/// Wait (45 s at most) until the sorted set `key` holds `n` members: what another process put
/// in the store, seen in the store. Woken by the store's own keyspace notifications of the key
/// (sorted-set commands, deletion, expiry; scripts' commands notify too), each followed by a look.
pub async fn until_zcard(port: u16, db: u8, key: &str, n: u64) -> Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    tokio::time::timeout(Duration::from_secs(45), async {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        let mut stream = tokio::io::BufReader::new(stream);
        stream
            .get_mut()
            .write_all(
                format!(
                    "CONFIG SET notify-keyspace-events Kzgx\r\nSUBSCRIBE __keyspace@{db}__:{key}\r\n"
                )
                .as_bytes(),
            )
            .await?;
        let mut line = String::new();
        stream.read_line(&mut line).await?;
        anyhow::ensure!(line.starts_with("+OK"), "CONFIG SET: {line}");
        // Subscribed (the confirmation ends with the count of channels, `:1`) before the first
        // look: whatever changes after it is notified.
        while !line.starts_with(':') {
            line.clear();
            anyhow::ensure!(stream.read_line(&mut line).await? > 0, "SUBSCRIBE: closed");
        }
        loop {
            if zcard(port, db, key).await? == n {
                return anyhow::Ok(());
            }
            // The next line of a notification (a look per line: more looks than needed, none
            // missed).
            line.clear();
            anyhow::ensure!(
                stream.read_line(&mut line).await? > 0,
                "the notifications' connection closed"
            );
        }
    })
    .await
    .with_context(|| format!("{key} never held {n}"))?
}
