//! Finding and fetching an issuer's signing keys: its metadata (OIDC discovery, else RFC 8414),
//! the metadata's `issuer` checked, then its `jwks_uri`. Every body is read up to a bound; the
//! caller bounds the time.

use reqwest::header::ACCEPT;
use serde_json::Value;
use url::Url;

use super::parse::is_loopback;

/// The largest metadata or key set read.
const MAX_BODY: usize = 256 * 1024;

/// The metadata URLs of `issuer`, in the order tried: OIDC discovery
/// (`{issuer}/.well-known/openid-configuration`), RFC 8414
/// (`/.well-known/oauth-authorization-server` inserted before the issuer's path), then OIDC with
/// the same insertion (the MCP authorization spec's list for issuers with a path).
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut urls = Vec::with_capacity(3);
    let mut at = |p: String| {
        let mut u = issuer.clone();
        u.set_path(&p);
        u.set_query(None);
        if !urls.contains(&u) {
            urls.push(u);
        }
    };
    at(format!("{path}/.well-known/openid-configuration"));
    at(format!("/.well-known/oauth-authorization-server{path}"));
    if !path.is_empty() {
        at(format!("/.well-known/openid-configuration{path}"));
    }
    urls
}

/// The `jwks_uri` of `issuer`, from the first metadata document found whose `issuer` is the
/// configured one.
pub(crate) async fn jwks_uri(http: &reqwest::Client, issuer: &str) -> Result<Url, String> {
    let parsed = Url::parse(issuer).map_err(|e| format!("issuer `{issuer}`: {e}"))?;
    let mut tried = Vec::new();
    for url in metadata_urls(&parsed) {
        let doc = match get_json(http, &url).await {
            Ok(doc) => doc,
            Err(e) => {
                tried.push(format!("{url}: {e}"));
                continue;
            }
        };
        let named = doc.get("issuer").and_then(Value::as_str);
        if named != Some(issuer) {
            // RFC 8414 §3.3, OIDC Discovery §4.3: a mismatch may be an impersonation.
            return Err(format!(
                "the metadata at {url} names the issuer {}, not `{issuer}` as configured; fix \
                 `auth.issuer` (it must match exactly, trailing `/` included)",
                named.map_or_else(|| "nowhere".to_string(), |n| format!("`{n}`"))
            ));
        }
        let Some(jwks) = doc.get("jwks_uri").and_then(Value::as_str) else {
            return Err(format!("the metadata at {url} has no `jwks_uri`"));
        };
        let jwks = Url::parse(jwks).map_err(|e| format!("`jwks_uri` `{jwks}` at {url}: {e}"))?;
        if jwks.scheme() != "https" && !(jwks.scheme() == "http" && is_loopback(&jwks)) {
            return Err(format!("`jwks_uri` `{jwks}` at {url} is not https"));
        }
        return Ok(jwks);
    }
    Err(format!(
        "no authorization server metadata found for `{issuer}` (tried {})",
        tried.join("; ")
    ))
}

/// GET `url` as JSON: a 2xx answer, at most [`MAX_BODY`] bytes.
pub(crate) async fn get_json(http: &reqwest::Client, url: &Url) -> Result<Value, String> {
    let mut response = http
        .get(url.clone())
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("cannot reach it ({e})"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("answered HTTP {status}"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the answer broke off ({e})"))?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("the answer is larger than {} KiB", MAX_BODY / 1024));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("the answer is not JSON ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(issuer: &str) -> Vec<String> {
        metadata_urls(&Url::parse(issuer).unwrap())
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn metadata_urls_follow_oidc_then_rfc8414() {
        assert_eq!(
            urls("https://idp.example.com"),
            [
                "https://idp.example.com/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/oauth-authorization-server",
            ]
        );
        assert_eq!(
            urls("https://idp.example.com/tenant1/"),
            [
                "https://idp.example.com/tenant1/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://idp.example.com/.well-known/openid-configuration/tenant1",
            ]
        );
    }
}
