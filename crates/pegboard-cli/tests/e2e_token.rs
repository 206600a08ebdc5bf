//! `pegboard serve --http` and its bearer token: a blank token refuses to start (it must never
//! silently mean "no auth"), and the servers the gateway starts do not inherit `PEGBOARD_TOKEN`.

mod common;

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// Run `pegboard serve --http 127.0.0.1:0` with `extra` args and `env`, expecting it to exit; its
/// exit status and stderr.
async fn serve_expecting_exit(
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<(std::process::ExitStatus, String)> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(common::pegboard())
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(&config)
            .args(extra)
            .env_remove("PEGBOARD_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .context("pegboard serve kept running with a blank token")??;
    Ok((
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[tokio::test]
async fn a_blank_token_refuses_to_start() -> Result<()> {
    for (extra, env) in [
        (vec!["--token", ""], vec![]),
        (vec!["--token", "  "], vec![]),
        (vec![], vec![("PEGBOARD_TOKEN", "")]),
    ] {
        let (status, stderr) = serve_expecting_exit(&extra, &env).await?;
        assert!(!status.success(), "{extra:?} {env:?}: exited {status}");
        assert!(
            stderr.contains("token is empty"),
            "{extra:?} {env:?}: {stderr}"
        );
        assert!(!stderr.contains("serving"), "it must not serve: {stderr}");
    }
    Ok(())
}

#[tokio::test]
async fn servers_do_not_inherit_the_gateway_token() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let seen = dir.path().join("seen");
    // A real server (the units demo) started through a shell that first writes down the
    // PEGBOARD_TOKEN it was given (`$VAR`, not `${VAR}`: the config expands the latter itself).
    let script = format!(
        "printf 'token:%s' \"$PEGBOARD_TOKEN\" > '{}'; exec '{}' demo-server units",
        seen.display(),
        common::pegboard().display()
    );
    let config = serde_json::json!({
        "mcpServers": { "units": { "command": "sh", "args": ["-c", script] } }
    });
    let path = dir.path().join("pegboard.json");
    std::fs::write(&path, config.to_string())?;

    let (mut child, url) = common::serve_http(&path, &[], &[("PEGBOARD_TOKEN", "s3cret")]).await?;
    // The gateway serves while its servers start: the first tools/list waits for them (--wait), and
    // the units tools on it mean the units server answered its handshake, so the script has run.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header("s3cret");
    let client = ().into_dyn().serve(StreamableHttpClientTransport::from_config(cfg)).await?;
    let tools = client.list_all_tools().await?;
    assert!(tools.iter().any(|t| t.name == "units-convert"), "{tools:?}");
    client.cancel().await?;
    child.kill().await?;
    assert_eq!(std::fs::read_to_string(&seen)?, "token:");
    Ok(())
}

#[test]
fn the_deployment_guide_names_only_flags_that_exist() -> Result<()> {
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy/README.md"),
    )?;
    let help = std::process::Command::new(common::pegboard())
        .args(["serve", "--help"])
        .output()?;
    let help = String::from_utf8_lossy(&help.stdout);
    let flags_in = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w[2..].starts_with(|c: char| c.is_ascii_lowercase()))
            .map(String::from)
            .collect()
    };
    // A `cargo …` line names cargo's flags (`--features store`), not serve's.
    let guide: String = guide
        .split('`')
        .enumerate()
        .filter(|(i, span)| i % 2 == 0 || !span.starts_with("cargo "))
        .map(|(_, span)| span)
        .collect::<Vec<_>>()
        .join("`");
    let flags = flags_in(&guide);
    let offered = flags_in(&help);
    for needed in [
        "--http",
        "--token",
        "--allow-host",
        "--allow-origin",
        "--stateless",
    ] {
        assert!(flags.contains(needed), "the guide should explain {needed}");
    }
    for flag in &flags {
        assert!(
            offered.contains(flag),
            "the guide names {flag}, which `pegboard serve` does not have"
        );
    }
    assert!(guide.contains("proxy_set_header Host $host"));
    Ok(())
}
