//! Offering a login's authorization URL to the MCP client of a downstream session, through
//! URL-mode elicitation (MCP 2025-11-25), instead of only printing it on stderr.
//!
//! The call pipeline calls [`offer_login_for_tool`] when it answers a call "server `NAME` needs a
//! login": the login runs in the background, its URL goes to the calling client, and when it
//! completes the server's supervisor (which watches the store) brings it onto the board.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, PoisonError};

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::ElicitationAction;
use rmcp::service::ElicitationMode;

use super::error::LoginError;
use super::login::{LoggedIn, LoginOptions, login_in};
use crate::config::{ServerConfig, Transport};
use crate::credentials::Store;

/// The servers whose login is being offered to a client now: one at a time per server, however
/// many calls and sessions ask.
static OFFERING: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

/// For a call of `tool`, answered "needs a login" on behalf of the session of `peer`: when the
/// tool's server waits for a login, the client declared URL-mode elicitation, and no login of
/// that server is being offered already, start one in the background whose URL goes to this
/// client ([`login_through_client`]). Whether one was started.
///
/// Must be called inside a Tokio runtime.
pub fn offer_login_for_tool(tool: &str, peer: &Peer<RoleServer>) -> bool {
    if !offers_url_elicitation(peer) {
        return false;
    }
    let Some(server) = super::pending().server_of_tool(tool) else {
        return false;
    };
    let name = server.name.clone();
    let Some(offering) = Offering::begin(&name) else {
        tracing::debug!(server = %name, "a login is already offered to a client");
        return false;
    };
    let peer = peer.clone();
    tokio::spawn(async move {
        let outcome = login_through_client(peer, &server).await;
        drop(offering);
        match outcome {
            Ok(_) => tracing::info!(server = %name, "logged in through the client"),
            Err(e) => tracing::warn!(server = %name, "the login offered to the client failed: {e}"),
        }
    });
    true
}

/// A server's place in [`OFFERING`], given up when dropped (however the login ends).
struct Offering(String);

impl Offering {
    /// `None` when a login of `server` is being offered already.
    fn begin(server: &str) -> Option<Self> {
        let mut offering = OFFERING.lock().unwrap_or_else(PoisonError::into_inner);
        offering
            .insert(server.to_string())
            .then(|| Self(server.to_string()))
    }
}

impl Drop for Offering {
    fn drop(&mut self) {
        OFFERING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.0);
    }
}

/// Whether the client of `peer` declared URL-mode elicitation.
pub fn offers_url_elicitation(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Url)
}

/// Ask the client of `peer` to open `auth_url` (the login of `server`); returns what the user
/// did. The login completes through the redirect listener whatever the client answers.
///
/// # Errors
/// The client does not support URL elicitation, or the request failed.
pub async fn offer_login_url(
    peer: &Peer<RoleServer>,
    server: &str,
    auth_url: &str,
) -> Result<ElicitationAction, String> {
    let url = url::Url::parse(auth_url).map_err(|e| e.to_string())?;
    peer.elicit_url(
        format!("PegBoard needs you to log in to `{server}`: open this page to authorize it."),
        url,
        format!("pegboard-login-{server}"),
    )
    .await
    .map_err(|e| e.to_string())
}

/// Log in to `server` for a downstream session whose client declared URL-mode elicitation: the
/// authorization URL goes to the client (and to stderr), the browser is not opened here. When
/// the login completes the store changes and the server's supervisor brings it onto the board.
///
/// # Errors
/// As [`login`](super::login()); the elicitation itself failing is logged, not an error (the URL is on stderr).
pub async fn login_through_client(
    peer: Peer<RoleServer>,
    server: &ServerConfig,
) -> Result<LoggedIn, LoginError> {
    let Transport::Http { oauth, .. } = &server.transport else {
        return Err(LoginError::NotHttp(server.name.clone()));
    };
    let store = Store::open(oauth.credentials).await?;
    login_through_client_in(&store, peer, server).await
}

/// `login_through_client` with the credentials going to `store`.
///
/// # Errors
/// As `login_through_client`.
pub async fn login_through_client_in(
    store: &Store,
    peer: Peer<RoleServer>,
    server: &ServerConfig,
) -> Result<LoggedIn, LoginError> {
    let Transport::Http { url, oauth, .. } = &server.transport else {
        return Err(LoginError::NotHttp(server.name.clone()));
    };
    let name = server.name.clone();
    let options = LoginOptions {
        open_browser: false,
        ..LoginOptions::default()
    };
    login_in(store, &server.name, url, oauth, &options, move |auth_url| {
        crate::io::stderr::line(format_args!("{name}: to log in, open {auth_url}"));
        let auth_url = auth_url.to_string();
        tokio::spawn(async move {
            match offer_login_url(&peer, &name, &auth_url).await {
                Ok(action) => tracing::debug!(server = %name, ?action, "login URL offered to the client"),
                Err(e) => tracing::warn!(server = %name, "could not offer the login URL to the client: {e}"),
            }
        });
    })
    .await
}
