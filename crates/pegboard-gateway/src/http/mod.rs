//! The streamable HTTP gateway: rmcp's `StreamableHttpService` at `/mcp`, behind our guards.
//!
//! Guards, in order: Origin (403 when present and not allowed: browsers' cross-site requests), then the
//! bearer token (401). rmcp's own Host check (DNS rebinding) stays on inside the service.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::server::BoardServer;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

mod sessions;
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
}

/// The router: `/mcp` served by `server`, guarded. `ct` stops every session when cancelled.
pub fn router(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
) -> anyhow::Result<Router> {
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
    if options.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    let manager = sessions::manager(options.sessions);
    let cap = sessions::Cap {
        manager: Arc::clone(&manager),
        max: options.sessions.max,
    };
    let service: StreamableHttpService<BoardServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.session()), manager, config);
    Ok(Router::new()
        .nest_service(MCP_PATH, service)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(cap, sessions::cap))
        .layer(middleware::from_fn_with_state(Arc::new(guard), check)))
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
    origins: Vec<OriginRule>,
}

impl Guard {
    fn new(options: &HttpOptions) -> anyhow::Result<Self> {
        let mut origins = Vec::new();
        for scheme in ["http", "https"] {
            for host in ["localhost", "127.0.0.1", "[::1]"] {
                origins.push(OriginRule::Tuple {
                    scheme: scheme.into(),
                    host: host.into(),
                    port: PortRule::Any,
                });
            }
        }
        for o in &options.allow_origins {
            origins.push(OriginRule::parse_rule(o).ok_or_else(|| {
                anyhow::anyhow!(
                    "--allow-origin `{o}` is not an origin; write scheme://host[:port], e.g. https://app.example.com \
                     or http://myhost:* (any port), or `null`, or `*` (any origin)"
                )
            })?);
        }
        check_token(options.token.as_deref())?;
        Ok(Self {
            token: options.token.clone(),
            origins,
        })
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let Some(parsed) = Origin::parse(origin) else {
            return false;
        };
        self.origins.iter().any(|rule| rule.matches(&parsed))
    }

    fn token_ok(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        let Some(given) = authorization.and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let Some((scheme, value)) = given.split_once(' ') else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer")
            && constant_time_eq(value.trim().as_bytes(), expected.as_bytes())
    }
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| guard.origin_allowed(o));
        if !allowed {
            tracing::warn!(origin = ?origin, "refused a request from a disallowed Origin (403)");
            return (
                StatusCode::FORBIDDEN,
                "forbidden: this Origin is not allowed (start pegboard with --allow-origin ORIGIN to allow it)\n",
            )
                .into_response();
        }
    }
    if !guard.token_ok(request.headers().get(header::AUTHORIZATION)) {
        tracing::debug!("refused a request without the right bearer token (401)");
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "unauthorized: send `Authorization: Bearer <token>` with the token pegboard was started with\n",
        )
            .into_response();
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A parsed `Origin` header value.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

impl Origin {
    fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let (scheme, host, port) = split_origin(s)?;
        let port = match port {
            Some(p) => p.parse().ok()?,
            None => default_port(&scheme)?,
        };
        Some(Self::Tuple { scheme, host, port })
    }
}

#[derive(Debug, PartialEq, Eq)]
enum PortRule {
    Any,
    Exact(u16),
}

#[derive(Debug, PartialEq, Eq)]
enum OriginRule {
    AnyOrigin,
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: PortRule,
    },
}

impl OriginRule {
    fn parse_rule(s: &str) -> Option<Self> {
        let s = s.trim().trim_end_matches('/');
        if s == "*" {
            return Some(Self::AnyOrigin);
        }
        if s.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let (scheme, host, port) = split_origin(s)?;
        let port = match port {
            Some("*") => PortRule::Any,
            Some(p) => PortRule::Exact(p.parse().ok()?),
            None => PortRule::Exact(default_port(&scheme)?),
        };
        Some(Self::Tuple { scheme, host, port })
    }

    fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (Self::AnyOrigin, _) => true,
            (Self::Null, Origin::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => {
                scheme == s
                    && host == h
                    && match port {
                        PortRule::Any => true,
                        PortRule::Exact(x) => x == p,
                    }
            }
            _ => false,
        }
    }
}

/// `scheme://host[:port]` → (lowercase scheme, lowercase host, port text). IPv6 hosts keep their brackets.
fn split_origin(s: &str) -> Option<(String, String, Option<&str>)> {
    let (scheme, rest) = s.split_once("://")?;
    if scheme.is_empty() || rest.is_empty() || rest.contains('/') || rest.contains('@') {
        return None;
    }
    let (host, port) = if let Some(after) = rest.strip_prefix('[') {
        let end = after.find(']')?;
        let host = &rest[..end + 2];
        match &after[end + 1..] {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    Some((scheme.to_ascii_lowercase(), host.to_ascii_lowercase(), port))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
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
    async fn no_token_configured_means_open_on_loopback() {
        assert_eq!(status(app(None, &[]), post(&[])).await, StatusCode::OK);
    }

    #[test]
    fn origin_parsing() {
        assert_eq!(
            Origin::parse("HTTP://LocalHost:80"),
            Some(Origin::Tuple {
                scheme: "http".into(),
                host: "localhost".into(),
                port: 80
            })
        );
        assert_eq!(
            Origin::parse("http://[::1]"),
            Some(Origin::Tuple {
                scheme: "http".into(),
                host: "[::1]".into(),
                port: 80
            })
        );
        assert_eq!(Origin::parse("null"), Some(Origin::Null));
        assert_eq!(Origin::parse("http://a/b"), None);
        assert_eq!(Origin::parse("garbage"), None);
        assert!(OriginRule::parse_rule("example.com").is_none());
    }

    #[test]
    fn bad_allow_origin_is_an_error() {
        let options = HttpOptions {
            allow_origins: vec!["example.com".into()],
            ..Default::default()
        };
        assert!(Guard::new(&options).is_err());
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
