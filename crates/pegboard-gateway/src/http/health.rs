//! Probes and drain: `/healthz`, `/readyz`, and what a replica does between SIGTERM and exit.
//!
//! `/healthz` answers 200 while the process serves at all (a liveness probe); `/readyz` answers
//! 200 once the startup wait is over (every server started or failed, or `--wait` passed) and
//! until the replica starts draining, 503 otherwise (a readiness probe: a balancer stops sending
//! it new work). Both are answered before authentication and say nothing but their state: a
//! probe carries no token, and what it learns is no more than whether to send traffic.
//!
//! Draining (on SIGTERM): `/readyz` turns 503, a request that would open a new session (a POST
//! without `Mcp-Session-Id`) is answered 503 with `Retry-After`, so the balancer retries it on
//! another replica, while the sessions this replica holds are served as before. The HTTP front
//! counts the POSTs in flight (until their response, streamed or not, has been sent); the drain
//! ends when none is left or when its time is up, and only then are the sessions ended.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::Notify;

use crate::session::startup::Startup;

/// Where a liveness probe asks.
pub const HEALTH_PATH: &str = "/healthz";
/// Where a readiness probe asks.
pub const READY_PATH: &str = "/readyz";
/// How long a client told to go elsewhere while this replica drains should wait before trying
/// again (the balancer has, by then, taken the replica out on its failed `/readyz`).
const RETRY_AFTER_SECS: &str = "1";

/// A replica's readiness and the requests it has in flight, shared by the front and the drain.
#[derive(Debug)]
pub(crate) struct Health {
    startup: Startup,
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
}

impl Health {
    pub(crate) fn new(startup: Startup) -> Arc<Self> {
        Arc::new(Self {
            startup,
            draining: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
        })
    }

    /// Stop taking new sessions and answer `/readyz` with 503 from now on.
    pub(crate) fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// The requests in flight now.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Count one request in flight until the guard is dropped.
    pub(crate) fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(self))
    }

    /// Wait until no request is in flight (at once when none is).
    pub(crate) async fn idle(&self) {
        loop {
            // Registered before the count is read, so a guard dropped in between still wakes us.
            let notified = self.idle.notified();
            if self.in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Drain: refuse new sessions, then wait for the requests in flight, at most `limit`.
    /// Returns how many were still in flight when it gave up (0: all finished).
    pub(crate) async fn drain_for(&self, limit: Duration) -> usize {
        self.drain();
        match tokio::time::timeout(limit, self.idle()).await {
            Ok(()) => 0,
            Err(_) => self.in_flight(),
        }
    }

    fn readiness(&self) -> (StatusCode, &'static str) {
        if self.is_draining() {
            (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        } else if !self.startup.is_over() {
            (StatusCode::SERVICE_UNAVAILABLE, "starting\n")
        } else {
            (StatusCode::OK, "ready\n")
        }
    }

    /// The 503 a request for a new session gets while this replica drains.
    pub(crate) fn refusal() -> Response<Body> {
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            "this replica is shutting down: open the session on another one\n",
        )
            .into_response();
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(RETRY_AFTER_SECS),
        );
        response
    }

    /// The probes' routes, to merge outside authentication.
    pub(crate) fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route(HEALTH_PATH, get(|| async { (StatusCode::OK, "ok\n") }))
            .route(
                READY_PATH,
                get(|State(health): State<Arc<Health>>| async move { health.readiness() }),
            )
            .with_state(Arc::clone(self))
    }
}

/// One request counted in flight; the count drops with it.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Health>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// A response body that keeps its request counted in flight until it has been sent (or dropped:
/// the client went away). A call answered on an event stream is in flight until its stream ends.
pub(crate) struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl Tracked {
    pub(crate) fn wrap(response: Response<Body>, in_flight: InFlight) -> Response<Body> {
        response.map(|body| {
            Body::new(Tracked {
                body,
                _in_flight: in_flight,
            })
        })
    }
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_request_in_flight() {
        let health = Health::new(Startup::settled());
        let first = health.begin();
        let second = health.begin();
        let waiting = tokio::spawn({
            let health = Arc::clone(&health);
            async move { health.idle().await }
        });
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "one request is still in flight");
        drop(second);
        waiting.await.unwrap();
        assert_eq!(health.in_flight(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_gives_up_after_its_time_and_says_how_many_were_left() {
        let health = Health::new(Startup::settled());
        let _stuck = health.begin();
        assert_eq!(health.drain_for(Duration::from_secs(30)).await, 1);
        assert!(health.is_draining());
    }

    #[test]
    fn ready_only_after_startup_and_before_the_drain() {
        let (startup, starting) = Startup::begin(Duration::from_secs(3600));
        let health = Health::new(startup);
        assert_eq!(health.readiness().0, StatusCode::SERVICE_UNAVAILABLE);
        starting.finish();
        assert_eq!(health.readiness(), (StatusCode::OK, "ready\n"));
        health.drain();
        assert_eq!(
            health.readiness(),
            (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        );
    }
}
