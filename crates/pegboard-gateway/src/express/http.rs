//! The express lane over streamable HTTP: the outermost middleware of the HTTP front.
//!
//! It runs before the front's other guards (so a call it answers costs none of their layers) and
//! so checks for itself what they would: the path is `/mcp` (or below), the bearer token when one
//! is set; a request that fails either goes on to them unchanged (and gets their 404 or 401).
//!
//! A `POST` of an open session (see [`super::sessions`]) carrying a `tools/call` the lane can take
//! (see [`super::call::prepare`]) or a plain `tools/list` is answered here with one JSON body
//! (`application/json`, which every client must accept); everything else goes on to rmcp
//! unchanged. Only requests rmcp would accept as they are take the lane: no `Origin` header
//! (rmcp checks those), a `Host` rmcp allows, JSON in, JSON and SSE accepted, no SEP-2243
//! `Mcp-Method` header, a legacy `MCP-Protocol-Version`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use foldhash::fast::RandomState;
use pegboard::PegBoard;
use tokio_util::sync::CancellationToken;

use super::call::prepare;
use super::request::{Incoming, classify};
use super::sessions::{SESSION_HEADER, Sessions};
use super::tools_list::ToolsList;
use crate::startup::Startup;

/// Calls on the lane by session and the client's raw id: how to cancel each.
type Calls = HashMap<(Arc<str>, Box<[u8]>), CancellationToken, RandomState>;

/// Headers the lane reads on every request, named once (a name given as `&str` is parsed at
/// each lookup).
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");

/// What the middleware needs (see the module docs).
pub(crate) struct HttpLane {
    /// Off in search mode (the list and the calls are the search tools') and `--stateless`.
    enabled: bool,
    board: PegBoard,
    sessions: Arc<Sessions>,
    startup: Startup,
    tools: ToolsList,
    /// The Host values rmcp allows, read once.
    hosts: Vec<AllowedHost>,
    /// rmcp's idle limit for a session.
    idle: Duration,
    /// rmcp's limit on a request body.
    max_body: usize,
    /// Calls on the lane by session and the client's raw id: how to cancel each.
    calls: Mutex<Calls>,
    /// The last Host value found allowed: clients send the same one on every request.
    last_host: Mutex<Option<HeaderValue>>,
    /// The bearer token the front requires, if any.
    token: Option<String>,
}

/// What the HTTP front lets through, as the lane must check it too (see the module docs).
pub(crate) struct FrontRules {
    /// The Host values rmcp allows (as given to it).
    pub hosts: Vec<String>,
    /// The bearer token, if one is required.
    pub token: Option<String>,
    /// rmcp's idle limit for a session.
    pub idle: Duration,
    /// rmcp's limit on a request body.
    pub max_body: usize,
}

