//! `pegboard login NAME`: authorization code with PKCE (S256), `state`, RFC 8707 `resource` and
//! RFC 9207 `iss` (rmcp's `AuthorizationSession`), a redirect listener on 127.0.0.1, and the
//! client identity chosen as the MCP spec says: the configured client, else a Client ID Metadata
//! Document when the server supports them, else Dynamic Client Registration, stored and reused.

use std::time::Duration;

use rmcp::transport::auth::{AuthorizationMetadata, AuthorizationRequest, AuthorizationSession};

use super::callback::RedirectListener;
use super::discovery::{self, Probe};
use super::error::LoginError;
use crate::config::OAuthSettings;
use crate::credentials::{
    ClientRegistration, CredentialRecord, RegistrationKind, RmcpStore, ServerStore, Store, StoreKey,
};

/// The client name sent with a dynamic registration.
const CLIENT_NAME: &str = "PegBoard";

/// How a login shows its authorization URL and how long it waits.
#[derive(Debug, Clone)]
pub struct LoginOptions {
    /// Open the URL with the platform opener (it is printed either way).
    pub open_browser: bool,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
}

impl Default for LoginOptions {
    fn default() -> Self {
        Self {
            open_browser: true,
            timeout: Duration::from_secs(300),
        }
    }
}

/// What a completed login gave.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The access token's lifetime, when the server said.
    pub lifetime: Option<Duration>,
    /// Whether a refresh token came with it.
    pub refreshable: bool,
    /// Where the credentials went ("the OS keyring" or the file).
    pub stored_in: String,
}

/// Log in to the server `name` at `url`. `show_url` gets the authorization URL (print it, or
/// offer it to an MCP client through URL-mode elicitation: see `super::elicit`).
///
/// # Errors
/// A [`LoginError`] saying which step failed; the store keeps what it had (a new dynamic
/// registration excepted, which is kept for the next try).
pub async fn login(
    name: &str,
    url: &str,
    settings: &OAuthSettings,
    options: &LoginOptions,
    show_url: impl FnOnce(&str),
) -> Result<LoggedIn, LoginError> {
    let store = Store::open(settings.credentials).await?;
    login_in(&store, name, url, settings, options, show_url).await
}

/// [`login`] with the credentials going to `store` (whatever `settings.credentials` says).
///
/// # Errors
/// As [`login`].
pub async fn login_in(
    store: &Store,
    name: &str,
    url: &str,
    settings: &OAuthSettings,
    options: &LoginOptions,
    show_url: impl FnOnce(&str),
) -> Result<LoggedIn, LoginError> {
    let challenge = match discovery::probe(url).await? {
        Probe::Challenge(challenge) => challenge,
        Probe::Open(_) => {
            return Err(LoginError::NoAuthNeeded {
                server: name.to_string(),
                url: url.to_string(),
            });
        }
    };
    let entry = store.server(StoreKey::new(url, settings));
    let previous = entry.load().await?;
    let rmcp_store = RmcpStore::new(entry.clone());
    let mut manager = discovery::manager(url, &rmcp_store).await?;
    let metadata = discovery::discover(&mut manager, Some(&challenge)).await?;
    rmcp_store.set_metadata(kept_metadata(&metadata));

    let reusable = previous
        .as_ref()
        .map(|r| &r.client)
        .filter(|c| c.kind != RegistrationKind::Preregistered && c.issuer == metadata.issuer);
    let preferred_port = reusable
        .and_then(|c| port_of(&c.redirect_uri))
        .unwrap_or_else(|| settings.redirect_port());
    let (listener, moved) = RedirectListener::bind(preferred_port).await?;
    let redirect_uri = listener.redirect_uri();
    if moved {
        crate::io::stderr::line(format_args!(
            "{name}: port {preferred_port} is busy; listening for the login on port {} instead",
            listener.port()
        ));
    }

    let client = choose_client(
        name,
        settings,
        reusable.filter(|c| c.redirect_uri == redirect_uri),
        &metadata,
        &redirect_uri,
        &mut manager,
        &entry,
    )
    .await?;
    rmcp_store.set_client(client.clone());

    let mut request = AuthorizationRequest::new(redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_preregistered_client(client.client_id.clone());
    if let Some(secret) = &client.client_secret {
        request = request.with_client_secret(secret.clone());
    }
    if !settings.scopes.is_empty() {
        request = request.with_scopes(settings.scopes.iter().cloned());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::oauth("starting the authorization", e))?;
    let auth_url = session.get_authorization_url().to_string();
    let state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| LoginError::oauth("starting the authorization", "no state in the URL"))?;
    show_url(&auth_url);
    if options.open_browser
        && let Err(e) = open::that_detached(&auth_url)
    {
        crate::io::stderr::line(format_args!(
            "{name}: could not open a browser ({e}); open the URL above yourself"
        ));
    }

    let callback = listener.wait(&state, name, options.timeout).await?;
    session
        .handle_callback_with_issuer(&callback.code, &callback.state, callback.issuer.as_deref())
        .await
        .map_err(|e| LoginError::oauth("exchanging the authorization code", e))?;

    let record = entry.load().await?;
    let record = record.as_ref().filter(|r| r.is_logged_in());
    Ok(LoggedIn {
        scopes: record.map(|r| r.scopes().to_vec()).unwrap_or_default(),
        lifetime: record.and_then(CredentialRecord::lifetime),
        refreshable: record.is_some_and(CredentialRecord::has_refresh_token),
        stored_in: store.describe(),
    })
}

