//! Taking over a session this replica does not hold, from the store (`--store`): the request of
//! a session opened on another replica (gone, restarting, or simply not the one the balancer
//! picked) is answered here as if the session had been opened here.
//!
//! The session is read from the store (one round trip, bounded); its client must be the
//! request's (another client's token is refused 403, as for a session held here); it takes a
//! place in the session book like a new session; then rmcp restores it (its handshake replayed,
//! `crate::store::sessions`) and answers the request. Only what needs the store fails when the
//! store does: the request is answered 503 with Retry-After and the reason, and the client's
//! retry goes through once the store answers. A replica that drains adopts nothing (503 with
//! Retry-After: the balancer's retry lands on a replica that does).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::health::Health;
use super::room::{Cap, make_room, refuse, request_client};
use crate::store::sessions::StoredSessions;
use crate::store::{RETRY_AFTER_SECS, StoreError};

/// Adopt session `id` for `request` (see the module docs).
pub(super) async fn adopt(
    cap: &Cap,
    stored: &Arc<StoredSessions>,
    health: &Health,
    id: String,
    request: Request,
    next: Next,
) -> Response {
    if health.is_draining() {
        return unavailable(
            "this replica is shutting down and takes over no session: retry, another replica will"
                .into(),
        );
    }
    let record = match stored.fetch(&id).await {
        Ok(record) => record,
        Err(e) => return store_down(&e),
    };
    let Some(record) = record else {
        // Not in the store either (ended, expired, never was): rmcp answers 404.
        stored.stash(&id, None);
        let response = next.run(request).await;
        stored.unstash(&id);
        return response;
    };
    let client = &request_client(&request);
    if record.client != client.name() {
        tracing::debug!(
            client = client.name(),
            "refused to take over another client's session"
        );
        return (
            StatusCode::FORBIDDEN,
            "forbidden: this session belongs to another client; open a session of your own\n",
        )
            .into_response();
    }
    let mut reservation = match cap.book.reserve(client.name_arc(), client.max_sessions()) {
        Ok(reservation) => reservation,
        Err(refused) => return refuse(&refused),
    };
    if let Err(refused) = make_room(cap, &mut reservation, client, Some(&id)).await {
        return refused;
    }
    stored.stash(&id, Some(record));
    let response = next.run(request).await;
    stored.unstash(&id);
    // Taken over (by this request, or a concurrent one of the same session): in the book once.
    if cap.manager.holds(&id).await && cap.book.activity(&id).is_none() {
        tracing::debug!("took over session {id} from the store");
        reservation.confirm(id);
    }
    response
}

/// 503 with Retry-After and `reason`.
fn unavailable(reason: String) -> Response {
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// The store failed while a session was to be taken over (already counted and logged, with
/// the store's address: the client is told only what to do).
fn store_down(_error: &StoreError) -> Response {
    unavailable(
        "this replica does not hold the session and cannot read it from the session store now; retry shortly"
            .into(),
    )
}
