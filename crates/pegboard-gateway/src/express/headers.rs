//! What the express lane checks of an HTTP request's headers so that it takes only what rmcp
//! would accept as it is: JSON in, JSON and SSE accepted, a Host rmcp allows (rmcp's own rule,
//! `hosts_follow_rmcps_rule`).

use axum::http::{HeaderMap, HeaderValue, header};

/// Whether a Content-Type is JSON.
pub(super) fn json_in(content_type: &HeaderValue) -> bool {
    content_type.to_str().is_ok_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Whether an Accept value lists `wanted`.
fn lists(accept: &HeaderValue, wanted: &str) -> bool {
    accept.to_str().is_ok_and(|v| {
        v.split(',').any(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case(wanted)
        })
    })
}

/// Whether any Accept header lists `wanted`.
pub(super) fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .any(|v| lists(v, wanted))
}

/// Whether one Accept value lists both JSON and SSE.
pub(super) fn accepts_alone(accept: &HeaderValue) -> bool {
    lists(accept, "application/json") && lists(accept, "text/event-stream")
}

/// An entry of rmcp's allowed Host list: a host, and the port when the entry names one.
#[derive(Debug)]
pub(super) struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    pub(super) fn new(entry: &str) -> Self {
        match entry.trim().parse::<axum::http::uri::Authority>() {
            Ok(a) => Self {
                host: bare(a.host()).to_owned(),
                port: a.port_u16(),
            },
            Err(_) => Self {
                host: bare(entry.trim()).to_owned(),
                port: None,
            },
        }
    }
}

/// A host without the brackets of an IPv6 literal.
fn bare(host: &str) -> &str {
    host.trim_matches(['[', ']'])
}

/// rmcp's Host rule: the host (and the port, when the allowed entry has one) of an entry.
pub(super) fn host_allowed(host: &str, allowed: &[AllowedHost]) -> bool {
    let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    let (host, port) = (bare(authority.host()), authority.port_u16());
    allowed.is_empty()
        || allowed
            .iter()
            .any(|a| a.host.eq_ignore_ascii_case(host) && a.port.is_none_or(|p| Some(p) == port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_follow_rmcps_rule() {
        let allowed =
            Vec::from(["localhost", "127.0.0.1", "::1", "gw.lan:8700"].map(AllowedHost::new));
        for ok in [
            "localhost:8700",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:8700",
            "gw.lan:8700",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "evil.com",
            "gw.lan:9999",
            "gw.lan",
            "127.0.0.2:8700",
            "not a host",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }
}
