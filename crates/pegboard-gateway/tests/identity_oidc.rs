//! The gateway as an OAuth resource server, against a real OpenID provider (`oidc-provider`,
//! started per test on a loopback port): its JWT access tokens map to the right clients; bad
//! tokens (hand-made, signed with the provider's own key where the claims are what is wrong)
//! are refused with the spec's answers; a key rotated at the provider is found by one refetch.

#[path = "oidc_support/mod.rs"]
mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use pegboard_gateway::testing::{
    AccessConfig, AuthError, AuthOptions, Authenticator, HttpAuth, KeyOptions,
};
use serde_json::{Value, json};
use support::Idp;

/// The gateway's resource URL: the audience its tokens must carry.
const RESOURCE: &str = "http://127.0.0.1:8931/mcp";

fn access(issuer: &str) -> AccessConfig {
    // File order matters: a token with both scopes is `writers`.
    let text = format!(
        r#"{{ "mcpServers": {{}},
              "clients": {{
                "writers": {{ "jwt": {{ "scope": "mcp:write" }}, "tools": ["notes-*"] }},
                "readers": {{ "jwt": {{ "scope": "mcp:read" }}, "tools": ["*-search"] }},
                "ci":      {{ "token": "ci-token-0123456789abcdef" }}
              }},
              "auth": {{ "issuer": "{issuer}", "audience": "{RESOURCE}" }} }}"#
    );
    pegboard_gateway::config::parse(&text, Path::new("pegboard.json"), &|_| None)
        .unwrap()
        .access
        .unwrap()
}

/// Keys that are refetched for an unknown `kid` at most once an hour: the tests that count
/// fetches must not depend on how fast the machine runs them (the default is every 10 s).
fn patient_keys() -> KeyOptions {
    KeyOptions {
        refetch_interval: Duration::from_secs(3600),
        ..KeyOptions::default()
    }
}

fn authenticator(issuer: &str, keys: KeyOptions) -> Authenticator {
    let options = AuthOptions {
        keys,
        ..AuthOptions::default()
    };
    Authenticator::new(Some(&access(issuer)), None, options).unwrap()
}

async fn client_of(auth: &Authenticator, token: &str) -> Result<String, AuthError> {
    auth.authenticate(Some(&format!("Bearer {token}")))
        .await
        .map(|c| c.name().to_string())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims as the provider would issue them for `reader-bot`, with `changes` applied.
fn claims(idp: &Idp, changes: Value) -> Value {
    let mut c = json!({
        "iss": idp.issuer, "aud": RESOURCE, "sub": "reader-bot", "client_id": "reader-bot",
        "scope": "mcp:read", "iat": now(), "exp": now() + 300, "jti": "hand-made",
    });
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            c.as_object_mut().unwrap().remove(k);
        } else {
            c[k] = v.clone();
        }
    }
    c
}

fn sign(alg: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(String::from);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn rsa(pem: &str) -> EncodingKey {
    EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap()
}

fn refused(result: Result<String, AuthError>) -> String {
    match result {
        Err(AuthError::InvalidJwt(why)) => why,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn provider_tokens_map_to_their_clients_in_file_order() {
    let idp = Idp::start(RESOURCE).await;
    let auth = authenticator(&idp.issuer, KeyOptions::default());

    let reader = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &reader).await.unwrap(), "readers");
    // Both scopes: `writers` comes first in the file.
    let writer = idp
        .token("writer-bot", "writer-secret", "mcp:read mcp:write")
        .await;
    assert_eq!(client_of(&auth, &writer).await.unwrap(), "writers");
    let writer_reading = idp.token("writer-bot", "writer-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &writer_reading).await.unwrap(), "readers");
    // A static token still works beside the issuer's.
    assert_eq!(
        client_of(&auth, "ci-token-0123456789abcdef").await.unwrap(),
        "ci"
    );

    let readers = auth
        .authenticate(Some(&format!("Bearer {reader}")))
        .await
        .unwrap();
    assert!(readers.may_see_tool("docs-search") && !readers.may_see_tool("notes-add_note"));
    assert_eq!(
        auth.key_fetches(),
        1,
        "the keys are fetched once and cached"
    );
}

#[tokio::test]
async fn a_valid_token_matching_no_client_is_403_insufficient_scope() {
    let idp = Idp::start(RESOURCE).await;
    let auth = Arc::new(authenticator(&idp.issuer, KeyOptions::default()));
    let unscoped = idp.token("writer-bot", "writer-secret", "").await;
    assert_eq!(
        client_of(&auth, &unscoped).await.unwrap_err(),
        AuthError::NoMatchingClient
    );

    let a = access(&idp.issuer);
    let http = HttpAuth::new(auth, a.auth.as_ref());
    let mut headers = HeaderMap::new();
    headers.insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {unscoped}")).unwrap(),
    );
    let response = http.authorize(&headers).await.unwrap_err();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = response.headers()[header::WWW_AUTHENTICATE]
        .to_str()
        .unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp:write mcp:read\""),
        "{challenge}"
    );
    assert!(
        challenge.contains(
            "resource_metadata=\"http://127.0.0.1:8931/.well-known/oauth-protected-resource/mcp\""
        ),
        "{challenge}"
    );

    // No token at all: 401 pointing at the metadata, so the client can start its login.
    let response = http.authorize(&HeaderMap::new()).await.unwrap_err();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(
        !response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .contains("error=")
    );
}

