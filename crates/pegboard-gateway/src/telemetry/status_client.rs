//! Reading a running gateway's status (`pegboard status`).

use std::time::Duration;

use super::error::TelemetryError;
use super::listener::DEFAULT_PORT;
use super::status::StatusReport;

/// Where `pegboard status` looks by default.
#[must_use]
pub fn default_url() -> String {
    format!("http://127.0.0.1:{DEFAULT_PORT}")
}

/// GET `{base}/status` as JSON (with `Authorization: Bearer token` when given).
///
/// # Errors
/// The gateway cannot be reached, refuses (401: the token), or answers something else than the
/// status.
pub async fn fetch_status(base: &str, token: Option<&str>) -> Result<StatusReport, TelemetryError> {
    let base = base.trim_end_matches('/');
    let url = if base.ends_with("/status") {
        base.to_string()
    } else {
        format!("{base}/status")
    };
    let fail = |reason: String| TelemetryError::Fetch {
        url: url.clone(),
        reason,
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let mut request = client.get(&url).header("accept", "application/json");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| {
        if e.is_connect() {
            fail("nothing answers there; is `pegboard serve --metrics ADDR` running?".into())
        } else {
            fail(e.to_string())
        }
    })?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(fail(
            "401: the gateway wants its bearer token (--token or PEGBOARD_TOKEN)".into(),
        ));
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {status}")));
    }
    let body = response.bytes().await.map_err(|e| fail(e.to_string()))?;
    serde_json::from_slice(&body).map_err(|e| fail(format!("not a PegBoard status: {e}")))
}
