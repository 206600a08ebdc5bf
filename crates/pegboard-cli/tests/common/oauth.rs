//! OAuth test helpers: third-party servers with real authorization servers, and a headless
//! login (the test plays the browser: it follows the printed authorization URL over HTTP).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use super::{collect_lines, installed, pegboard, test_deps};

/// rustls' provider for this test process's HTTP clients (reqwest is built without one).
pub fn install_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Start `command` with stdout and stderr piped, killed when dropped, and wait (60 s at most)
/// until its output has a line containing each of `ready`: the child and its output so far and
/// to come.
pub async fn spawn_ready(
    mut command: Command,
    ready: &[&str],
) -> Result<(Child, tokio::sync::watch::Receiver<Vec<String>>)> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn")?;
    let out = collect_lines(child.stdout.take().context("stdout")?);
    let err = collect_lines(child.stderr.take().context("stderr")?);
    // One view of both streams.
    let (tx, lines) = tokio::sync::watch::channel(Vec::new());
    for mut stream in [out, err] {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut seen = 0;
            loop {
                let new: Vec<String> = stream.borrow_and_update()[seen..].to_vec();
                seen += new.len();
                tx.send_modify(|all| all.extend(new));
                if stream.changed().await.is_err() {
                    return;
                }
            }
        });
    }
    let mut waiting = lines.clone();
    let all_ready = tokio::time::timeout(
        Duration::from_secs(60),
        waiting.wait_for(|lines| ready.iter().all(|r| lines.iter().any(|l| l.contains(r)))),
    )
    .await;
    if !matches!(all_ready, Ok(Ok(_))) {
        bail!(
            "not ready ({ready:?}); its output:\n{}",
            lines.borrow().join("\n")
        );
    }
    Ok((child, lines))
}

/// The TypeScript SDK's example server with its demo authorization server
/// (`simpleStreamableHttp.js --oauth`): dynamic registration, PKCE, approves at once, no
/// refresh tokens. The child and the MCP URL (`http://localhost:PORT/mcp`, as the server names
/// itself in its metadata).
pub async fn ts_oauth_server() -> Result<(Child, String)> {
    install_tls();
    let script = installed(
        test_deps()
            .join("node/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"),
    );
    let (mcp, auth) = (free_port(), free_port());
    let mut command = Command::new("node");
    command
        .arg(script)
        .arg("--oauth")
        .env("MCP_PORT", mcp.to_string())
        .env("MCP_AUTH_PORT", auth.to_string());
    let (child, _) = spawn_ready(
        command,
        &[
            "OAuth Authorization Server listening",
            "MCP Streamable HTTP Server listening",
        ],
    )
    .await?;
    Ok((child, format!("http://localhost:{mcp}/mcp")))
}

