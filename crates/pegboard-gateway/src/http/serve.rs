//! Serving the HTTP front on a TCP listener with the read timeouts `axum::serve` lacks.
//!
//! `axum::serve` holds a connection for as long as its client keeps it open, so a client that
//! sends a request's headers one byte a minute (slowloris) holds a task and a socket forever.
//! Here each connection is served by hyper directly, with a header read timeout (the connection
//! is closed when the headers have not all arrived in time) and a request body timeout (the
//! request fails when its body goes quiet for too long). Every accepted socket gets
//! `TCP_NODELAY`: without it each small response on a keep-alive connection waits ~40 ms for
//! Nagle's algorithm. A [`Front`] with an express lane has it answer each request it can take
//! before the router is entered (axum's routing and middleware were a fifth of an HTTP call's
//! instructions).
//!
//! ```no_run
//! # async fn demo(app: axum::Router) -> std::io::Result<()> {
//! use pegboard_gateway::http::serve::{Timeouts, serve};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
//! serve(listener, app, Timeouts::default(), tokio_util::sync::CancellationToken::new()).await
//! # }
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::{Layer, ServiceExt};
use tower_http::timeout::{RequestBodyTimeout, RequestBodyTimeoutLayer};

use super::Front;
use super::health::{Health, Tracked};
use crate::express::http::{HttpLane, Outcome};
use crate::protocol::headers::SESSION_HEADER;

/// Pause after a failed `accept` (out of file descriptors, say), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Read timeouts of the HTTP front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long a client may take to send a request's headers; then the connection is closed.
    pub header: Duration,
    /// How long a request body may go without sending anything; then the request fails.
    pub body: Duration,
}

impl Default for Timeouts {
    /// 10 s for headers, 30 s of silence in a body.
    fn default() -> Self {
        Self {
            header: Duration::from_secs(10),
            body: Duration::from_secs(30),
        }
    }
}

/// Serve `app` (a [`Router`], or the gateway's [`Front`]) on `listener` until `shutdown` is
/// cancelled; then stop accepting and wait for the open connections to finish their current
/// request.
///
/// # Errors
/// None today (a failed `accept` is logged and retried); the `Result` leaves room for one.
pub async fn serve(
    listener: TcpListener,
    app: impl Into<Front>,
    timeouts: Timeouts,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let Front {
        router,
        lane,
        health,
    } = app.into();
    let service = Dispatch {
        lane,
        health,
        router: RequestBodyTimeoutLayer::new(timeouts.body).layer(router),
        body_timeout: timeouts.body,
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(timeouts.header);
    let graceful = GracefulShutdown::new();
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    tracing::warn!("cannot accept an HTTP connection: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service.clone()));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("HTTP connection ended: {e}");
            }
        });
    }
    graceful.shutdown().await;
    Ok(())
}

/// Each request to the express lane first, then (when it does not take it) to the router.
#[derive(Clone)]
struct Dispatch {
    lane: Option<Arc<HttpLane>>,
    health: Option<Arc<Health>>,
    router: RequestBodyTimeout<Router>,
    body_timeout: Duration,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Dispatch {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        // A POST is a message of a session (or one that opens it): counted in flight until its
        // answer has been sent, so a drain can wait for it; while draining, one that would open
        // a session is sent elsewhere.
        let in_flight = match &self.health {
            Some(health) if request.method() == hyper::Method::POST => {
                if health.is_draining() && !request.headers().contains_key(SESSION_HEADER) {
                    return Box::pin(std::future::ready(Ok(Health::refusal())));
                }
                Some(health.begin())
            }
            _ => None,
        };
        let router = self.router.clone();
        let lane = self.lane.clone();
        let body_timeout = self.body_timeout;
        Box::pin(async move {
            let response = match lane {
                None => router.oneshot(request).await,
                Some(lane) => match lane.take(request, Some(body_timeout)).await {
                    Outcome::Answered(response) => Ok(response),
                    Outcome::Untouched(request) => router.oneshot(request).await,
                    Outcome::Read(request) => router.oneshot(request).await,
                },
            };
            Ok(match (response, in_flight) {
                (Ok(response), Some(in_flight)) => Tracked::wrap(response, in_flight),
                (Ok(response), None) => response,
                (Err(never), _) => match never {},
            })
        })
    }
}
