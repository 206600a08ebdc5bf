//! The real authorization and resource servers of the OAuth tests (`oidc-provider`, and an MCP
//! server built with the Python SDK's auth support; the scripts live with the CLI's OAuth tests,
//! `crates/pegboard-cli/tests/oauth/`), and a login with the test as the browser.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

pub fn test_deps() -> PathBuf {
    match std::env::var_os("PEGBOARD_TEST_DEPS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"),
    }
}

pub fn oauth_scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pegboard-cli/tests/oauth")
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Start `command` (killed when dropped) and wait until its stdout or stderr says `ready`.
pub async fn start(mut command: Command, ready: &'static str) -> Result<Child> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (tx, mut rx) = tokio::sync::mpsc::channel(2);
    tokio::spawn(watch(
        child.stdout.take().context("stdout")?,
        ready,
        tx.clone(),
    ));
    tokio::spawn(watch(child.stderr.take().context("stderr")?, ready, tx));
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .with_context(|| format!("never said {ready:?}"))?
        .context("ended before it was ready")?;
    Ok(child)
}

/// Send on `tx` when a line of `stream` contains `ready`; keep draining it.
async fn watch(
    stream: impl tokio::io::AsyncRead + Unpin,
    ready: &'static str,
    tx: tokio::sync::mpsc::Sender<()>,
) {
    let mut lines = tokio::io::BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.contains(ready) {
            let _ = tx.send(()).await;
        }
    }
}

/// `oidc-provider` on a free port: the child and its issuer URL.
pub async fn authorization_server() -> Result<(Child, String)> {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(oauth_scripts().join("authorization_server.mjs"))
        .env("AS_PORT", port.to_string())
        .env(
            "OIDC_PROVIDER",
            test_deps().join("node/node_modules/oidc-provider/lib/index.js"),
        );
    let child = start(command, "authorization server listening").await?;
    Ok((child, format!("http://127.0.0.1:{port}")))
}

/// The Python resource server `name`, trusting `issuer`: the child and its MCP URL.
pub async fn resource_server(name: &str, issuer: &str) -> Result<(Child, String)> {
    let port = free_port();
    let mut command = Command::new(test_deps().join("venv/bin/python"));
    command
        .arg(oauth_scripts().join("resource_server.py"))
        .env("RS_PORT", port.to_string())
        .env("RS_NAME", name)
        .env("AS_URL", issuer);
    let child = start(command, "Uvicorn running on").await?;
    Ok((child, format!("http://127.0.0.1:{port}/mcp")))
}

/// Open `url` as a browser would (redirects followed, cookies kept); fails unless the last page
/// answered 2xx.
pub async fn browse(url: &str) -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let page = reqwest::Client::builder()
        .cookie_store(true)
        .build()?
        .get(url)
        .send()
        .await?;
    anyhow::ensure!(page.status().is_success(), "{}", page.status());
    Ok(())
}