#[tokio::test]
async fn bad_tokens_are_refused_as_invalid() {
    let idp = Idp::start(RESOURCE).await;
    let auth = Arc::new(authenticator(&idp.issuer, patient_keys()));
    let key = rsa(&idp.key.pem);
    let kid = Some(idp.key.kid.as_str());
    let signed = |changes: Value| sign(Algorithm::RS256, &key, kid, &claims(&idp, changes));

    // The control: a hand-made token with the right claims passes, also 30 s past `exp` (leeway).
    assert_eq!(
        client_of(&auth, &signed(json!({}))).await.unwrap(),
        "readers"
    );
    let late = signed(json!({"exp": now() - 30}));
    assert_eq!(client_of(&auth, &late).await.unwrap(), "readers");

    let cases = [
        (signed(json!({"exp": now() - 3600})), "expired"),
        (signed(json!({"exp": null})), "no `exp` claim"),
        (signed(json!({"nbf": now() + 3600})), "not valid yet"),
        (
            signed(json!({"aud": "https://elsewhere.example.com/mcp"})),
            "not meant for this gateway",
        ),
        (signed(json!({"aud": null})), "no `aud` claim"),
        (
            signed(json!({"iss": "https://idp.evil.example.com"})),
            "not from the configured issuer",
        ),
    ];
    for (token, want) in cases {
        let why = refused(client_of(&auth, &token).await);
        assert!(why.contains(want), "want {want:?}, got {why:?}");
    }

    // A real token of the provider with its payload changed (a wider scope): the signature breaks.
    let real = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    let parts: Vec<&str> = real.split('.').collect();
    let mut payload: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    payload["scope"] = json!("mcp:read mcp:write");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(payload.to_string()),
        parts[2]
    );
    assert!(refused(client_of(&auth, &tampered).await).contains("signature does not verify"));

    // `alg: none`, unsigned.
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims(&idp, json!({})).to_string())
    );
    assert!(refused(client_of(&auth, &none).await).contains("unreadable header"));

    // HS256 with the provider's public key as the HMAC secret (key confusion).
    let confused = sign(
        Algorithm::HS256,
        &EncodingKey::from_secret(idp.key.public_pem.as_bytes()).unwrap(),
        kid,
        &claims(&idp, json!({})),
    );
    let why = refused(client_of(&auth, &confused).await);
    assert!(
        why.contains("HS256") && why.contains("asymmetric algorithms only"),
        "{why}"
    );

    // Someone else's key: under a `kid` the provider does not publish, and under its real `kid`.
    let stranger = rsa(&idp.stranger_pem);
    let unknown = sign(
        Algorithm::RS256,
        &stranger,
        Some("not-a-key-of-the-idp"),
        &claims(&idp, json!({})),
    );
    let why = refused(client_of(&auth, &unknown).await);
    assert!(
        why.contains("key `not-a-key-of-the-idp`, which the issuer does not publish"),
        "{why}"
    );
    let forged = sign(Algorithm::RS256, &stranger, kid, &claims(&idp, json!({})));
    assert!(refused(client_of(&auth, &forged).await).contains("signature does not verify"));

    // The unknown `kid` made one refetch; a second one within the interval makes none.
    assert_eq!(auth.key_fetches(), 2);
    let again = sign(
        Algorithm::RS256,
        &stranger,
        Some("another-made-up-kid"),
        &claims(&idp, json!({})),
    );
    refused(client_of(&auth, &again).await);
    assert_eq!(
        auth.key_fetches(),
        2,
        "refetches are limited to one per interval"
    );

    // Through the HTTP front: 401 with `invalid_token`.
    let a = access(&idp.issuer);
    let http = HttpAuth::new(Arc::clone(&auth), a.auth.as_ref());
    let mut headers = HeaderMap::new();
    headers.insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {none}")).unwrap(),
    );
    let response = http.authorize(&headers).await.unwrap_err();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response.headers()[header::WWW_AUTHENTICATE]
        .to_str()
        .unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\""),
        "{challenge}"
    );
}

