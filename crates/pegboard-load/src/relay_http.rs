//! `pegboard-load relay-http`: the floor of an HTTP front on a stdio backend. The least a gateway
//! serving streamable HTTP can do: take each POSTed message off a keep-alive connection (hyper,
//! `TCP_NODELAY`, one runtime thread as `pegboard serve` has), rename `b-<tool>` by bytes, write
//! it to the backend's stdin, and answer the POST with the backend's answer as one JSON body.
//!
//! Not a gateway (no sessions, no checks, the harness's numeric ids passed through unchanged): a
//! yardstick for the harness, as `relay` is for stdio.

use std::collections::HashMap;
use std::convert::Infallible;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::header::CONTENT_TYPE;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::oneshot;

use crate::relay::rename_raw;

/// Requests sent to the backend and not answered yet, by id.
type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Bytes>>>>;

/// The id of a message, when it has a numeric one.
#[derive(Deserialize)]
struct Id {
    id: Option<u64>,
}

fn id_of(message: &[u8]) -> Option<u64> {
    serde_json::from_slice::<Id>(message).ok()?.id
}

struct Relay {
    stdin: tokio::sync::Mutex<ChildStdin>,
    waiting: Waiting,
}

impl Relay {
    async fn handle(&self, request: Request<Body>) -> Response<Full<Bytes>> {
        let Ok(body) = request.into_body().collect().await else {
            return status(StatusCode::BAD_REQUEST);
        };
        let mut line = rename_raw(&body.to_bytes());
        line.push(b'\n');
        let answer = id_of(&line).map(|id| {
            let (tx, rx) = oneshot::channel();
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, tx);
            rx
        });
        {
            let mut stdin = self.stdin.lock().await;
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                return status(StatusCode::BAD_GATEWAY);
            }
        }
        let Some(answer) = answer else {
            // A notification: nothing comes back.
            return status(StatusCode::ACCEPTED);
        };
        match answer.await {
            Ok(message) => {
                let mut response = Response::new(Full::new(message));
                response.headers_mut().insert(
                    CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("application/json"),
                );
                response
            }
            Err(_) => status(StatusCode::BAD_GATEWAY),
        }
    }
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

/// Run the HTTP relay in front of `backend` (an argv) until killed.
pub fn run(backend: &[String]) -> Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(backend))
}

async fn serve(backend: &[String]) -> Result<()> {
    let (program, args) = backend
        .split_first()
        .context("relay-http: no backend command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("relay-http: cannot start {program}"))?;
    let stdin = child.stdin.take().context("no stdin pipe")?;
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let waiting: Waiting = Arc::default();
    let answers = Arc::clone(&waiting);
    tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(64 * 1024, stdout).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            let Some(id) = id_of(&line) else { continue };
            let to = answers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            if let Some(to) = to {
                let _ = to.send(Bytes::from(line));
            }
        }
    });
    let relay = Arc::new(Relay {
        stdin: tokio::sync::Mutex::new(stdin),
        waiting,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    eprintln!(
        "pegboard-load relay-http: serving at http://{}/mcp",
        listener.local_addr()?
    );
    loop {
        let (tcp, _) = listener.accept().await?;
        tcp.set_nodelay(true)?;
        let relay = Arc::clone(&relay);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let relay = Arc::clone(&relay);
                async move { Ok::<_, Infallible>(relay.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_requests_and_answers() {
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","method":"x","id":7}"#), Some(7));
        assert_eq!(id_of(br#"{"id":3,"result":{}}"#), Some(3));
        assert_eq!(id_of(br#"{"method":"notifications/initialized"}"#), None);
        assert_eq!(id_of(b"not json"), None);
    }
}
