//! `--max-sessions`: over the cap a new HTTP session is refused with 503 and Retry-After, existing
//! sessions keep working, and a session the client ends frees its place at once.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(20);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cap-test","version":"0"}}}"#;

/// One HTTP/1.1 request on its own connection (`Connection: close`); the whole answer.
async fn request(addr: &str, method: &str, session: Option<&str>, body: &str) -> Result<String> {
    let mut tcp = TcpStream::connect(addr).await?;
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
        .await
        .context("no complete answer")??;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

fn status(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or("")
}

fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    answer
        .split("\r\n\r\n")
        .next()?
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        })
        .map(|(_, v)| v.trim())
}

/// `pegboard serve --http 127.0.0.1:0 EXTRA..` on the demo config; the child and its HOST:PORT.
async fn gateway(dir: &std::path::Path, extra: &[&str]) -> Result<(tokio::process::Child, String)> {
    let (child, url) = common::serve_http(&common::write_demo_config(dir), extra, &[]).await?;
    Ok((child, common::host_port(&url)))
}

#[tokio::test]
async fn over_the_cap_a_new_session_gets_503_and_an_ended_one_frees_its_place() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path(), &["--max-sessions", "2"]).await?;
    let addr = addr.as_str();

    let mut ids = Vec::new();
    for _ in 0..2 {
        let answer = request(addr, "POST", None, INITIALIZE).await?;
        assert_eq!(status(&answer), "200", "{answer}");
        ids.push(
            header(&answer, "mcp-session-id")
                .context("no session id")?
                .to_string(),
        );
    }
    let refused = request(addr, "POST", None, INITIALIZE).await?;
    assert_eq!(status(&refused), "503", "{refused}");
    assert!(header(&refused, "retry-after").is_some(), "{refused}");
    assert!(refused.contains("--max-sessions"), "{refused}");

    // An existing session still works over the cap.
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let answer = request(addr, "POST", Some(&ids[0]), ping).await?;
    assert!(status(&answer).starts_with('2'), "{answer}");

    // Ending a session frees its place at once.
    let ended = request(addr, "DELETE", Some(&ids[1]), "").await?;
    assert!(status(&ended).starts_with('2'), "{ended}");
    let answer = request(addr, "POST", None, INITIALIZE).await?;
    assert_eq!(status(&answer), "200", "{answer}");
    Ok(())
}

#[tokio::test]
async fn an_idle_session_is_closed_and_frees_its_place() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, url, mut log) = common::serve_http_logged(
        &common::write_demo_config(dir.path()),
        &["--max-sessions", "1", "--session-idle", "1"],
        &[("RUST_LOG", "info,pegboard_gateway::http=debug")],
    )
    .await?;
    let addr = common::host_port(&url);
    let answer = request(&addr, "POST", None, INITIALIZE).await?;
    assert_eq!(status(&answer), "200", "{answer}");
    let id = header(&answer, "mcp-session-id")
        .context("no session id")?
        .to_string();
    // rmcp closes it after a second without a request; then its place is free.
    common::wait_for_line(&mut log, &format!("HTTP session {id} closed")).await?;
    let answer = request(&addr, "POST", None, INITIALIZE).await?;
    assert_eq!(
        status(&answer),
        "200",
        "a new session after the idle one: {answer}"
    );
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let gone = request(&addr, "POST", Some(&id), ping).await?;
    assert_eq!(
        status(&gone),
        "404",
        "the idle session must be gone: {gone}"
    );
    Ok(())
}