#[tokio::test]
async fn a_key_rotated_at_the_provider_is_found_by_one_refetch() {
    let mut idp = Idp::start(RESOURCE).await;
    let auth = authenticator(&idp.issuer, patient_keys());
    let before = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &before).await.unwrap(), "readers");
    assert_eq!(auth.key_fetches(), 1);

    let old = idp.key.clone();
    let new = idp.rotate().await;
    assert_ne!(old.kid, new.kid);
    let after = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    let header = jsonwebtoken::decode_header(&after).unwrap();
    assert_eq!(
        header.kid.as_deref(),
        Some(new.kid.as_str()),
        "signed by the new key"
    );
    assert_eq!(client_of(&auth, &after).await.unwrap(), "readers");
    assert_eq!(auth.key_fetches(), 2, "the new key came with one refetch");

    // The provider no longer publishes the old key: a token signed by it now fails, with no
    // further fetch (the last refetch is younger than the interval).
    let signed_by_old = sign(
        Algorithm::RS256,
        &rsa(&old.pem),
        Some(&old.kid),
        &claims(&idp, json!({})),
    );
    let why = refused(client_of(&auth, &signed_by_old).await);
    assert!(why.contains("which the issuer does not publish"), "{why}");
    assert_eq!(auth.key_fetches(), 2);
}

#[tokio::test]
async fn an_issuer_that_differs_from_its_metadata_is_refused_naming_both() {
    let idp = Idp::start(RESOURCE).await;
    let auth = authenticator(&format!("{}/", idp.issuer), KeyOptions::default());
    let token = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    match client_of(&auth, &token).await {
        Err(AuthError::KeysUnavailable(why)) => {
            assert!(
                why.contains("names the issuer") && why.contains("trailing `/`"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_or_silent_idp_never_holds_a_request_past_the_bound() {
    let idp = Idp::start(RESOURCE).await;
    let token = idp.token("reader-bot", "reader-secret", "mcp:read").await;

    // Nothing listens: refused at once, and not retried for 5 s.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let auth = authenticator(&issuer, KeyOptions::default());
    for _ in 0..2 {
        match client_of(&auth, &token).await {
            Err(AuthError::KeysUnavailable(why)) => assert!(why.contains("cannot reach"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        auth.key_fetches(),
        1,
        "a failed fetch is not retried at once"
    );

    // Accepts connections and never answers: the request gets its answer at the bound.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let keys = KeyOptions {
        fetch_timeout: Duration::from_secs(1),
        ..KeyOptions::default()
    };
    let auth = authenticator(&issuer, keys);
    let started = Instant::now();
    match client_of(&auth, &token).await {
        Err(AuthError::KeysUnavailable(why)) => {
            assert!(why.contains("did not arrive within 1 s"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Upper bound only (the bound is 1 s): nowhere near the IdP's own pace, which is forever.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    held.abort();
}

#[tokio::test]
async fn a_key_set_past_its_age_is_refreshed_in_the_background() {
    let idp = Idp::start(RESOURCE).await;
    let keys = KeyOptions {
        max_age: Duration::ZERO,
        retry_after_failure: Duration::ZERO,
        ..KeyOptions::default()
    };
    let auth = authenticator(&idp.issuer, keys);
    let first = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &first).await.unwrap(), "readers");
    assert_eq!(auth.key_fetches(), 1);
    // Another token (not remembered yet): served from the cached set at once, which is past
    // its age, so a refresh starts beside it.
    let second = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &second).await.unwrap(), "readers");
    let deadline = Instant::now() + Duration::from_secs(10);
    while auth.key_fetches() < 2 {
        assert!(Instant::now() < deadline, "no background refresh");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn an_unknown_kid_refetches_again_once_the_interval_has_passed() {
    let idp = Idp::start(RESOURCE).await;
    // The interval already over at every request: each unknown `kid` asks the IdP again.
    let auth = authenticator(
        &idp.issuer,
        KeyOptions {
            refetch_interval: Duration::ZERO,
            ..KeyOptions::default()
        },
    );
    let token = idp.token("reader-bot", "reader-secret", "mcp:read").await;
    assert_eq!(client_of(&auth, &token).await.unwrap(), "readers");
    assert_eq!(auth.key_fetches(), 1);
    let stranger = rsa(&idp.stranger_pem);
    for (n, kid) in ["made-up-1", "made-up-2"].into_iter().enumerate() {
        let unknown = sign(
            Algorithm::RS256,
            &stranger,
            Some(kid),
            &claims(&idp, json!({})),
        );
        refused(client_of(&auth, &unknown).await);
        assert_eq!(auth.key_fetches(), 2 + n as u64, "one refetch for `{kid}`");
    }
}

#[test]
fn a_rotation_is_picked_up_within_ten_seconds_by_default() {
    assert_eq!(
        KeyOptions::default().refetch_interval,
        Duration::from_secs(10)
    );
}
