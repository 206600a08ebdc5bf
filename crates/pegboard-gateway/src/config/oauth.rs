//! The `"oauth"` object of a `url` entry and the file's `"credentials"` choice: how PegBoard
//! logs in to a server that asks for OAuth, and where it keeps what the login gave it.
//!
//! ```json
//! { "credentials": "file",
//!   "mcpServers": {
//!     "linear": { "url": "https://mcp.linear.app/mcp" },
//!     "corp":   { "url": "https://mcp.corp.example/mcp",
//!                 "oauth": { "clientId": "pegboard", "clientSecret": "${CORP_SECRET}",
//!                            "scopes": ["tools:read"], "redirectPort": 33418 } }
//! } }
//! ```
//!
//! Every field is optional: a `url` server that answers 401 with an OAuth challenge is logged in
//! to with `pegboard login NAME` whether or not its entry has an `oauth` object.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::EntryProblem;

/// The redirect listener's port when the entry names none. Authorization servers that match a
/// registered redirect URI exactly (port included) need the same port at every login.
pub const DEFAULT_REDIRECT_PORT: u16 = 33418;

/// Where credentials are kept (the file's top-level `"credentials"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CredentialsBackend {
    /// The OS keyring when one answers, else the file.
    #[default]
    Auto,
    /// `"keyring"`: the OS keyring only (macOS Keychain, Windows Credential Manager, the Secret
    /// Service over D-Bus); failing when none answers.
    Keyring,
    /// `"file"`: `$XDG_DATA_HOME/pegboard/credentials.json` (mode 0600, in a 0700 folder).
    File,
    /// `"store"`: the fleet's store (`--store`), each record encrypted with the key in
    /// `PEGBOARD_STORE_KEY`: one login for every replica. Needs the cargo feature `store`.
    Store,
}

impl CredentialsBackend {
    /// Parse the config's value.
    ///
    /// # Errors
    /// A message naming the accepted values.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value {
            "keyring" => Ok(Self::Keyring),
            "file" => Ok(Self::File),
            "auto" => Ok(Self::Auto),
            "store" => Ok(Self::Store),
            other => Err(format!(
                "`credentials` must be \"keyring\" (the OS keyring), \"file\" (a file under \
                 $XDG_DATA_HOME/pegboard/) or \"store\" (the fleet's store, `--store`), got \
                 `{other}`"
            )),
        }
    }
}

/// A secret from the config (a client secret): never printed, not even by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one request that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A `url` entry's `"oauth"` object, variables expanded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OAuthSettings {
    /// `clientId`: a client registered with the authorization server beforehand (no dynamic
    /// registration then).
    pub client_id: Option<String>,
    /// `clientSecret`: that client's secret, when it is a confidential client.
    pub client_secret: Option<Secret>,
    /// `clientMetadataUrl`: the HTTPS URL of a Client ID Metadata Document, used as the client id
    /// when the authorization server says it supports them.
    pub client_metadata_url: Option<String>,
    /// `scopes`: the scopes to ask for (empty: what the server's metadata suggests).
    pub scopes: Vec<String>,
    /// `redirectPort`: the port of the login's redirect listener on 127.0.0.1.
    pub redirect_port: Option<u16>,
    /// The file's `"credentials"`.
    pub credentials: CredentialsBackend,
}

impl OAuthSettings {
    /// The port the redirect listener tries first.
    pub fn redirect_port(&self) -> u16 {
        self.redirect_port.unwrap_or(DEFAULT_REDIRECT_PORT)
    }
}

/// The object as written.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct RawOAuth {
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    redirect_port: Option<u16>,
}

/// Read an entry's `"oauth"` value; `expand` fills `${VAR}` in `clientId` and `clientSecret`.
pub(super) fn parse_oauth(
    value: Option<Value>,
    expand: &dyn Fn(&str, &str) -> Result<String, EntryProblem>,
) -> Result<OAuthSettings, EntryProblem> {
    let Some(value) = value else {
        return Ok(OAuthSettings::default());
    };
    let raw: RawOAuth = serde_json::from_value(value).map_err(|e| {
        EntryProblem::Invalid(format!(
            "`oauth`: {e}; it takes `clientId`, `clientSecret`, `clientMetadataUrl`, `scopes` \
             (a list of strings) and `redirectPort` (1-65535), all optional"
        ))
    })?;
    let client_id = match raw.client_id {
        Some(id) => Some(expand(&id, "oauth.clientId")?),
        None => None,
    };
    let client_secret = match raw.client_secret {
        Some(secret) => Some(Secret::new(expand(&secret, "oauth.clientSecret")?)),
        None => None,
    };
    if client_secret.is_some() && client_id.is_none() {
        return Err(EntryProblem::Invalid(
            "`oauth.clientSecret` needs `oauth.clientId` (the client it belongs to)".into(),
        ));
    }
    if let Some(url) = &raw.client_metadata_url
        && !url.starts_with("https://")
    {
        return Err(EntryProblem::Invalid(format!(
            "`oauth.clientMetadataUrl` must be an https:// URL of a client metadata document, got `{url}`"
        )));
    }
    if raw.redirect_port == Some(0) {
        return Err(EntryProblem::Invalid(
            "`oauth.redirectPort` must be a port between 1 and 65535".into(),
        ));
    }
    if let Some(bad) = raw
        .scopes
        .iter()
        .find(|s| s.is_empty() || s.contains(char::is_whitespace))
    {
        return Err(EntryProblem::Invalid(format!(
            "`oauth.scopes`: `{bad}` is not one scope (no spaces; one scope per string)"
        )));
    }
    Ok(OAuthSettings {
        client_id,
        client_secret,
        client_metadata_url: raw.client_metadata_url,
        scopes: raw.scopes,
        redirect_port: raw.redirect_port,
        credentials: CredentialsBackend::Auto,
    })
}
