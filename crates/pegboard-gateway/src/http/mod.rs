//! The streamable HTTP gateway: rmcp's `StreamableHttpService` at `/mcp`, behind our guards.
//!
//! Guards, in order: Origin (403 when present and not allowed: browsers' cross-site requests), then the
//! bearer token (401), then the session cap (503). rmcp's own Host check (DNS rebinding) stays on
//! inside the service. In front of them all, the express lane answers plain calls of open sessions
//! and checks for itself what they would (no Origin, the token, an allowed Host; see
//! `crate::express::http`); anything else it passes on unchanged. [`router`] puts the lane in as
//! the router's outermost layer, for mounting in another app; [`front`] keeps it apart, and
//! [`crate::http_serve::serve`] runs it on each request before the router is entered at all.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::server::BoardServer;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

mod origins;
mod replica;
mod sessions;
mod shared;
pub use replica::{MAX_REPLICA_ID_LEN, ReplicaId, ReplicaIdError, ReplicaSessionError};
pub use sessions::SessionLimits;

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// What the HTTP front door accepts.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The address bound (its host is added to the allowed Host values when it is not loopback).
    pub bind: Option<SocketAddr>,
    /// Require `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Extra allowed Origins, besides http(s)://localhost, 127.0.0.1 and `[::1]` on any port.
    pub allow_origins: Vec<String>,
    /// Extra allowed Host values.
    pub allow_hosts: Vec<String>,
    /// No sessions (rmcp's stateless mode, JSON responses): for replicas behind a load balancer.
    pub stateless: bool,
    /// How many sessions may be open and how long an idle one lives.
    pub sessions: SessionLimits,
    /// This replica's name: every session id it issues starts with `ID.`, for a proxy to route on.
    pub replica_id: Option<ReplicaId>,
}

/// The router: `/mcp` served by `server`, guarded, with the express lane as its outermost layer.
/// `ct` stops every session when cancelled. To mount in another axum app; `pegboard serve` serves
/// [`front`] instead, which answers the lane's requests before the router.
pub fn router(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
) -> anyhow::Result<Router> {
    Ok(front(server, options, ct)?.into_router())
}

/// The HTTP front as [`crate::http_serve::serve`] runs it: the express lane, and the guarded
/// router for everything the lane does not take.
pub struct Front {
    pub(crate) router: Router,
    pub(crate) lane: Option<Arc<crate::express::http::HttpLane>>,
}

impl Front {
    /// One router with the lane as its outermost layer (what [`router`] returns).
    pub fn into_router(self) -> Router {
        match self.lane {
            Some(lane) => self.router.layer(middleware::from_fn_with_state(
                lane,
                crate::express::http::serve,
            )),
            None => self.router,
        }
    }
}

impl From<Router> for Front {
    /// Any router, served as it is (no lane in front).
    fn from(router: Router) -> Self {
        Self { router, lane: None }
    }
}

impl std::fmt::Debug for Front {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Front")
            .field("lane", &self.lane.is_some())
            .finish_non_exhaustive()
    }
}

/// `/mcp` served by `server`, guarded, and the express lane (see [`Front`]). `ct` stops every
/// session when cancelled.
///
/// ```no_run
/// # async fn demo(server: pegboard_gateway::BoardServer) -> anyhow::Result<()> {
/// use pegboard_gateway::http::{HttpOptions, front};
/// use pegboard_gateway::http_serve::{Timeouts, serve};
/// let stop = tokio_util::sync::CancellationToken::new();
/// let app = front(server, &HttpOptions::default(), stop.child_token())?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
/// serve(listener, app, Timeouts::default(), stop).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// An option that is not valid: a blank token, an allowed Origin that is not one.
pub fn front(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
) -> anyhow::Result<Front> {
    let guard = Guard::new(options)?;
    let server = server.stateless(options.stateless);
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if let Some(addr) = options.bind
        && !addr.ip().is_loopback()
        && !addr.ip().is_unspecified()
    {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allow_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(ct);
    config = match origins::allowed(&options.allow_origins)? {
        Some(allowed) => config
            .with_allowed_origins(allowed)
            .enforce_origin_validation(),
        None => config.disable_allowed_origins(),
    };
    if options.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    let manager = sessions::manager(options.sessions, options.replica_id.clone());
    let cap = sessions::Cap {
        manager: Arc::clone(&manager),
        max: options.sessions.max,
    };
    let lane = crate::express::http::HttpLane::new(
        !options.stateless && server.express(),
        server.board().clone(),
        Arc::clone(server.relay().express_sessions()),
        server.startup().clone(),
        crate::express::http::FrontRules {
            hosts: config.allowed_hosts.clone(),
            token: options.token.clone(),
            idle: options.sessions.idle,
            max_body: config.max_request_body_bytes,
        },
    );
    let service: StreamableHttpService<BoardServer, replica::ReplicaSessions> =
        StreamableHttpService::new(move || Ok(server.session()), manager, config);
    let service = shared::Shared::new(service);
    // Routes, not a nest: rmcp reads no path, and a nest rebuilds each request's URI to strip
    // its prefix. `/mcp/...` is served as before. The express lane goes in front of it all and
    // checks the path and the token itself (see `crate::express::http`).
    let router = Router::new()
        .route_service(MCP_PATH, service.clone())
        .route_service("/mcp/", service.clone())
        .route_service("/mcp/{*rest}", service)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(cap, sessions::cap))
        .layer(middleware::from_fn_with_state(Arc::new(guard), check));
    Ok(Front {
        router,
        lane: Some(lane),
    })
}

