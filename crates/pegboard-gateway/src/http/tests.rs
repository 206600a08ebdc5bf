//! The HTTP front's guards and options, through its router.

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
        .insert("host", axum::http::HeaderValue::from_static("evil.example"));
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
        let refused = front(
            BoardServer::new(pegboard::PegBoard::new()),
            &options,
            CancellationToken::new(),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(refused.contains("token is empty"), "{refused}");
    }
    assert!(check_token(None).is_ok());
    assert!(check_token(Some("s3cret")).is_ok());
}
