//! HTTP sessions: at `--max-sessions` the least recently used idle session is closed for a new
//! one, and a new session is refused with 503 and Retry-After only when every session is busy
//! (existing sessions keep working); a session the client ends, or that stays idle, frees its
//! place. With named clients, each holds at most its `maxSessions` (default: a fair share of
//! `--max-sessions`): one that opens 1,000 sessions and abandons them recycles its own and never
//! locks another out.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(20);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cap-test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

/// The head of one HTTP/1.1 request (`Connection: close`) with `body`.
fn head(method: &str, session: Option<&str>, token: Option<&str>, body: &str) -> String {
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let token = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}{token}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// One request on its own connection; the whole answer.
async fn request(addr: &str, method: &str, session: Option<&str>, body: &str) -> Result<String> {
    request_as(addr, None, method, session, body).await
}

/// [`request`] with `token` as the bearer token.
async fn request_as(
    addr: &str,
    token: Option<&str>,
    method: &str,
    session: Option<&str>,
    body: &str,
) -> Result<String> {
    let mut tcp = TcpStream::connect(addr).await?;
    tcp.write_all(head(method, session, token, body).as_bytes())
        .await?;
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut answer))
        .await
        .context("no complete answer")??;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// Open a session (initialize, then initialized) as `token`; its id.
async fn open_session(addr: &str, token: Option<&str>) -> Result<String> {
    let answer = request_as(addr, token, "POST", None, INITIALIZE).await?;
    anyhow::ensure!(status(&answer) == "200", "initialize: {answer}");
    let id = header(&answer, "mcp-session-id")
        .context("no session id")?
        .to_string();
    let done = request_as(addr, token, "POST", Some(&id), INITIALIZED).await?;
    anyhow::ensure!(status(&done) == "202", "initialized: {done}");
    Ok(id)
}

/// The session's `GET` event stream, open (its status line and headers read): the session is
/// busy while it is.
async fn open_stream(addr: &str, session: &str) -> Result<TcpStream> {
    open_stream_as(addr, None, session).await
}

/// [`open_stream`] with `token` as the bearer token.
async fn open_stream_as(addr: &str, token: Option<&str>, session: &str) -> Result<TcpStream> {
    let mut tcp = TcpStream::connect(addr).await?;
    let token = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n{token}\r\n"
    );
    tcp.write_all(get.as_bytes()).await?;
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(WAIT, tcp.read(&mut byte))
            .await
            .context("no stream headers")??;
        anyhow::ensure!(
            n == 1,
            "the stream closed: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&seen);
    anyhow::ensure!(status(&text) == "200", "GET stream: {text}");
    Ok(tcp)
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
async fn at_the_cap_the_least_recently_used_idle_session_is_closed_for_a_new_one() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path(), &["--max-sessions", "2"]).await?;
    let addr = addr.as_str();
    let first = open_session(addr, None).await?;
    let second = open_session(addr, None).await?;
    // The first was used last: the second is the least recently used.
    let answer = request(addr, "POST", Some(&first), PING).await?;
    assert_eq!(status(&answer), "200", "{answer}");

    let third = open_session(addr, None).await?;
    let gone = request(addr, "POST", Some(&second), PING).await?;
    assert_eq!(
        status(&gone),
        "404",
        "the least recently used session must be closed: {gone}"
    );
    for id in [&first, &third] {
        let answer = request(addr, "POST", Some(id), PING).await?;
        assert_eq!(status(&answer), "200", "{answer}");
    }
    Ok(())
}

#[tokio::test]
async fn at_the_cap_with_every_session_busy_a_new_one_gets_503_and_an_ended_one_frees_its_place()
-> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = gateway(dir.path(), &["--max-sessions", "2"]).await?;
    let addr = addr.as_str();
    let mut ids = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..2 {
        let id = open_session(addr, None).await?;
        // A client listening on its GET stream is busy: never closed to make room.
        streams.push(open_stream(addr, &id).await?);
        ids.push(id);
    }
    let refused = request(addr, "POST", None, INITIALIZE).await?;
    assert_eq!(status(&refused), "503", "{refused}");
    assert!(header(&refused, "retry-after").is_some(), "{refused}");
    assert!(refused.contains("--max-sessions"), "{refused}");

    // An existing session still works over the cap.
    let answer = request(addr, "POST", Some(&ids[0]), PING).await?;
    assert!(status(&answer).starts_with('2'), "{answer}");

    // Ending a session frees its place at once.
    let ended = request(addr, "DELETE", Some(&ids[1]), "").await?;
    assert!(status(&ended).starts_with('2'), "{ended}");
    let answer = request(addr, "POST", None, INITIALIZE).await?;
    assert_eq!(status(&answer), "200", "{answer}");
    drop(streams);
    Ok(())
}

