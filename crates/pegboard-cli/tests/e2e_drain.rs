//! Probes and drain of `pegboard serve --http`: `/healthz` and `/readyz` answered without a
//! token, and on SIGTERM a drain that loses no call: `/readyz` turns 503, a new session is sent
//! elsewhere (503 with `Retry-After`), a session held here is served on, a call in flight
//! finishes, and only then does the gateway exit 0; a drain that runs out of time ends what is
//! left and exits 0 too.
//!
//! The call in flight is held open by the test itself, not by a timer: the test server's `ask`
//! tool asks the client for input during the call, and the test's client answers only when the
//! test lets it (`common::latched`).

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::latched::{Latched, ask_config, call_ask};
use rmcp::{ServiceExt, model::CallToolRequestParams, transport::StreamableHttpClientTransport};
use serde_json::json;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(30);
const TOKEN: &str = "drain-test-token-0123456789";

fn authorized(url: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url)
            .auth_header(TOKEN),
    )
}

/// The base URL (`http://ADDR`) of a gateway serving at `http://ADDR/mcp`.
fn base(url: &str) -> String {
    url.trim_end_matches("/mcp").to_string()
}

async fn probe(http: &reqwest::Client, url: &str) -> Result<(u16, String)> {
    let response = http.get(url).send().await?;
    Ok((response.status().as_u16(), response.text().await?))
}

#[tokio::test]
async fn a_sigterm_drains_the_calls_in_flight_and_sends_new_sessions_elsewhere() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let config = ask_config(dir.path())?;
    let (mut child, url, mut lines) =
        common::serve_http_logged(&config, &["--drain", "60", "--token", TOKEN], &[]).await?;
    common::wait_for_line(&mut lines, "from 1 server").await?;
    let http = reqwest::Client::new();
    let root = base(&url);

    // The probes need no token and say only their state.
    assert_eq!(
        probe(&http, &format!("{root}/healthz")).await?,
        (200, "ok\n".into())
    );
    assert_eq!(
        probe(&http, &format!("{root}/readyz")).await?,
        (200, "ready\n".into())
    );

    // Two sessions: one whose call will be in flight at SIGTERM, one that calls during the drain.
    let (asked_tx, mut asked) = mpsc::channel(1);
    let latched =
        tokio::time::timeout(WAIT, Latched { asked: asked_tx }.serve(authorized(&url))).await??;
    let other = tokio::time::timeout(WAIT, ().serve(authorized(&url))).await??;
    let in_flight = call_ask(latched);
    let release = tokio::time::timeout(WAIT, asked.recv())
        .await?
        .context("the call never reached its elicitation")?;

    // The call is in flight (its server waits on our answer): stop the gateway.
    let pid = child.id().context("the gateway has exited")?;
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    assert!(kill.success());
    common::wait_for_line(&mut lines, "draining").await?;

    assert_eq!(
        probe(&http, &format!("{root}/readyz")).await?,
        (503, "draining\n".into())
    );
    assert_eq!(probe(&http, &format!("{root}/healthz")).await?.0, 200);
    // A new session is sent elsewhere.
    let initialize = http
        .post(&url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "late", "version": "1"}}}),
        )
        .send()
        .await?;
    assert_eq!(initialize.status().as_u16(), 503);
    assert_eq!(
        initialize
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    // A session held here is served on.
    let echoed = tokio::time::timeout(
        WAIT,
        other.call_tool(
            CallToolRequestParams::new("t-echo")
                .with_arguments(json!({"text": "still here"}).as_object().cloned().unwrap()),
        ),
    )
    .await??;
    assert_eq!(common::first_text(&echoed), "still here", "{echoed:?}");
    assert!(
        child.try_wait()?.is_none(),
        "the gateway must wait for the call in flight"
    );

    // The call finishes, then the gateway exits by itself, cleanly.
    release
        .send(())
        .map_err(|()| anyhow::anyhow!("the client's elicitation is gone"))?;
    let result = tokio::time::timeout(WAIT, in_flight).await???;
    assert_eq!(
        common::first_text(&result),
        r#"accept {"answer":"late"}"#,
        "{result:?}"
    );
    let status = tokio::time::timeout(WAIT, child.wait()).await??;
    assert!(status.success(), "{status}");
    common::wait_for_line(&mut lines, "drained: no call in flight").await?;
    Ok(())
}

#[tokio::test]
async fn a_drain_that_runs_out_of_time_ends_the_calls_left() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let config = ask_config(dir.path())?;
    let (mut child, url, mut lines) =
        common::serve_http_logged(&config, &["--drain", "1"], &[]).await?;
    common::wait_for_line(&mut lines, "from 1 server").await?;
    let (asked_tx, mut asked) = mpsc::channel(1);
    let client = tokio::time::timeout(
        WAIT,
        Latched { asked: asked_tx }.serve(StreamableHttpClientTransport::from_uri(url.as_str())),
    )
    .await??;
    let _call = call_ask(client);
    let _never_released = tokio::time::timeout(WAIT, asked.recv())
        .await?
        .context("the call never reached its elicitation")?;
    // The drain's second runs out with the call still waiting: the gateway ends it and exits.
    let status = common::terminate(&mut child).await?;
    assert!(status.success(), "{status}");
    common::wait_for_line(&mut lines, "still in flight; ending them").await?;
    Ok(())
}