/// Refuse a token that is empty or only whitespace: it would otherwise read as "auth required"
/// while no client can ever send it (or, filtered out, silently serve with no auth at all).
///
/// # Errors
/// When `token` is `Some` and blank, with what to do instead.
pub fn check_token(token: Option<&str>) -> anyhow::Result<()> {
    match token {
        Some(t) if t.trim().is_empty() => anyhow::bail!(
            "the bearer token is empty (`--token \"\"` or `PEGBOARD_TOKEN=` set to nothing): give a real \
             token, or unset PEGBOARD_TOKEN and drop --token to serve without authentication"
        ),
        _ => Ok(()),
    }
}

async fn not_found() -> (StatusCode, &'static str) {
    (
        StatusCode::NOT_FOUND,
        "not found: the PegBoard MCP endpoint is at /mcp\n",
    )
}

/// The checks done before rmcp sees a request.
#[derive(Debug)]
struct Guard {
    token: Option<String>,
}

impl Guard {
    fn new(options: &HttpOptions) -> anyhow::Result<Self> {
        check_token(options.token.as_deref())?;
        Ok(Self {
            token: options.token.clone(),
        })
    }

    fn token_ok(&self, authorization: Option<&HeaderValue>) -> bool {
        self.token
            .as_deref()
            .is_none_or(|expected| bearer_matches(expected, authorization))
    }
}

