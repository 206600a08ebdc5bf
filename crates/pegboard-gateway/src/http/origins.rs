//! The `Origin` allowlist, handed to rmcp.
//!
//! rmcp's streamable HTTP server checks `Origin` itself (`StreamableHttpServerConfig::
//! allowed_origins`, RFC 6454 tuples, `:*` for any port, `null`). What PegBoard adds on top:
//! - loopback origins (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port) allowed by default,
//!   and validation enforced even when the user allows nothing else;
//! - `--allow-origin` checked at startup with an error that says how to write one (rmcp skips an
//!   entry it cannot parse without a word), and `*` to turn the check off;
//! - an entry without a port means the scheme's default port (rmcp today lets such an entry match
//!   any port, a behaviour it has deprecated): `https://app.example.com` allows `:443` only;
//! - a 403 that tells the user which flag lets the origin in (see the guard in `mod.rs`).

use url::Url;

/// The loopback origins a local client (the MCP Inspector, a local web app) may come from.
const LOOPBACK: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// What rmcp should check: `None` when `*` allows any origin, else the allowed origins.
///
/// # Errors
/// When an entry is not an origin, naming it and how to write one.
pub(crate) fn allowed(extra: &[String]) -> anyhow::Result<Option<Vec<String>>> {
    let mut allowed: Vec<String> = LOOPBACK.map(String::from).to_vec();
    for entry in extra {
        match entry.trim() {
            "*" => return Ok(None),
            "null" => allowed.push("null".into()),
            other => allowed.push(normalise(other).ok_or_else(|| {
                anyhow::anyhow!(
                    "--allow-origin `{entry}` is not an origin; write scheme://host[:port], e.g. \
                     https://app.example.com or http://myhost:* (any port), or `null`, or `*` (any origin)"
                )
            })?),
        }
    }
    Ok(Some(allowed))
}

/// `scheme://host[:port|:*]` with the port made explicit, or `None` when `entry` is no origin.
fn normalise(entry: &str) -> Option<String> {
    let (base, any_port) = match entry.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (entry, false),
    };
    let url = Url::parse(base).ok()?;
    let host = url.host_str()?;
    let bare = url.path() == "/" && !base.ends_with('/');
    if !matches!(url.scheme(), "http" | "https")
        || !bare
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || (any_port && url.port().is_some())
    {
        return None;
    }
    let port = if any_port {
        "*".to_string()
    } else {
        url.port_or_known_default()?.to_string()
    };
    Some(format!("{}://{host}:{port}", url.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_normalised_or_refused() {
        assert_eq!(
            normalise("https://App.Example.com").as_deref(),
            Some("https://app.example.com:443")
        );
        assert_eq!(
            normalise("http://dev.lan:*").as_deref(),
            Some("http://dev.lan:*")
        );
        assert_eq!(
            normalise("http://[::1]:8080").as_deref(),
            Some("http://[::1]:8080")
        );
        for bad in [
            "example.com",
            "http://a/b",
            "ftp://a",
            "http://a:1:*",
            "http://a/",
            "garbage",
        ] {
            assert_eq!(normalise(bad), None, "{bad}");
        }
        assert_eq!(allowed(&["*".into()]).ok(), Some(None));
        assert!(allowed(&["example.com".into()]).is_err());
    }
}
