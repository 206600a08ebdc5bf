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
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::replica::{ReplicaId, ReplicaSessions};
use crate::identity::{Client, DEFAULT_CLIENT};
use crate::limits::{LimitError, Reservation, SessionActivity, SessionBook};
use crate::protocol::headers::SESSION_HEADER;
use crate::session::http_sessions::Sessions;

/// What a client is told to wait before trying to open a session again, in seconds.
const RETRY_AFTER_SECS: &str = "5";

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

/// The state of [`cap`]: the sessions, who holds them, and the lane's registry of them.
#[derive(Debug, Clone)]
pub(crate) struct Cap {
    pub(crate) manager: Arc<ReplicaSessions>,
    pub(crate) book: Arc<SessionBook>,
    pub(crate) sessions: Arc<Sessions>,
    /// With `--store`: the store's sessions (adopted here when not held) and whether this
    /// replica drains (then it adopts none).
    #[cfg(feature = "store")]
    pub(crate) stored: Option<(
        Arc<crate::store::sessions::StoredSessions>,
        Arc<super::health::Health>,
    )>,
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
                return super::adopt::adopt(&cap, stored, health, id, request, next).await;
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
    // The guard before this layer put the request's client in (see `http::admit`).
    let fallback;
    let client = match request.extensions().get::<Arc<Client>>() {
        Some(client) => client,
        None => {
            fallback = Arc::new(Client::unrestricted(DEFAULT_CLIENT, usize::MAX));
            &fallback
        }
    };
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

/// Close the session `reservation` gave up to make room, if any; when the client's
/// `maxSessions` is counted for the fleet, take the session's place in the store (`adopting`:
/// the id of a session taken over from the store, whose place it keeps). Else the answer that
/// refuses the session.
pub(super) async fn make_room(
    cap: &Cap,
    reservation: &mut Reservation,
    client: &Client,
    adopting: Option<&str>,
) -> Result<(), Response> {
    if let Some(evicted) = reservation.evicted() {
        close(cap, client, evicted).await;
    }
    let Some((shared, max)) = client.shared_sessions() else {
        return Ok(());
    };
    // The client's `maxSessions` counts the fleet's sessions (the store's).
    let replacing = reservation.take_evicted_place();
    let mut taken = shared
        .reserve_session(client.name(), max, replacing, adopting)
        .await;
    if let Err(LimitError::ClientSessions { .. }) = taken
        && let Some((evicted, place)) = cap.book.evict_idle_of(client.name())
    {
        // The fleet holds its limit: this replica's idle session of the client that was used
        // least recently makes room, as on one replica.
        close(cap, client, &evicted).await;
        taken = shared
            .reserve_session(client.name(), max, place, adopting)
            .await;
    }
    match taken {
        Ok(place) => {
            reservation.hold(place);
            Ok(())
        }
        Err(refused @ LimitError::Unavailable { .. }) => {
            Err(crate::express::http::unavailable(&refused))
        }
        Err(refused) => Err(refuse(&refused)),
    }
}

/// Close `evicted`, given up to make room for a new session of `client`.
async fn close(cap: &Cap, client: &Client, evicted: &crate::limits::EvictedSession) {
    tracing::info!(
        client = client.name(),
        "closing the idle HTTP session {} of client `{}`, used least recently, to make room \
         for a new one (maxSessions / --max-sessions)",
        evicted.id,
        evicted.client
    );
    cap.sessions.end(&evicted.id);
    // Ended everywhere, as by its client's DELETE: no replica takes it over from the store.
    // (A store that fails is counted and logged; the session's record then expires by itself.)
    #[cfg(feature = "store")]
    if let Some((stored, _)) = &cap.stored {
        let _ = stored.delete(&evicted.id).await;
    }
    let id: rmcp::transport::streamable_http_server::session::SessionId = Arc::clone(&evicted.id);
    if let Err(e) = cap.manager.close_session(&id).await {
        tracing::debug!("closing session {id}: {e}");
    }
}

/// The answer to a new session refused by `limit`: 429 for the client's own limit, 503 for the
/// gateway's, with `Retry-After`.
pub(super) fn refuse(limit: &LimitError) -> Response {
    tracing::warn!("refused a new HTTP session: {limit}");
    let status = match limit {
        LimitError::ClientSessions { .. } => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut response = (status, format!("{limit}\n")).into_response();
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_SECS),
    );
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
