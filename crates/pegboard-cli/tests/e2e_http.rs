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

    let pid = child.id().context("pid")?;
    let started = Instant::now();
    let kill = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()?;
    assert!(kill.success());
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .context("no exit after SIGTERM")??;
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown took {:?}",
        started.elapsed()
    );
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
