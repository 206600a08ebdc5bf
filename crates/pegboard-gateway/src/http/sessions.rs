//! Bounds on HTTP sessions: how many may be open at once, and how long an idle one lives.
//!
//! rmcp's `LocalSessionManager` already closes a session after `keep_alive` of inactivity
//! (`--session-idle`) and drops a session's state when the client ends it (`DELETE`); what it
//! lacks is a cap on how many sessions exist. Each open session costs a worker task and its
//! buffers (~55 KB), so without a cap any client can grow the gateway without bound. Over the cap,
//! a new session (a request without `Mcp-Session-Id`) is answered 503 with `Retry-After`;
//! requests of existing sessions are untouched.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::replica::{ReplicaId, ReplicaSessions};

/// What a client is told to wait before trying to open a session again, in seconds.
const RETRY_AFTER_SECS: &str = "5";

/// How many HTTP sessions may exist and how long an idle one lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Open sessions at most; a new one over this is refused with 503.
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

/// The session manager for `limits`, issuing ids that start with `replica` (when given), shared by
/// the MCP service and [`cap`].
pub(crate) fn manager(limits: SessionLimits, replica: Option<ReplicaId>) -> Arc<ReplicaSessions> {
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.idle);
    Arc::new(ReplicaSessions::new(manager, replica))
}

/// The state of [`cap`]: the sessions to count and the most there may be.
#[derive(Debug, Clone)]
pub(crate) struct Cap {
    pub(crate) manager: Arc<ReplicaSessions>,
    pub(crate) max: usize,
}

/// Refuse a new session (no `Mcp-Session-Id`) while `max` sessions are open.
pub(crate) async fn cap(State(cap): State<Cap>, request: Request, next: Next) -> Response {
    let opens_a_session = !request
        .headers()
        .contains_key(crate::express::sessions::SESSION_HEADER)
        && request.method() == axum::http::Method::POST;
    if opens_a_session && cap.manager.open().await >= cap.max {
        tracing::warn!(
            "refused a new HTTP session: {} are open (--max-sessions)",
            cap.max
        );
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "too many sessions: pegboard holds at most {} at once (--max-sessions); retry later\n",
                cap.max
            ),
        )
            .into_response();
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(RETRY_AFTER_SECS),
        );
        return response;
    }
    next.run(request).await
}