/// A config of the demo servers with two clients, `greedy` (`greedy_max`: its `maxSessions`,
/// `None`: the fair share) and `polite`, by static token.
fn two_clients(dir: &std::path::Path, greedy_max: Option<u64>) -> Result<std::path::PathBuf> {
    let mut greedy = json!({ "token": "${GREEDY_TOKEN}" });
    if let Some(max) = greedy_max {
        greedy["maxSessions"] = json!(max);
    }
    let config = json!({
        "mcpServers": { "units": common::demo_server("units", &[]) },
        "clients": { "greedy": greedy, "polite": { "token": "${POLITE_TOKEN}" } }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

const GREEDY: &str = "greedy-token-0123456789abcdef";
const POLITE: &str = "polite-token-0123456789abcdef";

/// `pegboard serve --http` on [`two_clients`] with `extra` arguments: the child and HOST:PORT.
async fn serve_two_clients(
    dir: &std::path::Path,
    greedy_max: Option<u64>,
    extra: &[&str],
) -> Result<(tokio::process::Child, String)> {
    let config = two_clients(dir, greedy_max)?;
    let env = [("GREEDY_TOKEN", GREEDY), ("POLITE_TOKEN", POLITE)];
    let (child, url) = common::serve_http(&config, extra, &env).await?;
    Ok((child, common::host_port(&url)))
}

/// `count` sessions opened by `initialize` alone and abandoned (never deleted, never used),
/// as a new user's script would; every one is answered 200. Their ids, in order.
async fn abandon(addr: &str, token: &str, count: usize) -> Result<Vec<String>> {
    let mut ids = Vec::with_capacity(count);
    for i in 0..count {
        let answer = request_as(addr, Some(token), "POST", None, INITIALIZE).await?;
        anyhow::ensure!(status(&answer) == "200", "session {i}: {answer}");
        ids.push(
            header(&answer, "mcp-session-id")
                .context("no id")?
                .to_string(),
        );
    }
    Ok(ids)
}

#[tokio::test]
async fn one_client_abandoning_a_thousand_sessions_never_locks_another_out() -> Result<()> {
    let dir = tempfile::tempdir()?;
    // --max-sessions 1000 by default: each of the two clients may hold 500.
    let (_child, addr) = serve_two_clients(dir.path(), None, &[]).await?;
    let addr = addr.as_str();
    let greedy = abandon(addr, GREEDY, 1000).await?;
    // It recycled its own: its first sessions are gone, its last ones open.
    let first = request_as(addr, Some(GREEDY), "POST", Some(&greedy[0]), PING).await?;
    assert_eq!(status(&first), "404", "{first}");
    let last = request_as(addr, Some(GREEDY), "POST", Some(&greedy[999]), PING).await?;
    assert_eq!(status(&last), "200", "{last}");
    // The other client opens a session and uses it.
    let polite = open_session(addr, Some(POLITE)).await?;
    let answer = request_as(addr, Some(POLITE), "POST", Some(&polite), PING).await?;
    assert_eq!(status(&answer), "200", "{answer}");
    Ok(())
}

#[tokio::test]
async fn at_the_global_cap_another_clients_idle_session_makes_room() -> Result<()> {
    let dir = tempfile::tempdir()?;
    // `greedy` may hold as many as the gateway: only the global cap stops it.
    let (_child, addr) =
        serve_two_clients(dir.path(), Some(1000), &["--max-sessions", "10"]).await?;
    let addr = addr.as_str();
    let greedy = abandon(addr, GREEDY, 10).await?;
    let polite = open_session(addr, Some(POLITE)).await?;
    let answer = request_as(addr, Some(POLITE), "POST", Some(&polite), PING).await?;
    assert_eq!(status(&answer), "200", "{answer}");
    // The room was made by greedy's least recently used session.
    let gone = request_as(addr, Some(GREEDY), "POST", Some(&greedy[0]), PING).await?;
    assert_eq!(status(&gone), "404", "{gone}");
    Ok(())
}

#[tokio::test]
async fn a_client_whose_sessions_are_all_busy_is_refused_naming_its_limit() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (_child, addr) = serve_two_clients(dir.path(), Some(1), &[]).await?;
    let addr = addr.as_str();
    let id = open_session(addr, Some(GREEDY)).await?;
    let _stream = open_stream_as(addr, Some(GREEDY), &id).await?;
    let refused = request_as(addr, Some(GREEDY), "POST", None, INITIALIZE).await?;
    assert_eq!(status(&refused), "429", "{refused}");
    assert!(header(&refused, "retry-after").is_some(), "{refused}");
    assert!(
        refused.contains("client `greedy`") && refused.contains("`maxSessions`"),
        "{refused}"
    );
    // Another client is not affected.
    open_session(addr, Some(POLITE)).await?;
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
