//! The streamable HTTP client: HTTP/1.1 keep-alive connections (hyper's bare connection API, no
//! pool, `TCP_NODELAY` on), one MCP session shared by all of them, N connections for N in flight.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::cpu::Probe;
use crate::rpc::{self, Budget, INITIALIZED, Incoming, PROTOCOL_VERSION, Samples, Template};

const SESSION: &str = "mcp-session-id";

/// One keep-alive connection.
struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
}

/// What the harness needs to address the endpoint.
#[derive(Clone)]
struct Endpoint {
    addr: SocketAddr,
    path: String,
    host: HeaderValue,
    session: Option<HeaderValue>,
    /// `Authorization: Bearer ...`, for a front with clients.
    auth: Option<HeaderValue>,
}

impl Endpoint {
    async fn connect(&self) -> Result<Conn> {
        let stream = TcpStream::connect(self.addr)
            .await
            .with_context(|| format!("cannot connect to {}", self.addr))?;
        // The harness's own writes must not wait for ACKs: what is measured is the server's side.
        stream.set_nodelay(true)?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Conn { sender })
    }

    /// POST one message; the status, the session id, the JSON-RPC message found in the body (if
    /// any) and when the body's last byte arrived.
    async fn post(
        &self,
        conn: &mut Conn,
        body: Vec<u8>,
    ) -> Result<(StatusCode, Option<HeaderValue>, Option<Bytes>, Instant)> {
        let body = Bytes::from(body);
        let request = || {
            let mut request = Request::post(self.path.as_str())
                .header(HOST, self.host.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .header("mcp-protocol-version", PROTOCOL_VERSION);
            if let Some(session) = &self.session {
                request = request.header(SESSION, session.clone());
            }
            if let Some(auth) = &self.auth {
                request = request.header(hyper::header::AUTHORIZATION, auth.clone());
            }
            request.body(Full::new(body.clone()))
        };
        // The gateway closes a keep-alive connection left idle past its header read timeout (10
        // s), as rounds of many fronts leave them: one closed before the request went out is
        // opened again, and the request sent on the new one (warm-up absorbs the reconnect).
        if conn.sender.is_closed() || conn.sender.ready().await.is_err() {
            *conn = self.connect().await?;
        }
        let response = match conn.sender.send_request(request()?).await {
            Err(e) if e.is_closed() || e.is_canceled() => {
                *conn = self.connect().await?;
                conn.sender.ready().await?;
                conn.sender.send_request(request()?).await?
            }
            other => other?,
        };
        let (parts, body) = response.into_parts();
        let session = parts.headers.get(SESSION).cloned();
        let sse = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = body.collect().await?.to_bytes();
        let arrived = Instant::now();
        let message = if sse {
            sse_message(&bytes)
        } else {
            Some(bytes)
        };
        Ok((
            parts.status,
            session,
            message.filter(|m| !m.is_empty()),
            arrived,
        ))
    }

    /// POST a request and probe its answer: when its body's last byte arrived, and its outcome.
    async fn call(&self, conn: &mut Conn, body: Vec<u8>) -> Result<(Instant, Result<(), String>)> {
        let (status, _, message, arrived) = self.post(conn, body).await?;
        if !status.is_success() {
            return Ok((arrived, Err(format!("HTTP {status}"))));
        }
        match rpc::probe(message.as_deref().unwrap_or_default())? {
            Incoming::Answer(_, outcome) => Ok((arrived, outcome)),
            Incoming::Other => bail!("the HTTP answer held no JSON-RPC response"),
        }
    }
}

/// The first `data:` line holding a JSON object, in an SSE body.
fn sse_message(body: &Bytes) -> Option<Bytes> {
    let mut offset = 0;
    for line in body.split(|b| *b == b'\n') {
        let start = offset;
        offset += line.len() + 1;
        let Some(data) = line.strip_prefix(b"data:") else {
            continue;
        };
        let trimmed = data.trim_ascii();
        if trimmed.first() == Some(&b'{') {
            let begin = start + 5 + (data.len() - data.trim_ascii_start().len());
            return Some(body.slice(begin..begin + trimmed.len()));
        }
    }
    None
}

/// An MCP session over streamable HTTP.
pub struct HttpPeer {
    endpoint: Endpoint,
    conns: Vec<Conn>,
    next_id: Arc<AtomicU64>,
}

