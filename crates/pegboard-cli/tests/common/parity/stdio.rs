//! The raw client of a `pegboard serve` over stdio: JSON-RPC lines on its stdin and stdout.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Mutex, mpsc};

use super::{Exchange, WAIT, client_answer};

/// One client session on the gateway's stdin and stdout.
pub struct Client {
    stdin: Arc<Mutex<ChildStdin>>,
    /// Everything the gateway writes, in order.
    inbox: mpsc::UnboundedReceiver<Value>,
}

impl Client {
    /// Read `stdout` as it comes: a request of the server's is answered at once (as a client
    /// does, whatever it is doing) and also kept, with everything else, for the reader.
    pub fn new(stdin: ChildStdin, stdout: ChildStdout) -> Self {
        let stdin = Arc::new(Mutex::new(stdin));
        let (tx, inbox) = mpsc::unbounded_channel();
        let answers = Arc::clone(&stdin);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if message.get("method").is_some() && message.get("id").is_some() {
                    let answer = format!("{}\n", client_answer(&message));
                    if answers
                        .lock()
                        .await
                        .write_all(answer.as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Self { stdin, inbox }
    }

    /// The MCP handshake, as a client of [`super::PROTOCOL_VERSION`] with every capability.
    pub async fn handshake(&mut self) -> Result<()> {
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": super::PROTOCOL_VERSION,
            "capabilities": super::client_capabilities(),
            "clientInfo": {"name": "parity-stdio", "version": "1"}
        }});
        let answer = self.call(&init).await?;
        if answer.result().is_null() {
            bail!("initialize failed: {:?}", answer.answer);
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }

    /// Write one message.
    pub async fn send(&self, message: &Value) -> Result<()> {
        let line = format!("{message}\n");
        self.stdin.lock().await.write_all(line.as_bytes()).await?;
        Ok(())
    }

    /// Send `request` and read until its answer.
    pub async fn call(&mut self, request: &Value) -> Result<Exchange> {
        self.send(request).await?;
        self.until_answer(&request["id"]).await
    }

    /// Read until the answer to request `id`: it, and everything before it.
    pub async fn until_answer(&mut self, id: &Value) -> Result<Exchange> {
        let mut before = Vec::new();
        loop {
            let message = tokio::time::timeout(WAIT, self.inbox.recv())
                .await
                .with_context(|| format!("no answer to {id} within {WAIT:?}: {before:?}"))?
                .context("the gateway closed its stdout")?;
            if message.get("method").is_none() && message.get("id") == Some(id) {
                return Ok(Exchange {
                    before,
                    answer: Some(message),
                    ..Exchange::default()
                });
            }
            before.push(message);
        }
    }

    /// Whether the gateway answers request `id` (a call that must get none): `sync`, a request
    /// through the same server, goes out after it and comes back; everything before its answer
    /// is read. The caller has waited for the call's end upstream first, so an answer the
    /// server or the gateway sent for it would be out ahead of `sync`'s.
    pub async fn ended_without_answer(&mut self, id: &Value, sync: &Value) -> Result<Exchange> {
        let synced = self.call(sync).await?;
        let answer = synced
            .before
            .iter()
            .find(|m| m.get("method").is_none() && m.get("id") == Some(id))
            .cloned();
        Ok(Exchange {
            before: synced.before,
            answer,
            ..Exchange::default()
        })
    }
}
