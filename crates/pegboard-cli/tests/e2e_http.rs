//! `pegboard serve --http` with a token, driven by rmcp's streamable HTTP client; SIGTERM ends it cleanly.

mod common;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// Start `pegboard serve --http 127.0.0.1:0 EXTRA..` on the demo config; returns the child and its URL.
async fn spawn(dir: &std::path::Path, extra: &[&str]) -> Result<(tokio::process::Child, String)> {
    common::serve_http(&common::write_demo_config(dir), extra, &[]).await
}

/// rmcp's default HTTP client uses reqwest's rustls without a built-in crypto provider here (the
/// workspace builds rustls with ring, not aws-lc): install ring's before making a client.
fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[tokio::test]
async fn serve_http_with_token_lists_calls_and_stops_on_sigterm() -> Result<()> {
    tls();
    let dir = tempfile::tempdir()?;
    let (mut child, url) = spawn(dir.path(), &["--token", "s3cret"]).await?;

    // Without the token: the handshake is refused.
    let refused = tokio::time::timeout(
        Duration::from_secs(10),
        ().into_dyn()
            .serve(StreamableHttpClientTransport::from_uri(url.as_str())),
    )
    .await?;
    assert!(refused.is_err(), "a client without the token got in");

    let cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header("s3cret");
    let client = ().into_dyn().serve(StreamableHttpClientTransport::from_config(cfg)).await?;
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"notes-search") && names.contains(&"units-convert"),
        "{names:?}"
    );
    let Value::Object(args) = json!({"value": 2, "from": "kg", "to": "g"}) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("units-convert").with_arguments(args))
        .await?;
    let text = common::first_text(&result);
    assert_eq!(text, "2 kg = 2000 g");

    let started = Instant::now();
    let status = common::terminate(&mut child).await?;
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown took {:?}",
        started.elapsed()
    );
    drop(client);
    Ok(())
}

/// A supervisor's log pipe can close before the gateway does. With nobody reading its stderr,
/// the gateway still answers, and SIGTERM still stops it cleanly: its log lines are dropped,
/// not a panic in the task that logs (before, the one that stops on SIGTERM died, and the
/// gateway never stopped).
#[tokio::test]
async fn with_stderr_closed_it_still_answers_and_stops_on_sigterm() -> Result<()> {
    tls();
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let (mut child, url, stderr) = common::serve_http_unread(&config, &[], &[]).await?;
    // Nobody reads its stderr from here on.
    drop(stderr);

    // Each step is bounded: before, a request whose handling logged a line was never answered.
    let within = Duration::from_secs(30);
    let client = tokio::time::timeout(
        within,
        ().into_dyn()
            .serve(StreamableHttpClientTransport::from_uri(url.as_str())),
    )
    .await
    .context("no handshake")??;
    let Value::Object(args) = json!({"value": 3, "from": "km", "to": "m"}) else {
        unreachable!()
    };
    let call = CallToolRequestParams::new("units-convert").with_arguments(args);
    let result = tokio::time::timeout(within, client.call_tool(call))
        .await
        .context("no answer to a call")??;
    assert_eq!(common::first_text(&result), "3 km = 3000 m");
    // A call that fails: the gateway logs it (a line nobody reads).
    let unknown = tokio::time::timeout(
        within,
        client.call_tool(CallToolRequestParams::new("no-such-tool")),
    )
    .await
    .context("no answer to a call of an unknown tool")?;
    assert!(unknown.is_err(), "{unknown:?}");

    let status = common::terminate(&mut child).await?;
    assert!(status.success(), "{status}");
    drop(client);
    Ok(())
}

#[tokio::test]
async fn serve_http_stateless_answers_without_sessions() -> Result<()> {
    tls();
    let dir = tempfile::tempdir()?;
    let (_child, url) = spawn(dir.path(), &["--stateless"]).await?;
    let client = ().into_dyn().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await?;
    let tools = client.list_all_tools().await?;
    assert!(tools.iter().any(|t| t.name == "units-convert"));
    let Value::Object(args) = json!({"value": 1, "from": "ft", "to": "in"}) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("units-convert").with_arguments(args))
        .await?;
    let text = common::first_text(&result);
    assert_eq!(text, "1 ft = 12 in");
    Ok(())
}