/// The client to log in as: the configured one, the stored registration when it still fits,
/// a metadata document URL when the server supports them, else a new dynamic registration
/// (stored at once, so an abandoned login does not register again next time).
async fn choose_client(
    name: &str,
    settings: &OAuthSettings,
    reusable: Option<&ClientRegistration>,
    metadata: &AuthorizationMetadata,
    redirect_uri: &str,
    manager: &mut rmcp::transport::auth::AuthorizationManager,
    entry: &ServerStore,
) -> Result<ClientRegistration, LoginError> {
    if let Some(client_id) = &settings.client_id {
        return Ok(ClientRegistration {
            client_id: client_id.clone(),
            client_secret: settings
                .client_secret
                .as_ref()
                .map(|s| s.expose().to_string()),
            redirect_uri: redirect_uri.to_string(),
            issuer: metadata.issuer.clone(),
            kind: RegistrationKind::Preregistered,
        });
    }
    if let Some(client) = reusable {
        tracing::debug!(server = name, client_id = %client.client_id, "reusing the stored registration");
        return Ok(client.clone());
    }
    let cimd_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    if let Some(document) = &settings.client_metadata_url
        && cimd_supported
    {
        return Ok(ClientRegistration {
            client_id: document.clone(),
            client_secret: None,
            redirect_uri: redirect_uri.to_string(),
            issuer: metadata.issuer.clone(),
            kind: RegistrationKind::MetadataDocument,
        });
    }
    let scopes: Vec<&str> = settings.scopes.iter().map(String::as_str).collect();
    let registered = manager
        .register_client(CLIENT_NAME, redirect_uri, &scopes)
        .await
        .map_err(|e| LoginError::oauth("registering PegBoard with the authorization server", e))?;
    let client = ClientRegistration {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        redirect_uri: redirect_uri.to_string(),
        issuer: metadata.issuer.clone(),
        kind: RegistrationKind::Dynamic,
    };
    let url = entry.key().url().to_string();
    let stored = client.clone();
    let metadata = metadata.clone();
    entry
        .update(move |_| {
            let mut record = CredentialRecord::new(&url, stored);
            record.metadata = Some(kept_metadata(&metadata));
            Some(record)
        })
        .await?;
    Ok(client)
}

/// The fields of the authorization server's metadata that refreshes and logouts use: the
/// endpoints, the issuer, how the client authenticates, where to revoke. The rest is left out
/// (keyrings limit an item's size; Windows' to 2.5 KB).
fn kept_metadata(metadata: &AuthorizationMetadata) -> AuthorizationMetadata {
    const KEPT: [&str; 2] = [
        "revocation_endpoint",
        "token_endpoint_auth_methods_supported",
    ];
    let mut kept = metadata.clone();
    kept.additional_fields
        .retain(|k, _| KEPT.contains(&k.as_str()));
    kept.jwks_uri = None;
    kept.response_types_supported = None;
    kept.code_challenge_methods_supported = None;
    kept.scopes_supported = None;
    kept
}

fn port_of(uri: &str) -> Option<u16> {
    url::Url::parse(uri).ok()?.port()
}
