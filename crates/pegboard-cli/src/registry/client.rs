//! The MCP Registry's read API (`/v0.1/`): search, and one server version.

use std::time::Duration;

use super::server_json::{ServerJson, ServerList, ServerResponse};

/// The official registry.
pub const DEFAULT_REGISTRY: &str = "https://registry.modelcontextprotocol.io";
/// A whole request, answer included.
const TIMEOUT: Duration = Duration::from_secs(20);
/// Opening the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read (a search page is some tens of KiB).
const MAX_BODY: usize = 8 * 1024 * 1024;
/// Servers asked for per search.
const SEARCH_LIMIT: &str = "50";

/// What can go wrong talking to the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// `--registry` / `PEGBOARD_REGISTRY` / `registry` is not an http(s) URL.
    #[error("registry URL `{0}` is not an http:// or https:// URL")]
    BadUrl(String),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// No answer.
    #[error("cannot reach the registry at {url}: {message}")]
    Unreachable {
        /// What was asked.
        url: String,
        /// Why.
        message: String,
    },
    /// The server or version does not exist.
    #[error("the registry has no server `{name}`{}; look for it with `pegboard find`", version.as_ref().map(|v| format!(" at version {v}")).unwrap_or_default())]
    NotFound {
        /// The name asked for.
        name: String,
        /// The version asked for, if any.
        version: Option<String>,
    },
    /// Any other status.
    #[error("the registry answered {status} to {url}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        /// What was asked.
        url: String,
        /// Its status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
    /// An answer that is not the API's JSON.
    #[error("the registry's answer to {url} is not what the MCP Registry API returns: {message}")]
    Garbage {
        /// What was asked.
        url: String,
        /// What is wrong.
        message: String,
    },
}

/// A registry at one base URL.
#[derive(Debug, Clone)]
pub struct RegistryClient {
    base: url::Url,
    http: reqwest::Client,
}

impl RegistryClient {
    /// The registry at `base` (e.g. [`DEFAULT_REGISTRY`]).
    ///
    /// # Errors
    /// Not an http(s) URL, or no HTTP client.
    pub fn new(base: &str) -> Result<Self, RegistryError> {
        let mut parsed =
            url::Url::parse(base.trim()).map_err(|_| RegistryError::BadUrl(base.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.cannot_be_a_base() {
            return Err(RegistryError::BadUrl(base.to_string()));
        }
        if let Ok(mut segments) = parsed.path_segments_mut() {
            segments.pop_if_empty();
        }
        // The process-wide TLS provider, as the gateway's client installs it (ring, no C build).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("pegboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RegistryError::Client(e.to_string()))?;
        Ok(Self { base: parsed, http })
    }

    fn url(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.extend(segments);
        }
        url
    }

    /// The latest version of each server whose name (or description) contains `term`.
    ///
    /// # Errors
    /// [`RegistryError`].
    pub async fn search(&self, term: &str) -> Result<Vec<ServerJson>, RegistryError> {
        let mut url = self.url(&["v0.1", "servers"]);
        url.query_pairs_mut()
            .append_pair("search", term)
            .append_pair("version", "latest")
            .append_pair("limit", SEARCH_LIMIT);
        let body = self.get(&url).await?.ok_or_else(|| RegistryError::Status {
            url: url.to_string(),
            status: 404,
            body: String::new(),
        })?;
        let list: ServerList = parse(&url, &body)?;
        Ok(list.servers.into_iter().map(|r| r.server).collect())
    }

    /// The server `name` at `version` (`None`: the latest).
    ///
    /// # Errors
    /// [`RegistryError`]; [`RegistryError::NotFound`] when the registry has no such version.
    pub async fn server(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<ServerJson, RegistryError> {
        let url = self.url(&[
            "v0.1",
            "servers",
            name,
            "versions",
            version.unwrap_or("latest"),
        ]);
        let Some(body) = self.get(&url).await? else {
            return Err(RegistryError::NotFound {
                name: name.to_string(),
                version: version.map(str::to_string),
            });
        };
        let response: ServerResponse = parse(&url, &body)?;
        Ok(response.server)
    }

    /// The body of a 200 answer; `None` for a 404.
    async fn get(&self, url: &url::Url) -> Result<Option<Vec<u8>>, RegistryError> {
        let unreachable = |e: reqwest::Error| RegistryError::Unreachable {
            url: url.to_string(),
            message: if e.is_timeout() {
                format!("no answer within {} s", TIMEOUT.as_secs())
            } else {
                e.to_string()
            },
        };
        let mut response = self
            .http
            .get(url.as_str())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(RegistryError::Garbage {
                    url: url.to_string(),
                    message: format!("over {} MiB", MAX_BODY >> 20),
                });
            }
            body.extend_from_slice(&chunk);
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let start: String = text.trim().chars().take(200).collect();
            return Err(RegistryError::Status {
                url: url.to_string(),
                status: status.as_u16(),
                body: start,
            });
        }
        Ok(Some(body))
    }
}

fn parse<T: serde::de::DeserializeOwned>(url: &url::Url, body: &[u8]) -> Result<T, RegistryError> {
    serde_json::from_slice(body).map_err(|e| RegistryError::Garbage {
        url: url.to_string(),
        message: e.to_string(),
    })
}
