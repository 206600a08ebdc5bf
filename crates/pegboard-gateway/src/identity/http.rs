//! The HTTP side of identity: a request's headers to its client or to the answer the MCP
//! authorization spec (2025-11-25, 2026-07-28) asks for, and the RFC 9728 protected-resource
//! metadata that lets MCP clients find the issuer and start their own login.
//!
//! - no credentials (or not `Bearer`): 401, `WWW-Authenticate: Bearer resource_metadata="…"`;
//! - a token that is not valid: 401, the same with `error="invalid_token"`;
//! - a valid token that matches no client: 403, `error="insufficient_scope"`;
//! - the issuer's keys cannot be fetched: 503 with `Retry-After`.
//!
//! `resource_metadata` is present when `auth` is configured (static tokens alone have no
//! metadata to point to).

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use serde_json::json;

use super::access::AuthConfig;
use super::authenticator::Authenticator;
use super::client::Client;
use super::errors::AuthError;

/// Where RFC 9728 metadata is served (also with the MCP path appended: `/mcp`).
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

/// The MCP endpoint's path, whose metadata is also served at the path-suffixed location.
const MCP_PATH: &str = "/mcp";

/// Seconds a client is told to wait when the issuer's keys are unavailable.
const KEYS_RETRY_AFTER: &str = "5";

/// The authenticator with its HTTP answers prepared.
#[derive(Debug, Clone)]
pub struct HttpAuth {
    authenticator: Arc<Authenticator>,
    /// The metadata URL, for `resource_metadata="…"` (with `auth` only).
    metadata_url: Option<String>,
    /// The metadata document (with `auth` only).
    metadata: Option<Bytes>,
    /// The scopes the clients ask for, space-separated (for `scope="…"`), or empty.
    scopes: String,
}

impl HttpAuth {
    /// The HTTP answers of `authenticator`; `auth` is the config's `auth` section, whose
    /// `audience` (the gateway's resource URL) gives the metadata's location.
    pub fn new(authenticator: Arc<Authenticator>, auth: Option<&AuthConfig>) -> Self {
        let scopes = quotable(&authenticator.scopes().join(" "));
        let metadata_url = auth.and_then(|a| metadata_url(&a.audience));
        let metadata = auth.map(|a| {
            let doc = json!({
                "resource": a.audience,
                "authorization_servers": [a.issuer],
                "bearer_methods_supported": ["header"],
                "scopes_supported": authenticator.scopes(),
                "resource_name": "PegBoard MCP gateway",
            });
            Bytes::from(doc.to_string())
        });
        Self {
            authenticator,
            metadata_url,
            metadata,
            scopes,
        }
    }

    /// The authenticator.
    #[cfg(any(test, feature = "testing"))]
    pub fn authenticator(&self) -> &Arc<Authenticator> {
        &self.authenticator
    }

    /// The protected-resource metadata URL, when `auth` is configured.
    #[cfg(any(test, feature = "testing"))]
    pub fn metadata_url(&self) -> Option<&str> {
        self.metadata_url.as_deref()
    }

