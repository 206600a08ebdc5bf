//! Making room for a session: the state the session layers share ([`Cap`]), the request's
//! client, closing an idle session to make room for a new one, and the answer that refuses one.
//! Used by a new session (`sessions.rs`) and a session taken over from the store (`adopt.rs`).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;

use super::replica::ReplicaSessions;
use crate::identity::{Client, DEFAULT_CLIENT};
use crate::limits::{LimitError, Reservation, SessionBook};
use crate::session::http_sessions::Sessions;

/// What a client is told to wait before trying to open a session again, in seconds.
const RETRY_AFTER_SECS: &str = "5";

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

/// The request's client: the guard before the session layer put it in (see `http::admit`);
/// without one (no clients configured), the default client.
pub(super) fn request_client(request: &Request) -> Arc<Client> {
    request.extensions().get::<Arc<Client>>().map_or_else(
        || Arc::new(Client::unrestricted(DEFAULT_CLIENT, usize::MAX)),
        Arc::clone,
    )
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
