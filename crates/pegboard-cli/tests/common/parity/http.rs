//! The raw client of a `pegboard serve --http`: POSTs of JSON-RPC messages to one session,
//! each call's response read as it comes (one JSON body, or an event stream), and no
//! standalone GET stream — so a request of the server's during a call reaches this client
//! only on the call's own stream.

use anyhow::{Context, Result, bail};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{Exchange, WAIT, client_answer};

/// One session of the gateway's (cheap to clone: a call may run on a task of its own).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    session: String,
}

impl Client {
    /// A new session at `url` (`http://ADDR/mcp`): the handshake, as a client of
    /// [`super::PROTOCOL_VERSION`] with every capability.
    pub async fn open(url: &str) -> Result<Self> {
        // reqwest is built without a crypto provider in this workspace (rustls with ring).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut client = Self {
            http: reqwest::Client::new(),
            url: url.to_string(),
            session: String::new(),
        };
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": super::PROTOCOL_VERSION,
            "capabilities": super::client_capabilities(),
            "clientInfo": {"name": "parity-http", "version": "1"}
        }});
        let response = client.post(&init).await?;
        client.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .context("initialize: no session id")?
            .to_string();
        let answer = client.read(response, &init["id"]).await?;
        if answer.result().is_null() {
            bail!("initialize failed: {:?}", answer.answer);
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = client.post(&initialized).await?.status();
        if status != StatusCode::ACCEPTED {
            bail!("notifications/initialized: HTTP {status}");
        }
        Ok(client)
    }

    /// The session's id (`Mcp-Session-Id`).
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// POST `message` to the session.
    pub async fn post(&self, message: &Value) -> Result<reqwest::Response> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", super::PROTOCOL_VERSION)
            .body(message.to_string());
        if !self.session.is_empty() {
            request = request.header("mcp-session-id", &self.session);
        }
        Ok(tokio::time::timeout(WAIT, request.send()).await??)
    }

    /// End the session (`DELETE`): the response's status.
    pub async fn delete(&self) -> Result<StatusCode> {
        let request = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", super::PROTOCOL_VERSION);
        Ok(tokio::time::timeout(WAIT, request.send()).await??.status())
    }

    /// Send `request` and read its response to the end or to the answer.
    pub async fn call(&self, request: &Value) -> Result<Exchange> {
        let response = self.post(request).await?;
        self.read(response, &request["id"]).await
    }

    /// Read the response to request `id`: one JSON body, or an event stream read event by
    /// event until the answer (or its end), each request of the server's in it answered by a
    /// POST as it comes.
    async fn read(&self, mut response: reqwest::Response, id: &Value) -> Result<Exchange> {
        let status = response.status();
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().trim().to_string());
        let mut exchange = Exchange {
            status: Some(status.as_u16()),
            kind: kind.clone(),
            ..Exchange::default()
        };
        if kind.as_deref() != Some("text/event-stream") {
            let body = tokio::time::timeout(WAIT, response.text()).await??;
            if !body.trim().is_empty() {
                let answer: Value = serde_json::from_str(&body)
                    .with_context(|| format!("HTTP {status}: not JSON: {body}"))?;
                exchange.answer = Some(answer);
            }
            return Ok(exchange);
        }
        let mut events = Events::default();
        loop {
            let chunk = tokio::time::timeout(WAIT, response.chunk())
                .await
                .with_context(|| format!("the stream of {id} stalled: {exchange:?}"))??;
            let Some(chunk) = chunk else {
                return Ok(exchange);
            };
            for message in events.feed(&chunk) {
                if message.get("method").is_none() && message.get("id") == Some(id) {
                    exchange.answer = Some(message);
                    return Ok(exchange);
                }
                if message.get("method").is_some() && message.get("id").is_some() {
                    let answered = self.post(&client_answer(&message)).await?.status();
                    if answered != StatusCode::ACCEPTED {
                        bail!("the answer to {message} was refused: HTTP {answered}");
                    }
                }
                exchange.before.push(message);
            }
        }
    }
}

/// Server-sent events split out of a response's chunks: the JSON of each event's data.
#[derive(Default)]
struct Events {
    /// Bytes of events not yet complete (a chunk may end inside a character).
    pending: Vec<u8>,
}

impl Events {
    /// Take `chunk`; the messages of the events it completes (events end with a blank line;
    /// the gateway writes `\n` line ends).
    fn feed(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.pending.extend_from_slice(chunk);
        let mut messages = Vec::new();
        while let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = self.pending.drain(..end + 2).collect();
            let event = String::from_utf8_lossy(&event);
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            // A priming event (an id, no data) carries no message.
            if let Ok(message) = serde_json::from_str::<Value>(&data.join("\n")) {
                messages.push(message);
            }
        }
        messages
    }
}