    /// The client of a request, or the answer to send instead (401, 403 or 503, see the
    /// module). More than one `Authorization` header is refused as malformed.
    ///
    /// # Errors
    /// The ready response when the request is not let in.
    pub async fn authorize(&self, headers: &HeaderMap) -> Result<Arc<Client>, Response> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let result = match (values.next(), values.next()) {
            (None, _) => self.authenticator.authenticate(None).await,
            (Some(v), None) => match v.to_str() {
                Ok(v) => self.authenticator.authenticate(Some(v)).await,
                Err(_) => Err(AuthError::Malformed),
            },
            (Some(_), Some(_)) => Err(AuthError::Malformed),
        };
        result.map_err(|e| {
            tracing::debug!("refused a request: {e}");
            self.refusal(&e)
        })
    }

    /// The answer for `error`.
    pub fn refusal(&self, error: &AuthError) -> Response {
        let (status, challenge) = match error {
            AuthError::Missing | AuthError::Malformed => {
                (StatusCode::UNAUTHORIZED, self.challenge(None, None))
            }
            AuthError::UnknownToken | AuthError::InvalidJwt(_) => (
                StatusCode::UNAUTHORIZED,
                self.challenge(Some("invalid_token"), Some(&error.to_string())),
            ),
            AuthError::NoMatchingClient => (
                StatusCode::FORBIDDEN,
                self.challenge(Some("insufficient_scope"), Some(&error.to_string())),
            ),
            AuthError::KeysUnavailable(_) => {
                let mut response = (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("{error}; retry shortly\n"),
                )
                    .into_response();
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(KEYS_RETRY_AFTER),
                );
                return response;
            }
        };
        let mut response = (
            status,
            format!(
                "{}: {error}\n",
                status
                    .canonical_reason()
                    .unwrap_or("refused")
                    .to_lowercase()
            ),
        )
            .into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// `Bearer` with the error, its description, the scopes and the metadata URL.
    fn challenge(&self, error: Option<&str>, description: Option<&str>) -> String {
        let mut params: Vec<String> = Vec::new();
        if let Some(error) = error {
            params.push(format!("error=\"{error}\""));
        }
        if let Some(d) = description {
            params.push(format!("error_description=\"{}\"", quotable(d)));
        }
        if !self.scopes.is_empty() {
            params.push(format!("scope=\"{}\"", self.scopes));
        }
        if let Some(url) = &self.metadata_url {
            params.push(format!("resource_metadata=\"{}\"", quotable(url)));
        }
        if params.is_empty() {
            "Bearer".to_string()
        } else {
            format!("Bearer {}", params.join(", "))
        }
    }

    /// The RFC 9728 metadata at [`PROTECTED_RESOURCE_PATH`] and the same with `/mcp`
    /// appended, to merge beside `/mcp` (outside any authentication: clients read it before
    /// they have a token). `None` without `auth`.
    pub fn metadata_router(&self) -> Option<Router> {
        let doc = self.metadata.clone()?;
        let serve = move || {
            let doc = doc.clone();
            async move {
                (
                    [
                        (header::CONTENT_TYPE, "application/json"),
                        // Browser-based clients (the Inspector) read it cross-origin.
                        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                        (header::CACHE_CONTROL, "max-age=3600"),
                    ],
                    doc,
                )
            }
        };
        Some(
            Router::new()
                .route(PROTECTED_RESOURCE_PATH, get(serve.clone()))
                .route(
                    &format!("{PROTECTED_RESOURCE_PATH}{}", MCP_PATH),
                    get(serve),
                ),
        )
    }
}

/// The metadata URL of resource `audience` (RFC 9728 §3.1: the well-known path inserted
/// between the host and the resource's path).
fn metadata_url(audience: &str) -> Option<String> {
    let url = url::Url::parse(audience).ok()?;
    let path = url.path().trim_end_matches('/');
    let mut out = url.clone();
    out.set_path(&format!("{PROTECTED_RESOURCE_PATH}{path}"));
    out.set_query(None);
    out.set_fragment(None);
    Some(out.into())
}

/// `s` with what a quoted-string cannot hold (`"`, `\`, controls, non-ASCII) dropped.
fn quotable(s: &str) -> String {
    s.chars()
        .filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\')
        .collect()
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn new() {
        use crate::identity::access::AuthConfig;
        use crate::identity::{AuthOptions, Authenticator, HttpAuth};
        use std::sync::Arc;
        let auth = AuthConfig {
            issuer: "https://idp.example.com".into(),
            audience: "https://gw.example.com/mcp".into(),
        };
        let http = HttpAuth::new(
            Arc::new(Authenticator::new(None, None, AuthOptions::default()).unwrap()),
            Some(&auth),
        );
        assert_eq!(
            http.metadata_url(),
            Some("https://gw.example.com/.well-known/oauth-protected-resource/mcp")
        );
    }
}
