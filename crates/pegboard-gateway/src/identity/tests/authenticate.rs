//! Static tokens to clients, `--token`, limits, and the HTTP answers.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

use super::http::PROTECTED_RESOURCE_PATH;
use super::*;
use crate::limits::LimitError;

fn static_clients() -> String {
    format!(
        r#""clients": {{
            "ci-bot": {{ "token": "${{CI_BOT_TOKEN}}", "tools": ["units-*"], "maxConcurrent": 1 }},
            "analyst": {{ "tokenSha256": "{}", "callsPerMinute": 2 }}
        }}"#,
        sha(ANALYST_TOKEN)
    )
}

#[tokio::test]
async fn static_tokens_map_to_their_clients() {
    let auth = authenticator(&static_clients(), None);
    let ci = auth
        .authenticate(Some(&format!("Bearer {CI_TOKEN}")))
        .await
        .unwrap();
    assert_eq!(ci.name(), "ci-bot");
    assert!(ci.may_see_tool("units-convert") && !ci.may_see_tool("docs-search"));
    let analyst = auth
        .authenticate(Some(&format!("bearer  {ANALYST_TOKEN} ")))
        .await
        .unwrap();
    assert_eq!(analyst.name(), "analyst");
    assert_eq!(
        auth.authenticate(None).await.unwrap_err(),
        AuthError::Missing
    );
    assert_eq!(
        auth.authenticate(Some("Basic dXNlcjpwYXNz"))
            .await
            .unwrap_err(),
        AuthError::Malformed
    );
    assert_eq!(
        auth.authenticate(Some("Bearer wrong")).await.unwrap_err(),
        AuthError::UnknownToken
    );
    // A JWT-shaped token with no `auth` configured is just an unknown token.
    assert_eq!(
        auth.authenticate(Some("Bearer a.b.c")).await.unwrap_err(),
        AuthError::UnknownToken
    );
}

#[tokio::test]
async fn the_token_flag_is_one_more_client_with_full_access() {
    let auth = authenticator(&static_clients(), Some("the-flag-token-0123456789"));
    let default = auth
        .authenticate(Some("Bearer the-flag-token-0123456789"))
        .await
        .unwrap();
    assert_eq!(default.name(), DEFAULT_CLIENT);
    assert!(default.sees_everything());
    let names: Vec<&str> = auth.clients().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["ci-bot", "analyst", "default"]);
    // Each has a fair share of the 1,000 sessions unless it sets its own.
    assert!(auth.clients().iter().all(|c| c.max_sessions() == 333));

    let same = Authenticator::new(
        Some(&access(&static_clients())),
        Some(CI_TOKEN),
        AuthOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        same.contains("clients `ci-bot` and `default (--token)`"),
        "{same}"
    );
    let named_default = access(r#""clients": {"default": {"token": "${CI_BOT_TOKEN}"}}"#);
    let taken = Authenticator::new(
        Some(&named_default),
        Some("x-0123456789abcdef"),
        AuthOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(taken.contains("`default` is taken by --token"), "{taken}");
    assert!(Authenticator::new(None, Some(" "), AuthOptions::default()).is_err());
}

#[tokio::test]
async fn without_clients_auth_or_token_every_request_is_the_default_client() {
    let open = Authenticator::new(None, None, AuthOptions::default()).unwrap();
    assert!(!open.requires_credentials());
    let c = open.authenticate(None).await.unwrap();
    assert_eq!(c.name(), DEFAULT_CLIENT);
    assert!(c.sees_everything());
    assert_eq!(c.max_sessions(), 1000);
}

#[tokio::test]
async fn stdio_serves_a_named_clients_view_or_everything() {
    let auth = authenticator(&static_clients(), None);
    assert_eq!(auth.stdio_client(Some("ci-bot")).unwrap().name(), "ci-bot");
    assert!(auth.stdio_client(None).unwrap().sees_everything());
    let e = auth.stdio_client(Some("nobody")).unwrap_err();
    assert!(
        e.contains("no client `nobody`") && e.contains("`ci-bot`, `analyst`"),
        "{e}"
    );
}

#[tokio::test]
async fn client_limits_refuse_with_the_client_and_the_limit() {
    let auth = authenticator(&static_clients(), None);
    let ci = auth.client("ci-bot").unwrap();
    let first = ci.begin_call().unwrap();
    let refused = ci.begin_call().unwrap_err();
    assert_eq!(
        refused,
        LimitError::Concurrency {
            client: "ci-bot".into(),
            limit: 1
        }
    );
    assert!(refused.to_string().contains("`maxConcurrent`"), "{refused}");
    drop(first);
    drop(ci.begin_call().unwrap());

    let analyst = auth.client("analyst").unwrap();
    drop(analyst.begin_call().unwrap());
    drop(analyst.begin_call().unwrap());
    let e = analyst.begin_call().unwrap_err();
    let LimitError::Rate {
        ref client,
        limit,
        retry_after,
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!((client.as_str(), limit), ("analyst", 2));
    assert!(
        retry_after.as_secs_f64() > 25.0 && retry_after.as_secs_f64() <= 30.0,
        "{retry_after:?}"
    );
    assert!(
        e.to_string().contains("`callsPerMinute`") && e.to_string().contains("retry in"),
        "{e}"
    );
}

fn headers(auth: Option<&str>) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Some(a) = auth {
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(a).unwrap());
    }
    h
}

