//! The express lane over streamable HTTP: in front of the HTTP front's router.
//!
//! `pegboard serve` ([`crate::http::serve`]) hands it each request before the router is entered;
//! the router of [`crate::http::router`], for mounting in another app, has it as its outermost
//! middleware. Either way it runs before the front's other guards (so a call it answers costs
//! none of their layers) and so checks for itself what they would: the path is `/mcp` (or
//! below), the bearer token when one is set; a request that fails either goes on to them
//! unchanged (and gets their 404 or 401).
//!
//! A `POST` of an open session (see [`super::sessions`]) carrying a `tools/call` the lane can take
//! (see [`super::call::prepare`]) or a plain `tools/list` is answered here with one JSON body
//! (`application/json`, which every client must accept), or, for a call that asked for progress,
//! with an event stream (`super::events`: the progress, then the answer); everything else goes
//! on to rmcp unchanged. Only requests rmcp would accept as they are take the lane: no `Origin` header
//! (rmcp checks those), a `Host` rmcp allows, JSON in, JSON and SSE accepted, no SEP-2243
//! `Mcp-Method` header, a legacy `MCP-Protocol-Version`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use http_body_util::BodyExt;
use pegboard::PegBoard;
use rmcp::model::ErrorData;

use super::asks::{Asks, Caller};
use super::call::prepare;
use super::cancels::Cancels;
use super::detach::Detachable;
use super::events::{self, Events};
use super::headers::{AllowedHost, accepts, accepts_alone, host_allowed, json_in};
use super::request::{Incoming, classify};
use super::tools_list::ToolsList;
use crate::call::{hooks::Hooks, watch::Who};
use crate::identity::CallAdmission;
use crate::identity::HttpAuth;
use crate::io::writer::LineOut;
use crate::limits::{LimitError, PreAdmitted, SessionActivity, SessionBook};
use crate::protocol::headers::{MCP_METHOD, PROTOCOL_VERSION, SESSION_HEADER, is_mcp_path};
use crate::session::http_sessions::{Lease, Sessions};
use crate::session::startup::Startup;
use crate::telemetry::{TraceContext, Transport};

/// A call on the lane: its session and the client's raw id.
type CallKey = (Arc<str>, Box<[u8]>);

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
    calls: Arc<Cancels<CallKey>>,
    /// The server's requests during calls on the lane, waiting for their clients' answers.
    asks: Arc<Asks>,
    /// The last Host, Content-Type and Accept found good (see [`HttpLane::plain_headers`]).
    seen: Mutex<Option<[HeaderValue; 3]>>,
    /// Who the front's requests are (clients, tokens, JWTs).
    auth: Arc<HttpAuth>,
    /// What the gateway records.
    hooks: Hooks,
    /// Who holds each session: a call on the lane keeps its session busy (never closed to make
    /// room) until it ends.
    book: Arc<SessionBook>,
}

