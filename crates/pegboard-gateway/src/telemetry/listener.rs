//! The `--metrics` listener: `GET /metrics` (Prometheus text format) and `GET /status` (JSON
//! with `Accept: application/json`, else the HTML page), on an address of its own.
//!
//! Loopback by default. Bound to a non-loopback address it needs a bearer token (the front's)
//! on every request; on loopback it checks the Host header instead, so a web page cannot reach
//! it through DNS rebinding. Each connection has 10 s to send its headers, and at most 64
//! connections are served at once (a slow or greedy client cannot pile up tasks).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::error::TelemetryError;
use super::exposition::CONTENT_TYPE;
use super::hub::Telemetry;
use super::status_page;

/// The conventional port of a Prometheus exporter (OpenTelemetry's): `--metrics 9464`.
pub const DEFAULT_PORT: u16 = 9464;
/// How long a client may take to send its request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;

/// The metrics listener, bound and not yet serving.
#[derive(Debug)]
pub struct MetricsListener {
    listener: TcpListener,
    addr: SocketAddr,
    token: Option<String>,
}

#[derive(Debug)]
struct Guard {
    /// Required on every request (a non-loopback bind).
    token: Option<String>,
    /// Host header must be loopback (a loopback bind).
    loopback: bool,
}

impl MetricsListener {
    /// Bind `addr`. `token` is the front's bearer token: required on a non-loopback address
    /// (and then checked on every request), not used on loopback.
    ///
    /// # Errors
    /// A non-loopback address without a token, a blank token, or the address cannot be bound.
    pub async fn bind(addr: SocketAddr, token: Option<&str>) -> Result<Self, TelemetryError> {
        let token = if addr.ip().is_loopback() {
            None
        } else {
            match token {
                None => return Err(TelemetryError::Unguarded(addr)),
                Some(t) if t.trim().is_empty() => return Err(TelemetryError::BlankToken),
                Some(t) => Some(t.to_string()),
            }
        };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TelemetryError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TelemetryError::Bind { addr, source })?;
        Ok(Self {
            listener,
            addr,
            token,
        })
    }

    /// The bound address (the real port when bound to port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve until `stop` is cancelled, then let open requests finish.
    ///
    /// # Errors
    /// None today (a failed `accept` is logged and retried).
    pub async fn serve(
        self,
        telemetry: Arc<Telemetry>,
        stop: CancellationToken,
    ) -> Result<(), TelemetryError> {
        let guard = Guard {
            token: self.token,
            loopback: self.addr.ip().is_loopback(),
        };
        let service = TowerToHyperService::new(router(telemetry, guard));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT);
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        loop {
            let permit = tokio::select! {
                permit = Arc::clone(&slots).acquire_owned() => match permit {
                    Ok(p) => p,
                    Err(_) => break,
                },
                () = stop.cancelled() => break,
            };
            let tcp = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((tcp, _)) => tcp,
                    Err(e) => {
                        tracing::warn!("--metrics: cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = stop.cancelled() => break,
            };
            let connection =
                graceful.watch(http.serve_connection(TokioIo::new(tcp), service.clone()));
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!("--metrics connection ended: {e}");
                }
                drop(permit);
            });
        }
        graceful.shutdown().await;
        Ok(())
    }
}

fn router(telemetry: Arc<Telemetry>, guard: Guard) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .fallback(not_found)
        .with_state(telemetry)
        .layer(middleware::from_fn_with_state(Arc::new(guard), check))
}

/// Whether a Host header names this machine's loopback (any port).
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn bearer_ok(expected: &str, given: Option<&HeaderValue>) -> bool {
    let Some((scheme, value)) = given
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
    else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && bool::from(value.trim().as_bytes().ct_eq(expected.as_bytes()))
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(token) = &guard.token
        && !bearer_ok(token, request.headers().get(header::AUTHORIZATION))
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "unauthorized: send `Authorization: Bearer <token>` with the gateway's token\n",
        )
            .into_response();
    }
    if guard.loopback {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok());
        if !host.is_some_and(loopback_host) {
            return (
                StatusCode::FORBIDDEN,
                "forbidden: this listener answers requests for localhost only\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}

async fn metrics(State(telemetry): State<Arc<Telemetry>>) -> Response {
    (
        [
            (header::CONTENT_TYPE, CONTENT_TYPE),
            (header::CACHE_CONTROL, "no-store"),
        ],
        telemetry.render_metrics(),
    )
        .into_response()
}

async fn status(State(telemetry): State<Arc<Telemetry>>, headers: HeaderMap) -> Response {
    let report = telemetry.status();
    let wants_json = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("application/json"));
    if wants_json {
        match serde_json::to_string_pretty(&report) {
            Ok(body) => (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                body + "\n",
            )
                .into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        }
    } else {
        (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            status_page::render(&report),
        )
            .into_response()
    }
}

async fn not_found() -> (StatusCode, &'static str) {
    (
        StatusCode::NOT_FOUND,
        "not found: this listener serves /metrics and /status\n",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_pass() {
        for ok in [
            "localhost",
            "localhost:9464",
            "127.0.0.1:1",
            "[::1]:9464",
            "[::1]",
            "LOCALHOST",
        ] {
            assert!(loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:9464",
            "10.0.0.1:9464",
            "localhost.evil:1",
            "",
        ] {
            assert!(!loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn bearer_tokens_are_compared_whole() {
        let v = |s: &str| HeaderValue::from_str(s).ok();
        assert!(bearer_ok("s3cret", v("Bearer s3cret").as_ref()));
        assert!(bearer_ok("s3cret", v("bearer s3cret").as_ref()));
        assert!(!bearer_ok("s3cret", v("Bearer s3cre").as_ref()));
        assert!(!bearer_ok("s3cret", v("Basic s3cret").as_ref()));
        assert!(!bearer_ok("s3cret", None));
    }
}
