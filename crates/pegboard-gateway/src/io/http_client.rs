//! The HTTP client used for upstream (`"type": "http"`) servers.
//!
//! rmcp's default client is built on reqwest's `rustls` feature, which pulls the aws-lc C library
//! into every build. Ours uses rustls with the `ring` provider (no C toolchain beyond ring's), sets
//! `TCP_NODELAY` (small JSON-RPC writes must not wait for Nagle's algorithm), and otherwise keeps rmcp's
//! defaults: no idle pool, and only same-origin 307/308 redirects (which keep method and body).

use reqwest::redirect::{Attempt, Policy};

/// Redirects followed for one request, as rmcp's default client.
const MAX_REDIRECTS: usize = 10;

/// The client for upstream streamable HTTP servers.
pub(crate) fn client() -> Result<reqwest::Client, reqwest::Error> {
    // Process-wide rustls provider; if the embedding program installed one already, that one is kept.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(0)
        .redirect(Policy::custom(same_origin))
        .build()
}

fn same_origin(attempt: Attempt) -> reqwest::redirect::Action {
    let status = attempt.status().as_u16();
    let Some(first) = attempt.previous().first() else {
        return attempt.stop();
    };
    if attempt.previous().len() > MAX_REDIRECTS {
        return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
    }
    if (status == 307 || status == 308) && attempt.url().origin() == first.origin() {
        attempt.follow()
    } else {
        attempt.stop()
    }
}