/// What the HTTP front lets through, as the lane must check it too (see the module docs).
pub(crate) struct FrontRules {
    /// The Host values rmcp allows (as given to it).
    pub hosts: Vec<String>,
    /// Who requests are.
    pub auth: Arc<HttpAuth>,
    /// rmcp's idle limit for a session.
    pub idle: Duration,
    /// rmcp's limit on a request body.
    pub max_body: usize,
    /// What the gateway records.
    pub hooks: Hooks,
    /// Who holds each session.
    pub book: Arc<SessionBook>,
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
            calls: Arc::default(),
            asks: Arc::default(),
            seen: Mutex::new(None),
            auth: rules.auth,
            hooks: rules.hooks,
            book: rules.book,
        })
    }

    /// Whether the headers are ones rmcp would take as they are (see the module docs). Read in
    /// place: this runs on every request of an open session. A client sends the same Host,
    /// Content-Type and Accept on every request: the last three found good are kept, and a
    /// request that repeats them is not read again.
    fn plain_headers(&self, headers: &HeaderMap) -> bool {
        // rmcp serves 2026-07-28 its own way (see the module docs).
        let legacy = headers
            .get(PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v < rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
        if !legacy || headers.contains_key(header::ORIGIN) || headers.contains_key(MCP_METHOD) {
            return false;
        }
        let (Some(host), Some(content_type), Some(accept)) = (
            headers.get(header::HOST),
            headers.get(header::CONTENT_TYPE),
            headers.get(header::ACCEPT),
        ) else {
            return false;
        };
        let seen = [host, content_type, accept];
        if self
            .seen()
            .as_ref()
            .is_some_and(|last| last.iter().eq(seen))
        {
            return true;
        }
        let good = json_in(content_type)
            && accepts(headers, "application/json")
            && accepts(headers, "text/event-stream")
            && host
                .to_str()
                .is_ok_and(|text| host_allowed(text, &self.hosts));
        // Kept only when the first Accept value alone is good (a later one may have helped).
        if good && accepts_alone(accept) {
            *self.seen() = Some(seen.map(HeaderValue::clone));
        }
        good
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Option<[HeaderValue; 3]>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the lane made of a request.
pub(crate) enum Outcome<B> {
    /// Answered here.
    Answered(Response),
    /// Not the lane's, its body unread: the request as it came.
    Untouched(Request<B>),
    /// Not the lane's, after its body was read: the same request with the body's bytes.
    Read(Request),
}

impl HttpLane {
    /// Answer `request` when it is the lane's, else hand it back for the front's other layers
    /// (see the module docs). `body_timeout` bounds the wait for a body that does not come at
    /// once (`None` when an outer layer bounds it already).
    pub(crate) async fn take<B>(
        self: &Arc<Self>,
        request: axum::http::Request<B>,
        body_timeout: Option<Duration>,
    ) -> Outcome<B>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        if request.method() != axum::http::Method::POST || !is_mcp_path(request.uri().path()) {
            return Outcome::Untouched(request);
        }
        // Who it is, once: a request refused here is refused again by the front's guard, which
        // answers it (and counts it).
        let client = match self.auth.authorize(request.headers()).await {
            Ok(client) => client,
            Err(_) => return Outcome::Untouched(request),
        };
        // Every POST's body is read here, whichever way it then goes: one judge of a body too
        // large, too slow or broken, for both ways.
        let (mut parts, body) = request.into_parts();
        let bytes = match read_body(body, self.max_body, body_timeout).await {
            Ok(bytes) => bytes,
            Err(refusal) => return Outcome::Answered(refusal),
        };
        // A fleet-limited client's call of a tool on the board is counted in the store here,
        // whichever way it then goes (one round trip); a store that cannot count it is answered
        // 503 with Retry-After. (Code mode's and search mode's own tools are not calls of the
        // board: the calls they make are counted as they make them, as without a store.)
        let admitted = if client.counts_calls_in_store()
            && matches!(classify(&bytes), Incoming::Call(call) if self.board.route(&call.name).is_some())
        {
            match client.admit_shared().await {
                Err(refused @ LimitError::Unavailable { .. }) => {
                    return Outcome::Answered(unavailable(&refused));
                }
                taken => Some(PreAdmitted::new(taken)),
            }
        } else {
            None
        };
        let lease = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|_| self.enabled && self.plain_headers(&parts.headers))
            .and_then(|session| self.sessions.for_lane(session, self.idle))
            // A session serves only the client that opened it (the guard answers the others).
            .filter(|lease| Arc::ptr_eq(lease.client(), &client));
        if let Some(lease) = &lease {
            if lease.first_on_lane {
                // The session's end cancels its calls on the lane (`Cancels::end_with`).
                let id = Arc::clone(&lease.id);
                self.calls
                    .end_with(lease.ended().clone(), move |(session, _)| *session == id);
            }
            let busy = lease
                .activity(&self.book)
                .map(|activity| self.book.begin_on(activity));
            if let Some(response) = self
                .answer(&bytes, lease, &parts.headers, busy, admitted.as_ref())
                .await
            {
                return Outcome::Answered(response);
            }
            self.sessions.through_rmcp(&lease.id);
        }
        // Not taken by the lane: rmcp's way takes the admission from the request.
        if let Some(admitted) = admitted {
            parts.extensions.insert(admitted);
        }
        // For the front's layers, which need not ask again (only here: the lane needs none).
        parts.extensions.insert(client);
        if super::request::asks_tools_list(&bytes) {
            // rmcp answers it: its answer is made whole on the way out.
            parts.extensions.insert(crate::definitions::AsksToolsList);
        }
        Outcome::Read(Request::from_parts(parts, Body::from(bytes)))
    }

    /// The lane's answer to the message `bytes` of the session `lease`, if it takes it; `busy`
    /// marks the session busy (a call holds it until it ends).
    async fn answer(
        &self,
        bytes: &[u8],
        lease: &Lease,
        headers: &HeaderMap,
        busy: Option<SessionActivity>,
        admitted: Option<&PreAdmitted<CallAdmission>>,
    ) -> Option<Response> {
        match classify(bytes) {
            Incoming::Call(call) => {
                let headers_trace = TraceContext::from_headers(headers);
                let events = Events::with(Caller::new(
                    Arc::clone(&self.asks),
                    Arc::clone(&lease.id),
                    lease.peer().clone(),
                ));
                let streaming = call.progress_token().is_some();
                let progress = streaming.then(|| events.shared() as Arc<dyn LineOut>);
                let who = Who {
                    client: lease.client(),
                    hooks: &self.hooks,
                    session_id: Some(&lease.id),
                    transport: Transport::Tcp,
                    via: None,
                    admitted,
                };
                let job = prepare(
                    &self.board,
                    &call,
                    who,
                    events.shared(),
                    progress,
                    headers_trace,
                )?;
                // Registered before the response goes out: a cancel may follow it at once.
                let entry = self
                    .calls
                    .register((Arc::clone(&lease.id), Box::<[u8]>::from(call.id())))
                    .cancel_if_ended(lease.ended());
                // Driven by this request while it waits, a task of its own when not (see
                // `detach.rs`): a client whose connection drops does not cancel its call (the
                // streamable-HTTP spec); its cancel, the call's deadline or the end of its
                // session do.
                let call = Detachable::new(async move {
                    let _busy = busy;
                    entry.run(job).await
                });
                Some(events.respond(streaming, call).await)
            }
            Incoming::ListTools(id) => {
                // As rmcp's way: not before every server has started (up to `--wait`).
                self.startup.wait().await;
                lease.lists().tools_answered(lease.client());
                let body = Body::new(self.tools.answer_body(&self.board, lease.client(), id));
                Some(events::json(body))
            }
            Incoming::Cancelled(id) => {
                let key = (Arc::clone(&lease.id), Box::<[u8]>::from(id));
                self.calls
                    .cancel(&key)
                    .then(|| StatusCode::ACCEPTED.into_response())
            }
            Incoming::Response { id, result, error } => {
                let answer = match (result, error) {
                    (Some(result), _) => Ok(result.to_owned()),
                    (None, Some(error)) => Err(serde_json::from_str::<ErrorData>(error.get())
                        .unwrap_or_else(|e| {
                            ErrorData::invalid_params(
                                format!(
                                    "the client answered with an error pegboard cannot read: {e}"
                                ),
                                None,
                            )
                        })),
                    (None, None) => return None,
                };
                self.asks
                    .answer(&lease.id, id, answer)
                    .then(|| StatusCode::ACCEPTED.into_response())
            }
            Incoming::Initialize { .. } | Incoming::Other => None,
        }
    }
}