impl HttpLane {
    pub(crate) fn new(
        enabled: bool,
        board: PegBoard,
        sessions: Arc<Sessions>,
        startup: Startup,
        rules: FrontRules,
    ) -> Arc<Self> {
        Arc::new(Self {
            enabled,
            board,
            sessions,
            startup,
            tools: ToolsList::default(),
            hosts: rules.hosts.iter().map(|h| AllowedHost::new(h)).collect(),
            idle: rules.idle,
            max_body: rules.max_body,
            calls: Mutex::new(HashMap::default()),
            last_host: Mutex::new(None),
            token: rules.token,
        })
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the headers are ones rmcp would take as they are (see the module docs). Read in
    /// place: this runs on every request of an open session.
    fn plain_headers(&self, headers: &HeaderMap) -> bool {
        let text = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        let accepts = |wanted: &str| {
            headers
                .get_all(header::ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .any(|v| {
                    v.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .eq_ignore_ascii_case(wanted)
                })
        };
        let json_in = text(&header::CONTENT_TYPE).is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
        !headers.contains_key(header::ORIGIN)
            && !headers.contains_key(MCP_METHOD)
            && json_in
            && accepts("application/json")
            && accepts("text/event-stream")
            && text(&PROTOCOL_VERSION)
                .is_none_or(|v| v < rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
            && headers
                .get(header::HOST)
                .is_some_and(|host| self.host_allowed(host))
    }

    /// rmcp's Host rule ([`host_allowed`]), remembering the last value it allowed.
    fn host_allowed(&self, host: &HeaderValue) -> bool {
        let mut last = self
            .last_host
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if last.as_ref() == Some(host) {
            return true;
        }
        let allowed = host
            .to_str()
            .is_ok_and(|text| host_allowed(text, &self.hosts));
        if allowed {
            *last = Some(host.clone());
        }
        allowed
    }
}

/// An entry of rmcp's allowed Host list: a host, and the port when the entry names one.
#[derive(Debug)]
struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    fn new(entry: &str) -> Self {
        match entry.trim().parse::<axum::http::uri::Authority>() {
            Ok(a) => Self {
                host: bare(a.host()).to_owned(),
                port: a.port_u16(),
            },
            Err(_) => Self {
                host: bare(entry.trim()).to_owned(),
                port: None,
            },
        }
    }
}

/// A host without the brackets of an IPv6 literal.
fn bare(host: &str) -> &str {
    host.trim_matches(['[', ']'])
}

/// rmcp's Host rule: the host (and the port, when the allowed entry has one) of an entry.
fn host_allowed(host: &str, allowed: &[AllowedHost]) -> bool {
    let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    let (host, port) = (bare(authority.host()), authority.port_u16());
    allowed.is_empty()
        || allowed
            .iter()
            .any(|a| a.host.eq_ignore_ascii_case(host) && a.port.is_none_or(|p| Some(p) == port))
}

/// The middleware (see the module docs).
pub(crate) async fn serve(
    State(lane): State<Arc<HttpLane>>,
    request: Request,
    next: Next,
) -> Response {
    let session: Option<Arc<str>> = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    let Some(session) = session.filter(|_| lane.enabled) else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    let for_mcp = path
        .strip_prefix(crate::http::MCP_PATH)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    let authorized = lane.token.as_deref().is_none_or(|expected| {
        crate::http::bearer_matches(expected, request.headers().get(header::AUTHORIZATION))
    });
    if !for_mcp || !authorized {
        return next.run(request).await;
    }
    if request.method() == axum::http::Method::DELETE {
        // The client ends the session: no call of it takes the lane from now on.
        lane.sessions.remove(&session);
        return next.run(request).await;
    }
    let peer = (request.method() == axum::http::Method::POST
        && lane.plain_headers(request.headers()))
    .then(|| lane.sessions.for_lane(&session, lane.idle))
    .flatten();
    let Some(peer) = peer else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, lane.max_body).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body could not be read whole (limit {} bytes): {e}\n",
                    lane.max_body
                ),
            )
                .into_response();
        }
    };
    match classify(&bytes) {
        Incoming::Call(call) => {
            // Progress needs an event stream: a call asking for it goes rmcp's way.
            if let Some(job) = prepare(&lane.board, &peer, &call, None) {
                let key = (Arc::clone(&session), Box::<[u8]>::from(call.id()));
                let cancel = CancellationToken::new();
                lane.calls().insert(key.clone(), cancel.clone());
                // Removed however this ends, also when the client goes away mid-call and this
                // future is dropped (the job, dropped too, cancels the call upstream).
                let _entry = CallEntry(&lane, key);
                let answer = tokio::select! {
                    answer = job.run() => Some(answer),
                    () = cancel.cancelled() => None,
                };
                return match answer {
                    Some(line) => json(line),
                    // Cancelled by the client, which expects no answer: end the exchange.
                    None => StatusCode::ACCEPTED.into_response(),
                };
            }
        }
        Incoming::ListTools(id) if lane.startup.is_settled() => {
            return json(lane.tools.answer(&lane.board, id));
        }
        Incoming::Cancelled(id) => {
            let key = (Arc::clone(&session), Box::<[u8]>::from(id));
            if let Some(cancel) = lane.calls().remove(&key) {
                cancel.cancel();
                return StatusCode::ACCEPTED.into_response();
            }
        }
        Incoming::ListTools(_) | Incoming::Other => {}
    }
    lane.sessions.through_rmcp(&session);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A call's entry in [`HttpLane::calls`], removed when dropped.
struct CallEntry<'a>(&'a HttpLane, (Arc<str>, Box<[u8]>));

impl Drop for CallEntry<'_> {
    fn drop(&mut self) {
        self.0.calls().remove(&self.1);
    }
}

/// A JSON-RPC answer line as the response body.
fn json(mut line: Vec<u8>) -> Response {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        Bytes::from(line),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_follow_rmcps_rule() {
        let allowed =
            Vec::from(["localhost", "127.0.0.1", "::1", "gw.lan:8700"].map(AllowedHost::new));
        for ok in [
            "localhost:8700",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:8700",
            "gw.lan:8700",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "evil.com",
            "gw.lan:9999",
            "gw.lan",
            "127.0.0.2:8700",
            "not a host",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }
}
