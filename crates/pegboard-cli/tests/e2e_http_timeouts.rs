//! The HTTP front's read timeouts: a client that never finishes its headers (slowloris) is
//! disconnected, and a request whose body goes quiet is answered instead of held forever.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Far longer than the 1 s timeouts under test: only a gateway that never times out hits it.
const OUTER: Duration = Duration::from_secs(20);

/// `pegboard serve --http 127.0.0.1:0 --header-timeout 1 --body-timeout 1` on the demo config.
async fn gateway(dir: &std::path::Path) -> Result<(tokio::process::Child, String)> {
    let extra = ["--header-timeout", "1", "--body-timeout", "1"];
    let (child, url) = common::serve_http(&common::write_demo_config(dir), &extra, &[]).await?;
    Ok((child, common::host_port(&url)))
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path()).await?;
    let mut tcp = TcpStream::connect(&addr).await?;
    tcp.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await?;
    // The gateway closes the connection (maybe after a 408); it never waits for the rest.
    let mut rest = Vec::new();
    tokio::time::timeout(OUTER, tcp.read_to_end(&mut rest))
        .await
        .context("the half-sent request was held open past the header timeout")??;
    Ok(())
}

#[tokio::test]
async fn a_body_that_goes_quiet_gets_an_answer() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path()).await?;
    let mut tcp = TcpStream::connect(&addr).await?;
    tcp.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
    )
    .await?;
    let mut head = BufReader::new(tcp);
    let mut status = String::new();
    tokio::time::timeout(OUTER, head.read_line(&mut status))
        .await
        .context("the stalled body was waited on past the body timeout")??;
    // The same answer as a session's request gets (one judge of bodies for both ways).
    assert!(status.starts_with("HTTP/1.1 408 "), "{status}");
    Ok(())
}

#[tokio::test]
async fn a_session_request_whose_body_goes_quiet_gets_408() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path()).await?;
    // reqwest is built without a crypto provider in this workspace (rustls with ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |body: &str| {
        http.post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
    };
    let init = post(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .send()
    .await?;
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .context("a session id")?
        .to_string();
    init.text().await?;
    post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await?;

    // A call of the open session (one the lane could take) whose body stops after a few bytes.
    let mut tcp = TcpStream::connect(&addr).await?;
    tcp.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
        )
        .as_bytes(),
    )
    .await?;
    let mut answer = String::new();
    tokio::time::timeout(OUTER, BufReader::new(tcp).read_to_string(&mut answer))
        .await
        .context("the stalled body was waited on past the body timeout")??;
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("stopped arriving"), "{answer}");
    Ok(())
}
