//! `pegboard logout NAME`: the stored tokens are forgotten, and revoked first where the
//! authorization server has a revocation endpoint (RFC 7009). The client registration is kept
//! for the next login.

use std::time::Duration;

use super::discovery::install_tls;
use super::error::LoginError;
use crate::config::OAuthSettings;
use crate::credentials::{CredentialRecord, Store, StoreKey};

/// What a logout did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoggedOut {
    /// Nothing was stored.
    NothingStored,
    /// Forgotten; `revoked`: how many tokens the server confirmed revoked, `None` when it has no
    /// revocation endpoint; `failed`: why a revocation did not go through.
    Forgotten {
        /// Tokens revoked at the server.
        revoked: Option<usize>,
        /// A revocation that failed (the tokens are forgotten anyway).
        failed: Option<String>,
    },
}

/// Log out of the server at `url`.
///
/// # Errors
/// The store cannot be read or written.
pub async fn logout(url: &str, settings: &OAuthSettings) -> Result<LoggedOut, LoginError> {
    let store = Store::open(settings.credentials).await?;
    let entry = store.server(StoreKey::new(url, settings));
    let Some(record) = entry.load().await? else {
        return Ok(LoggedOut::NothingStored);
    };
    if record.tokens.is_none() {
        return Ok(LoggedOut::NothingStored);
    }
    let (revoked, failed) = match revoke(&record).await {
        Ok(count) => (count, None),
        Err(reason) => (Some(0), Some(reason)),
    };
    entry
        .update(|before| {
            before.map(|mut r| {
                r.tokens = None;
                r.refused = None;
                r
            })
        })
        .await?;
    Ok(LoggedOut::Forgotten { revoked, failed })
}

/// Revoke the record's refresh and access tokens; `Ok(None)` when there is no endpoint.
async fn revoke(record: &CredentialRecord) -> Result<Option<usize>, String> {
    let Some(endpoint) = record
        .metadata
        .as_ref()
        .and_then(|m| m.additional_fields.get("revocation_endpoint"))
        .and_then(serde_json::Value::as_str)
    else {
        return Ok(None);
    };
    install_tls();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let Some(tokens) = record
        .tokens
        .as_ref()
        .and_then(|t| t.token_response.as_ref())
    else {
        return Ok(Some(0));
    };
    use oauth2::TokenResponse;
    let mut pairs: Vec<(&str, String)> = Vec::new();
    if let Some(refresh) = tokens.refresh_token() {
        pairs.push(("refresh_token", refresh.secret().clone()));
    }
    pairs.push(("access_token", tokens.access_token().secret().clone()));
    let mut revoked = 0;
    for (hint, token) in pairs {
        let mut form = vec![("token", token.as_str()), ("token_type_hint", hint)];
        let mut request = client.post(endpoint);
        match &record.client.client_secret {
            Some(secret) => request = request.basic_auth(&record.client.client_id, Some(secret)),
            None => form.push(("client_id", record.client.client_id.as_str())),
        }
        let body = serde_urlencoded::to_string(&form).map_err(|e| e.to_string())?;
        let response = request
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("the revocation request failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!(
                "the revocation endpoint answered {}",
                response.status()
            ));
        }
        revoked += 1;
    }
    Ok(Some(revoked))
}
