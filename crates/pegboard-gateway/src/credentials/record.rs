//! What is stored for one server and client: the client's registration and rmcp's tokens.
//! Data only; nothing here reads or writes a store.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};

/// How the client id was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegistrationKind {
    /// `oauth.clientId` in the config.
    Preregistered,
    /// A Client ID Metadata Document URL (`oauth.clientMetadataUrl`).
    MetadataDocument,
    /// Dynamic Client Registration (RFC 7591), done once and reused.
    Dynamic,
}

/// The client PegBoard is to the authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The client id.
    pub client_id: String,
    /// A secret the authorization server gave at registration (or the config's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The redirect URI registered for it (its port matters to servers that match exactly).
    pub redirect_uri: String,
    /// The authorization server it is registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// How it was obtained.
    pub kind: RegistrationKind,
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("issuer", &self.issuer)
            .field("kind", &self.kind)
            .finish()
    }
}

/// Everything kept for one server URL and client.
#[derive(Clone, Serialize, Deserialize)]
pub struct CredentialRecord {
    /// The MCP server's URL (the tokens are for it and no other).
    pub server_url: String,
    /// The registered client.
    pub client: ClientRegistration,
    /// The authorization server's metadata as discovered at the login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<AuthorizationMetadata>,
    /// rmcp's tokens (access, refresh, scopes, when received); `None` after a logout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<StoredCredentials>,
    /// Set when the authorization server refused the refresh token (`invalid_grant`): a new
    /// login is needed. Cleared by the next login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// When the record was last written (seconds since the epoch).
    pub saved_at: u64,
}

impl fmt::Debug for CredentialRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `StoredCredentials`' own Debug redacts the tokens.
        f.debug_struct("CredentialRecord")
            .field("server_url", &self.server_url)
            .field("client", &self.client)
            .field("tokens", &self.tokens)
            .field("refused", &self.refused)
            .field("saved_at", &self.saved_at)
            .finish_non_exhaustive()
    }
}

/// Seconds since the epoch, now.
pub fn now_epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl CredentialRecord {
    /// A record for `server_url` with `client` and nothing else yet.
    pub fn new(server_url: &str, client: ClientRegistration) -> Self {
        Self {
            server_url: server_url.to_string(),
            client,
            metadata: None,
            tokens: None,
            refused: None,
            saved_at: now_epoch(),
        }
    }

    /// Tokens that a connection may use (present, for this record's client, not refused).
    pub fn usable_tokens(&self) -> Option<&StoredCredentials> {
        if self.refused.is_some() {
            return None;
        }
        self.tokens
            .as_ref()
            .filter(|t| t.client_id == self.client.client_id && t.token_response.is_some())
    }

    /// Whether a connection can use this record without a new login.
    pub fn is_logged_in(&self) -> bool {
        self.usable_tokens().is_some()
    }

    /// The access token, when there is a usable one.
    pub fn access_token(&self) -> Option<&str> {
        self.usable_tokens()?
            .token_response
            .as_ref()
            .map(|t| t.access_token().secret().as_str())
    }

    /// Whether a refresh token is stored.
    pub fn has_refresh_token(&self) -> bool {
        self.usable_tokens()
            .and_then(|t| t.token_response.as_ref())
            .is_some_and(|t| t.refresh_token().is_some())
    }

    /// When the access token expires (seconds since the epoch), when the server said.
    pub fn expires_at(&self) -> Option<u64> {
        let tokens = self.usable_tokens()?;
        let lifetime = tokens.token_response.as_ref()?.expires_in()?;
        Some(tokens.token_received_at? + lifetime.as_secs())
    }

    /// The access token's lifetime as the server gave it.
    pub fn lifetime(&self) -> Option<Duration> {
        self.usable_tokens()?.token_response.as_ref()?.expires_in()
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        self.usable_tokens()
            .map_or(&[], |t| t.granted_scopes.as_slice())
    }
}