impl HttpPeer {
    /// Open a session at `http://addr/path`: initialize (keeping the session id), then initialized.
    pub async fn start(addr: SocketAddr, path: &str) -> Result<Self> {
        Self::start_as(addr, path, None).await
    }

    /// [`HttpPeer::start`] with `token` as the bearer token of every request.
    pub async fn start_as(addr: SocketAddr, path: &str, token: Option<&str>) -> Result<Self> {
        let auth = match token {
            Some(token) => Some(HeaderValue::from_str(&format!("Bearer {token}"))?),
            None => None,
        };
        let mut endpoint = Endpoint {
            addr,
            path: path.to_owned(),
            host: HeaderValue::from_str(&addr.to_string())?,
            session: None,
            auth,
        };
        let mut conn = endpoint.connect().await?;
        let init = Template::new("initialize", &rpc::initialize_params()).build(1);
        let (status, session, message, _) = endpoint.post(&mut conn, init).await?;
        if !status.is_success() || message.is_none() {
            bail!("initialize over HTTP answered {status}");
        }
        endpoint.session = session;
        let (status, _, _, _) = endpoint.post(&mut conn, INITIALIZED.to_vec()).await?;
        if !status.is_success() {
            bail!("notifications/initialized over HTTP answered {status}");
        }
        Ok(Self {
            endpoint,
            conns: vec![conn],
            next_id: Arc::new(AtomicU64::new(2)),
        })
    }

    /// Warm up, then measure `request` over `concurrency` keep-alive connections.
    pub async fn load(
        &mut self,
        request: &Template,
        concurrency: usize,
        budget: Budget,
        probe: Probe,
    ) -> Result<Samples> {
        while self.conns.len() < concurrency {
            let conn = self.endpoint.connect().await?;
            self.conns.push(conn);
        }
        let warm = Instant::now() + budget.time / 4;
        self.phase(request, concurrency, budget.warmup, Some(warm))
            .await?;
        let deadline = Instant::now() + budget.time;
        let cpu = probe.read();
        let mut samples = self
            .phase(request, concurrency, budget.calls, Some(deadline))
            .await?;
        samples.cpu_ns = probe.since(cpu);
        Ok(samples)
    }

    async fn phase(
        &mut self,
        request: &Template,
        concurrency: usize,
        count: u64,
        deadline: Option<Instant>,
    ) -> Result<Samples> {
        let issued = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::with_capacity(concurrency);
        let start = Instant::now();
        for mut conn in self.conns.drain(..concurrency) {
            let (endpoint, request) = (self.endpoint.clone(), request.clone());
            let (issued, ids) = (issued.clone(), self.next_id.clone());
            tasks.push(tokio::spawn(async move {
                let mut samples = Samples::default();
                while issued.fetch_add(1, Ordering::Relaxed) < count
                    && deadline.is_none_or(|d| Instant::now() < d)
                {
                    let body = request.build(ids.fetch_add(1, Ordering::Relaxed));
                    let sent = Instant::now();
                    match endpoint.call(&mut conn, body).await {
                        Ok((arrived, outcome)) => samples.record(sent, arrived, outcome),
                        Err(e) => return (conn, samples, Err(e)),
                    }
                }
                (conn, samples, Ok(()))
            }));
        }
        let mut all = Samples::default();
        let mut failure = None;
        for task in tasks {
            let (conn, samples, result) = task.await?;
            self.conns.push(conn);
            all.latencies_ns.extend(samples.latencies_ns);
            all.errors += samples.errors;
            if all.first_error.is_none() {
                all.first_error = samples.first_error;
            }
            if let Err(e) = result {
                failure.get_or_insert(e);
            }
        }
        all.elapsed = start.elapsed();
        match failure {
            Some(e) => Err(e),
            None => Ok(all),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_finds_the_json_data_line() {
        let body = Bytes::from_static(b"id: 0\nretry: 3000\ndata:\n\nid: 1\ndata: {\"id\":7}\n\n");
        assert_eq!(sse_message(&body).as_deref(), Some(&b"{\"id\":7}"[..]));
        assert_eq!(sse_message(&Bytes::from_static(b"data:\n\n")), None);
    }
}
