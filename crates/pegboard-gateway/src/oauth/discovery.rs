//! Asking a server whether it wants a login (an unauthenticated `initialize`: a 401 with a
//! `WWW-Authenticate` challenge means yes), and setting up rmcp's `AuthorizationManager` for it.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata, OAuthClientConfig};

use super::error::LoginError;
use crate::credentials::{ClientRegistration, RmcpStore};

/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// What a server said to a request without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// 401: it wants a login; the `WWW-Authenticate` value (empty when it sent none).
    Challenge(String),
    /// Anything else: it answers without one.
    Open(u16),
}

/// rustls' provider (ring), installed once for the process; one installed before is kept.
pub(crate) fn install_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Send an MCP `initialize` to `url` without credentials and see whether it asks for a login.
///
/// # Errors
/// [`LoginError::Unreachable`] when no HTTP answer came.
pub async fn probe(url: &str) -> Result<Probe, LoginError> {
    install_tls();
    let unreachable = |e: &dyn std::fmt::Display| LoginError::Unreachable {
        url: url.to_string(),
        reason: e.to_string(),
    };
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unreachable(&e))?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pegboard", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| unreachable(&root_cause(&e)))?;
    if response.status() == StatusCode::UNAUTHORIZED {
        let challenge = response
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
            .unwrap_or_default()
            .to_string();
        return Ok(Probe::Challenge(challenge));
    }
    Ok(Probe::Open(response.status().as_u16()))
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

/// An rmcp manager for the server at `url`, reading and writing `store`.
///
/// # Errors
/// The URL is not usable.
pub async fn manager(url: &str, store: &RmcpStore) -> Result<AuthorizationManager, LoginError> {
    install_tls();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| LoginError::oauth("setting up OAuth", e))?;
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// Find the authorization server of the manager's server (RFC 9728 protected-resource metadata
/// from `challenge` or the well-known URL, then its RFC 8414 / OIDC metadata, issuer checked by
/// rmcp), and set it on the manager.
///
/// # Errors
/// Discovery failed.
pub async fn discover(
    manager: &mut AuthorizationManager,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, LoginError> {
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.filter(|c| !c.is_empty()))
        .await
        .map_err(|e| LoginError::oauth("discovering the authorization server", e))?;
    manager.set_metadata(resolution.metadata.clone());
    Ok(resolution.metadata)
}

/// Configure the manager's OAuth client as `client` (its secret included).
///
/// # Errors
/// The metadata's endpoints or the redirect URI are not valid URLs.
pub fn configure(
    manager: &mut AuthorizationManager,
    client: &ClientRegistration,
    scopes: &[String],
) -> Result<(), LoginError> {
    let mut config = OAuthClientConfig::new(client.client_id.clone(), client.redirect_uri.clone())
        .with_scopes(scopes.to_vec());
    if let Some(secret) = &client.client_secret {
        config = config.with_client_secret(secret.clone());
    }
    manager
        .configure_client(config)
        .map_err(|e| LoginError::oauth("configuring the OAuth client", e))
}