/// The answer to a request that needed the store, which cannot be reached: 503 with the
/// reason and `Retry-After`, for the client (or its load balancer) to retry.
pub(crate) fn unavailable(refused: &LimitError) -> Response {
    tracing::warn!("{refused}");
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, format!("{refused}\n")).into_response();
    let secs = refused.retry_after().map_or(1, |d| d.as_secs().max(1));
    if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The whole body, up to `max` bytes; the timer starts only when the body is not all there at
/// once (it usually came with the headers). Else the answer for the client: 413, 408 or 400.
async fn read_body<B>(body: B, max: usize, timeout: Option<Duration>) -> Result<Bytes, Response>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<axum::BoxError>,
{
    let collect = BodyExt::collect(http_body_util::Limited::new(body, max));
    let mut collect = std::pin::pin!(collect);
    let read = match (&mut collect).now_or_never() {
        Some(read) => Ok(read),
        None => match timeout {
            None => Ok(collect.await),
            Some(after) => tokio::time::timeout(after, collect).await,
        },
    };
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than the limit of {max} bytes\n"),
        )
            .into_response()),
        Ok(Err(e)) => Err((
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read whole: {e}\n"),
        )
            .into_response()),
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            "the request body stopped arriving before its end\n",
        )
            .into_response()),
    }
}

/// The middleware (see the module docs), for the router mounted in another app; `pegboard
/// serve` runs [`HttpLane::take`] before the router instead (`crate::http::serve`).
pub(crate) async fn serve(
    State(lane): State<Arc<HttpLane>>,
    request: Request,
    next: Next,
) -> Response {
    match lane.take(request, None).await {
        Outcome::Answered(response) => response,
        Outcome::Untouched(request) | Outcome::Read(request) => next.run(request).await,
    }
}