/// Whether `authorization` is `Bearer <expected>` (the scheme in any case; compared in constant
/// time).
pub(crate) fn bearer_matches(expected: &str, authorization: Option<&HeaderValue>) -> bool {
    let Some(given) = authorization.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((scheme, value)) = given.split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(value.trim().as_bytes(), expected.as_bytes())
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if !guard.token_ok(request.headers().get(header::AUTHORIZATION)) {
        tracing::debug!("refused a request without the right bearer token (401)");
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "unauthorized: send `Authorization: Bearer <token>` with the token pegboard was started with\n",
        )
            .into_response();
    }
    let has_origin = request.headers().contains_key(header::ORIGIN);
    let response = next.run(request).await;
    if has_origin && response.status() == StatusCode::FORBIDDEN {
        // rmcp refused the Origin (see `origins`); say how to let it in.
        return (
            StatusCode::FORBIDDEN,
            "forbidden: this Origin is not allowed (start pegboard with --allow-origin ORIGIN to allow it)\n",
        )
            .into_response();
    }
    response
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request as HttpRequest;
    use tower::ServiceExt;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    fn app(token: Option<&str>, allow_origins: &[&str]) -> Router {
        let board = pegboard::PegBoard::new();
        let options = HttpOptions {
            bind: None,
            token: token.map(String::from),
            allow_origins: allow_origins.iter().map(|s| s.to_string()).collect(),
            allow_hosts: vec![],
            stateless: false,
            sessions: SessionLimits::default(),
            replica_id: None,
        };
        match router(BoardServer::new(board), &options, CancellationToken::new()) {
            Ok(r) => r,
            Err(e) => panic!("router: {e:#}"),
        }
    }

    fn post(headers: &[(&str, &str)]) -> HttpRequest<Body> {
        let mut b = HttpRequest::post("/mcp")
            .header("host", "127.0.0.1:8700")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        match b.body(Body::from(INIT)) {
            Ok(r) => r,
            Err(e) => panic!("request: {e}"),
        }
    }

    async fn status(app: Router, req: HttpRequest<Body>) -> StatusCode {
        match app.oneshot(req).await {
            Ok(r) => r.status(),
            Err(e) => match e {},
        }
    }

    #[tokio::test]
    async fn no_token_is_401() {
        assert_eq!(
            status(app(Some("s3cret"), &[]), post(&[])).await,
            StatusCode::UNAUTHORIZED
        );
    }

    #[tokio::test]
    async fn wrong_token_is_401() {
        let req = post(&[("authorization", "Bearer nope")]);
        assert_eq!(
            status(app(Some("s3cret"), &[]), req).await,
            StatusCode::UNAUTHORIZED
        );
    }

    #[tokio::test]
    async fn right_token_reaches_the_mcp_service() {
        let req = post(&[("authorization", "Bearer s3cret")]);
        assert_eq!(status(app(Some("s3cret"), &[]), req).await, StatusCode::OK);
        let req = post(&[("authorization", "bearer s3cret")]);
        assert_eq!(status(app(Some("s3cret"), &[]), req).await, StatusCode::OK);
    }

    #[tokio::test]
    async fn paths_under_mcp_reach_the_service_and_others_do_not() {
        for (path, expected) in [
            ("/mcp", StatusCode::OK),
            ("/mcp/", StatusCode::OK),
            ("/mcp/anything/below", StatusCode::OK),
            ("/mcpx", StatusCode::NOT_FOUND),
            ("/", StatusCode::NOT_FOUND),
        ] {
            let mut req = post(&[]);
            *req.uri_mut() = axum::http::Uri::from_static(path);
            assert_eq!(status(app(None, &[]), req).await, expected, "{path}");
        }
    }

    #[tokio::test]
    async fn evil_origin_is_403_even_with_the_token() {
        let req = post(&[
            ("authorization", "Bearer s3cret"),
            ("origin", "https://evil.example"),
        ]);
        assert_eq!(
            status(app(Some("s3cret"), &[]), req).await,
            StatusCode::FORBIDDEN
        );
        let req = post(&[("origin", "http://localhost.evil.example")]);
        assert_eq!(status(app(None, &[]), req).await, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn loopback_origins_pass() {
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            let req = post(&[("origin", origin)]);
            assert_eq!(
                status(app(None, &[]), req).await,
                StatusCode::OK,
                "{origin}"
            );
        }
    }

    #[tokio::test]
    async fn allowed_extra_origin_passes_and_others_do_not() {
        let app_ = || app(None, &["https://app.example.com", "http://dev.lan:*"]);
        assert_eq!(
            status(app_(), post(&[("origin", "https://app.example.com")])).await,
            StatusCode::OK
        );
        assert_eq!(
            status(app_(), post(&[("origin", "http://dev.lan:5173")])).await,
            StatusCode::OK
        );
        assert_eq!(
            status(app_(), post(&[("origin", "https://app.example.com:8443")])).await,
            StatusCode::FORBIDDEN
        );
    }

    #[tokio::test]
    async fn foreign_host_is_refused_by_rmcp() {
        let mut req = post(&[]);
        req.headers_mut()
            .insert("host", HeaderValue::from_static("evil.example"));
        assert_eq!(status(app(None, &[]), req).await, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn a_replica_names_its_sessions_and_does_not_know_another_replicas() {
        let options = HttpOptions {
            replica_id: Some("r1".parse().unwrap()),
            ..Default::default()
        };
        let board = pegboard::PegBoard::new();
        let app = router(BoardServer::new(board), &options, CancellationToken::new()).unwrap();
        let answer = app.clone().oneshot(post(&[])).await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        let id = answer.headers()["mcp-session-id"].to_str().unwrap();
        assert!(id.starts_with("r1.") && id.len() == 3 + 36, "{id}");
        let foreign = format!("r2.{}", &id[3..]);
        let req = post(&[
            ("mcp-session-id", &foreign),
            ("mcp-protocol-version", "2025-06-18"),
        ]);
        assert_eq!(status(app, req).await, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn no_token_configured_means_open_on_loopback() {
        assert_eq!(status(app(None, &[]), post(&[])).await, StatusCode::OK);
    }

    #[test]
    fn bad_allow_origin_is_an_error() {
        let options = HttpOptions {
            allow_origins: vec!["example.com".into()],
            ..Default::default()
        };
        let board = pegboard::PegBoard::new();
        let refused = router(BoardServer::new(board), &options, CancellationToken::new());
        assert!(refused.is_err());
    }

    #[test]
    fn a_blank_token_is_refused_not_dropped() {
        for blank in ["", "   "] {
            let options = HttpOptions {
                token: Some(blank.into()),
                ..Default::default()
            };
            let refused = Guard::new(&options).map(|_| ()).unwrap_err().to_string();
            assert!(refused.contains("token is empty"), "{refused}");
        }
        assert!(check_token(None).is_ok());
        assert!(check_token(Some("s3cret")).is_ok());
    }
}
