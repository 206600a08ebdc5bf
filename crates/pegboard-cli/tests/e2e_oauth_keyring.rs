//! Credentials in the OS keyring: gnome-keyring's Secret Service on a private D-Bus session
//! (Debian's `gnome-keyring` and `dbus`, installed by `.ci/run`), with the TypeScript SDK's
//! example server and its demo authorization server.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use common::oauth::{free_port, headless_login_with, pegboard_cmd, run, ts_oauth_server};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

/// A D-Bus session bus with gnome-keyring's Secret Service, its login keyring unlocked: the
/// session (it ends when its stdin closes) and the bus address.
async fn secret_service(home: &Path) -> Result<(Child, String)> {
    let mut session = Command::new("dbus-run-session")
        .args([
            "--",
            "sh",
            "-c",
            r#"eval "$(printf 'test\n' | gnome-keyring-daemon --unlock --components=secrets)" && echo "READY $DBUS_SESSION_BUS_ADDRESS" && exec cat >/dev/null"#,
        ])
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("dbus-run-session (Debian packages dbus and gnome-keyring; .ci/run installs them)")?;
    let mut lines = tokio::io::BufReader::new(session.stdout.take().context("stdout")?).lines();
    let address = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(address) = line.strip_prefix("READY ") {
                return Ok(address.to_string());
            }
        }
        bail!("the D-Bus session ended before gnome-keyring was ready")
    })
    .await
    .context("gnome-keyring did not start")??;
    Ok((session, address))
}

/// End the session: its `cat` sees the end of its stdin, `dbus-run-session` stops the bus.
async fn end(mut session: Child) -> Result<()> {
    drop(session.stdin.take());
    tokio::time::timeout(Duration::from_secs(30), session.wait()).await??;
    Ok(())
}

#[tokio::test]
async fn credentials_go_to_the_keyring_when_one_answers() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let (session, bus) = secret_service(&home).await?;
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.as_str())];
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        serde_json::json!({"credentials": "keyring", "mcpServers": {
            "demo": {"url": url, "oauth": {"redirectPort": free_port()}}}})
        .to_string(),
    )?;

    let said = headless_login_with(&config, &data, "demo", false, &env).await?;
    assert!(said.contains("(stored in the OS keyring)"), "{said}");
    assert!(
        !data.join("pegboard/credentials.json").exists(),
        "a credential file was written beside the keyring"
    );
    let mut call = pegboard_cmd(&config, &data, &["call", "demo-greet", r#"{"name":"Kay"}"#]);
    call.envs(env);
    let (code, out, err) = run(call).await?;
    assert_eq!((code, out.trim()), (0, "Hello, Kay!"), "{err}");

    let mut logout = pegboard_cmd(&config, &data, &["logout", "demo"]);
    logout.envs(env);
    let (code, _, err) = run(logout).await?;
    assert_eq!(code, 0, "{err}");
    let mut auth = pegboard_cmd(&config, &data, &["auth"]);
    auth.envs(env);
    let (_, out, _) = run(auth).await?;
    assert!(out.contains("demo: needs login (logged out)"), "{out}");
    end(session).await
}

#[tokio::test]
async fn a_keyring_that_does_not_answer_is_a_clear_error_or_the_file() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let nobody = format!("unix:path={}", dir.path().join("no-bus").display());
    let env = [("DBUS_SESSION_BUS_ADDRESS", nobody.as_str())];
    for (backend, expect_file) in [("keyring", false), ("auto", true)] {
        let config = dir.path().join(format!("{backend}.json"));
        let mut servers = serde_json::json!({"mcpServers": {
            "demo": {"url": url, "oauth": {"redirectPort": free_port()}}}});
        if backend != "auto" {
            servers["credentials"] = backend.into();
        }
        std::fs::write(&config, servers.to_string())?;
        if expect_file {
            let said = headless_login_with(&config, &data, "demo", false, &env).await?;
            assert!(said.contains("credentials.json"), "{said}");
            assert!(data.join("pegboard/credentials.json").exists());
        } else {
            let mut login = pegboard_cmd(&config, &data, &["login", "demo", "--no-browser"]);
            login.envs(env);
            let (code, _, err) = run(login).await?;
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("the OS keyring is not available"), "{err}");
            assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
        }
    }
    Ok(())
}
