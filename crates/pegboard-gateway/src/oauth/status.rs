//! `pegboard auth`: where each `url` server stands, from the store and (when nothing is stored)
//! from asking the server. Never a token.

use super::discovery::{self, Probe};
use crate::config::{ServerConfig, Transport};
use crate::credentials::{Store, StoreKey, now_epoch};

/// One server's standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthState {
    /// Usable credentials are stored.
    LoggedIn {
        /// The scopes granted.
        scopes: Vec<String>,
        /// Seconds until the access token expires (negative: expired), when known.
        expires_in: Option<i64>,
        /// Whether it can be refreshed without a login.
        refreshable: bool,
        /// Where they are kept.
        stored_in: String,
    },
    /// A login is needed (why).
    NeedsLogin(String),
    /// The server answered without asking for a login.
    NoAuthNeeded,
    /// The config sets an `Authorization` header, used as it is.
    StaticHeader,
    /// Nothing stored and the server did not answer (why).
    Unknown(String),
}

/// Where `server` stands; `None` for a server that is not a `url` server.
pub async fn auth_state(server: &ServerConfig) -> Option<AuthState> {
    let Transport::Http {
        url,
        headers,
        oauth,
    } = &server.transport
    else {
        return None;
    };
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Some(AuthState::StaticHeader);
    }
    let store = match Store::open(oauth.credentials).await {
        Ok(store) => store,
        Err(e) => return Some(AuthState::Unknown(e.to_string())),
    };
    let record = match store.server(StoreKey::new(url, oauth)).load().await {
        Ok(record) => record,
        Err(e) => return Some(AuthState::Unknown(e.to_string())),
    };
    if let Some(record) = &record {
        if record.is_logged_in() {
            return Some(AuthState::LoggedIn {
                scopes: record.scopes().to_vec(),
                expires_in: record.expires_at().map(|at| {
                    i64::try_from(at).unwrap_or(i64::MAX)
                        - i64::try_from(now_epoch()).unwrap_or(i64::MAX)
                }),
                refreshable: record.has_refresh_token(),
                stored_in: store.describe(),
            });
        }
        if let Some(why) = &record.refused {
            return Some(AuthState::NeedsLogin(why.clone()));
        }
    }
    Some(match discovery::probe(url).await {
        Ok(Probe::Challenge(_)) => AuthState::NeedsLogin(match record {
            Some(_) => "logged out".to_string(),
            None => "never logged in".to_string(),
        }),
        Ok(Probe::Open(_)) => AuthState::NoAuthNeeded,
        Err(e) => AuthState::Unknown(e.to_string()),
    })
}