/// A config in `dir` with one `url` server `name` (credentials in a file, the redirect on a
/// free port).
pub fn oauth_config(dir: &Path, servers: &[(&str, &str)]) -> Result<std::path::PathBuf> {
    let mut entries = serde_json::Map::new();
    for (name, url) in servers {
        entries.insert(
            name.to_string(),
            serde_json::json!({"url": url, "oauth": {"redirectPort": free_port()}}),
        );
    }
    let config = serde_json::json!({"credentials": "file", "mcpServers": entries});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// `pegboard ARGS --config CONFIG` with the credential store in `data`.
pub fn pegboard_cmd(config: &Path, data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(pegboard());
    command
        .args(args)
        .arg("--config")
        .arg(config)
        .env("XDG_DATA_HOME", data)
        .env_remove("RUST_LOG")
        .kill_on_drop(true);
    command
}

/// Run a pegboard command to its end (60 s at most): exit code, stdout, stderr.
pub async fn run(mut command: Command) -> Result<(i32, String, String)> {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        command.stdin(Stdio::null()).output(),
    )
    .await
    .context("the command did not end within 60 s")??;
    Ok((
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// An HTTP client that plays the user's browser: follows redirects, keeps cookies.
pub fn browser() -> reqwest::Client {
    install_tls();
    reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .expect("an HTTP client")
}

/// `pegboard login NAME --no-browser` with the test as the browser: waits for the printed
/// authorization URL, follows it to the redirect listener's page, then waits for the command to
/// end. Returns the command's stderr; fails unless it exited 0.
pub async fn headless_login(
    config: &Path,
    data: &Path,
    name: &str,
    verbose: bool,
) -> Result<String> {
    headless_login_with(config, data, name, verbose, &[]).await
}

/// [`headless_login`] with more environment variables for `pegboard login`.
pub async fn headless_login_with(
    config: &Path,
    data: &Path,
    name: &str,
    verbose: bool,
    env: &[(&str, &str)],
) -> Result<String> {
    let mut args = vec!["login", name, "--no-browser"];
    if verbose {
        args.insert(0, "-vv");
    }
    let mut child = pegboard_cmd(config, data, &args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().context("stderr")?).lines();
    let mut seen = Vec::new();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await? {
            seen.push(line.clone());
            if let Some(at) = line.find("to log in, open ") {
                return Ok(line[at + "to log in, open ".len()..].trim().to_string());
            }
        }
        bail!(
            "`pegboard login` ended without printing a URL:\n{}",
            seen.join("\n")
        )
    })
    .await
    .context("no authorization URL printed")??;
    let page = browser().get(&url).send().await?;
    let status = page.status();
    let body = page.text().await?;
    anyhow::ensure!(
        status.is_success() && body.contains("PegBoard got the login"),
        "the redirect listener answered {status}: {body}"
    );
    let rest = tokio::time::timeout(Duration::from_secs(60), async {
        let mut rest = Vec::new();
        while let Some(line) = lines.next_line().await? {
            rest.push(line);
        }
        anyhow::Ok(rest)
    })
    .await
    .context("`pegboard login` did not end")??;
    seen.extend(rest);
    let status = child.wait().await?;
    let stderr = seen.join("\n");
    anyhow::ensure!(status.success(), "`pegboard login` failed:\n{stderr}");
    Ok(stderr)
}

/// The stored record of the only server in `data`'s credential file.
pub fn stored(data: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(data.join("pegboard/credentials.json"))?;
    Ok(serde_json::from_str(&text)?)
}

/// Every access and refresh token in `data`'s credential file.
pub fn stored_tokens(data: &Path) -> Result<Vec<String>> {
    let file = stored(data)?;
    let mut tokens = Vec::new();
    for record in file["entries"].as_object().context("entries")?.values() {
        let response = &record["tokens"]["token_response"];
        for key in ["access_token", "refresh_token"] {
            if let Some(t) = response[key].as_str() {
                tokens.push(t.to_string());
            }
        }
    }
    Ok(tokens)
}

/// `oidc-provider` as the authorization server (`tests/oauth/authorization_server.mjs`): the
/// child, its issuer URL and its output lines (it prints one per token request).
pub async fn oidc_provider() -> Result<(Child, String, tokio::sync::watch::Receiver<Vec<String>>)> {
    oidc_provider_with(&[]).await
}

/// [`oidc_provider`] with more environment variables (`STATIC_REDIRECT`).
pub async fn oidc_provider_with(
    env: &[(&str, &str)],
) -> Result<(Child, String, tokio::sync::watch::Receiver<Vec<String>>)> {
    install_tls();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/authorization_server.mjs");
    let package = installed(test_deps().join("node/node_modules/oidc-provider/lib/index.js"));
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(script)
        .env("AS_PORT", port.to_string())
        .env("OIDC_PROVIDER", package)
        .envs(env.iter().copied());
    let (child, lines) = spawn_ready(command, &["authorization server listening"]).await?;
    Ok((child, format!("http://127.0.0.1:{port}"), lines))
}

/// A resource server named `name` (`tests/oauth/resource_server.py`, the Python SDK's auth
/// support, verifying tokens by introspection at `issuer`): the child and its MCP URL.
pub async fn resource_server(name: &str, issuer: &str) -> Result<(Child, String)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/resource_server.py");
    let python = installed(test_deps().join("venv/bin/python"));
    let port = free_port();
    let mut command = Command::new(python);
    command
        .arg(script)
        .env("RS_PORT", port.to_string())
        .env("RS_NAME", name)
        .env("AS_URL", issuer);
    let (child, _) = spawn_ready(command, &["Uvicorn running on"]).await?;
    Ok((child, format!("http://127.0.0.1:{port}/mcp")))
}