fn www(response: &axum::response::Response) -> &str {
    response.headers()[header::WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
}

#[tokio::test]
async fn http_answers_follow_the_mcp_authorization_spec() {
    let sections = r#""clients": {
            "readers": { "jwt": {"scope": "mcp:read"} },
            "ci-bot": { "token": "${CI_BOT_TOKEN}" }
        },
        "auth": {"issuer": "https://idp.example.com", "audience": "https://gw.example.com/mcp"}"#;
    let a = access(sections);
    let http = HttpAuth::new(
        Arc::new(Authenticator::new(Some(&a), None, AuthOptions::default()).unwrap()),
        a.auth.as_ref(),
    );
    let meta =
        "resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\"";

    let missing = http.authorize(&headers(None)).await.unwrap_err();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(www(&missing), format!("Bearer scope=\"mcp:read\", {meta}"));

    let wrong = http
        .authorize(&headers(Some("Bearer nope")))
        .await
        .unwrap_err();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(
        www(&wrong).starts_with("Bearer error=\"invalid_token\", error_description="),
        "{}",
        www(&wrong)
    );
    assert!(www(&wrong).ends_with(meta));

    let mut two = headers(Some(&format!("Bearer {CI_TOKEN}")));
    two.append(
        header::AUTHORIZATION,
        HeaderValue::from_static("Bearer other"),
    );
    assert_eq!(
        http.authorize(&two).await.unwrap_err().status(),
        StatusCode::UNAUTHORIZED
    );

    let ok = http
        .authorize(&headers(Some(&format!("Bearer {CI_TOKEN}"))))
        .await
        .unwrap();
    assert_eq!(ok.name(), "ci-bot");

    let forbidden = http.refusal(&AuthError::NoMatchingClient);
    assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
    assert!(
        www(&forbidden).starts_with("Bearer error=\"insufficient_scope\""),
        "{}",
        www(&forbidden)
    );
    let down = http.refusal(&AuthError::KeysUnavailable("x".into()));
    assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(down.headers().contains_key(header::RETRY_AFTER));
}

#[tokio::test]
async fn static_tokens_alone_challenge_without_metadata() {
    let http = HttpAuth::new(Arc::new(authenticator(&static_clients(), None)), None);
    let missing = http.authorize(&headers(None)).await.unwrap_err();
    assert_eq!(www(&missing), "Bearer");
    assert!(http.metadata_router().is_none());
}

#[tokio::test]
async fn the_protected_resource_metadata_names_the_issuer() {
    use tower::ServiceExt;
    let a = access(
        r#""clients": {"r": {"jwt": {"scope": "mcp:read mcp:tools"}}},
           "auth": {"issuer": "https://idp.example.com", "audience": "https://gw.example.com/mcp"}"#,
    );
    let http = HttpAuth::new(
        Arc::new(Authenticator::new(Some(&a), None, AuthOptions::default()).unwrap()),
        a.auth.as_ref(),
    );
    let router = http.metadata_router().unwrap();
    for path in [
        PROTECTED_RESOURCE_PATH,
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let request = axum::http::Request::get(path)
            .body(axum::body::Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(doc["resource"], "https://gw.example.com/mcp");
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!(["https://idp.example.com"])
        );
        assert_eq!(
            doc["scopes_supported"],
            serde_json::json!(["mcp:read", "mcp:tools"])
        );
    }
}

#[test]
fn debug_output_never_shows_a_token() {
    let a = access(&static_clients());
    let auth = Authenticator::new(
        Some(&a),
        Some("flag-token-0123456789abc"),
        AuthOptions::default(),
    )
    .unwrap();
    let shown = format!("{a:?} {auth:?} {:?}", auth.clients());
    for secret in [
        CI_TOKEN,
        ANALYST_TOKEN,
        "flag-token-0123456789abc",
        &sha(ANALYST_TOKEN)[..16],
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

#[test]
fn unmatched_patterns_warn_per_client_and_pattern() {
    let a = access(
        r#""clients": {"c": {"token": "${CI_BOT_TOKEN}", "tools": ["units-*", "!units-reset", "dcos-*"]}}"#,
    );
    let w = a.unmatched_patterns(["units-convert", "docs-search"]);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("client `c`: pattern `!units-reset`"),
        "{}",
        w[0]
    );
    assert!(w[1].contains("pattern `dcos-*`"), "{}", w[1]);
}
