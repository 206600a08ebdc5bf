//! Bounds on HTTP sessions: how many may be open at once, per client and in all, and how long
//! an idle one lives.
//!
//! rmcp's `LocalSessionManager` closes a session after `keep_alive` of inactivity
//! (`--session-idle`) and drops a session's state when the client ends it (`DELETE`); what it
//! lacks is a cap on how many sessions exist. Each open session costs a worker task and its
//! buffers (~55 KB), so without a cap any client can grow the gateway without bound.
//!
//! The [`SessionBook`] knows who holds each session and which are idle (no request in
//! progress: [`cap`] marks each request of a session busy until its response body ends, the
//! express lane each call it carries). A new session (a `POST` without `Mcp-Session-Id`) is
//! reserved for the request's client: at its own limit (`maxSessions`, by default its fair
//! share of `--max-sessions`) its least recently used idle session is closed to make room; at
//! the global cap, the least recently used idle session of any client. Only when no session
//! that could make room is idle is it refused: 429 naming `maxSessions`, or 503 naming
//! `--max-sessions`, both with `Retry-After`. So one client that opens sessions and abandons
//! them recycles its own and never locks another out. Requests of existing sessions are never
//! refused here.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

#[cfg(feature = "store")]
use super::adopt::adopt;
use super::replica::{ReplicaId, ReplicaSessions};
pub(crate) use super::room::Cap;
use super::room::{make_room, refuse, request_client};
use crate::limits::{SessionActivity, SessionBook};
use crate::protocol::headers::SESSION_HEADER;

/// How many HTTP sessions may exist and how long an idle one lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Open sessions at most: over this the least recently used idle one is closed for a new
    /// one, and a new one is refused with 503 when none is idle.
    pub max: usize,
    /// A session with no request for this long is closed.
    pub idle: Duration,
}

impl Default for SessionLimits {
    /// 1,000 sessions, closed after 5 minutes idle.
    fn default() -> Self {
        Self {
            max: 1000,
            idle: Duration::from_secs(300),
        }
    }
}

/// The session manager for `limits`, issuing ids that start with `replica` (when given),
/// telling `book` of every session it closes; shared by the MCP service and [`cap`].
pub(crate) fn manager(
    limits: SessionLimits,
    replica: Option<ReplicaId>,
    book: Arc<SessionBook>,
    #[cfg(feature = "store")] stored: Option<Arc<crate::store::sessions::StoredSessions>>,
) -> Arc<ReplicaSessions> {
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.idle);
    let sessions = ReplicaSessions::new(manager, replica).with_book(book);
    #[cfg(feature = "store")]
    let sessions = match stored {
        Some(stored) => sessions.with_store(stored),
        None => sessions,
    };
    Arc::new(sessions)
}

/// Admit a new session for the request's client, or mark a request of an open session busy
/// until its response ends (see the module docs).
pub(crate) async fn cap(State(cap): State<Cap>, request: Request, next: Next) -> Response {
    if let Some(id) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
    {
        #[cfg(feature = "store")]
        if let Some((stored, health)) = &cap.stored {
            if !cap.manager.holds(id).await {
                let id = id.to_string();
                return adopt(&cap, stored, health, id, request, next).await;
            }
            stored.used(id);
        }
        let busy = cap.book.begin(id);
        let response = next.run(request).await;
        return match busy {
            Some(busy) => held(response, busy),
            None => response,
        };
    }
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let client = &request_client(&request);
    #[cfg(feature = "store")]
    let client_name = Arc::clone(client.name_arc());
    let mut reservation = match cap.book.reserve(client.name_arc(), client.max_sessions()) {
        Ok(reservation) => reservation,
        Err(refused) => return refuse(&refused),
    };
    if let Err(refused) = make_room(&cap, &mut reservation, client, None).await {
        return refused;
    }
    let response = next.run(request).await;
    match response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
    {
        Some(id) => {
            // Written to the store before the client learns the id: its next request may go
            // to any replica.
            #[cfg(feature = "store")]
            if let Some((stored, _)) = &cap.stored {
                stored.opened(id, &client_name).await;
            }
            // Its place among a fleet-wide `maxSessions` goes by its id from now on: a replica
            // that takes the session over keeps that place, and takes no other.
            reservation.name_place(id).await;
            reservation.confirm(id);
        }
        // No session was opened (an error, a stateless answer): the place is freed.
        None => drop(reservation),
    }
    response
}

/// `response` with its body holding `busy` until it ends (an event stream may last the call, or
/// the session's life for its `GET` stream).
fn held(response: Response, busy: SessionActivity) -> Response {
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(Held { body, _busy: busy }))
}

/// A body that keeps its session busy while it is sent.
struct Held {
    body: Body,
    _busy: SessionActivity,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
