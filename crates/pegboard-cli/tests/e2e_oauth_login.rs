//! Logging in to the TypeScript SDK's example server (`simpleStreamableHttp.js --oauth`, with its
//! demo authorization server: dynamic registration, PKCE, approves at once), headless: the test
//! follows the printed authorization URL as a browser would.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::oauth::{
    headless_login, oauth_config, pegboard_cmd, run, stored, stored_tokens, ts_oauth_server,
};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;

#[tokio::test]
async fn a_login_is_used_by_later_processes_until_logout() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("demo", &url)])?;

    let (code, out, err) = run(pegboard_cmd(&config, &data, &["auth"])).await?;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("demo: needs login (never logged in): run `pegboard login demo`"),
        "{out}"
    );

    let said = headless_login(&config, &data, "demo", false).await?;
    assert!(
        said.contains("demo: logged in, scopes: mcp:tools"),
        "{said}"
    );
    let record = stored(&data)?;
    let entry = &record["entries"][format!("{url} dynamic")];
    assert_eq!(entry["client"]["kind"], "dynamic", "{record}");
    let client_id = entry["client"]["client_id"]
        .as_str()
        .context("client id")?
        .to_string();

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |p: &std::path::Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode(&data.join("pegboard/credentials.json"))?, 0o600);
        assert_eq!(mode(&data.join("pegboard"))?, 0o700);
    }

    // Another process, no login: the stored credentials are used.
    let (code, out, err) = run(pegboard_cmd(
        &config,
        &data,
        &["call", "demo-greet", r#"{"name":"Ada"}"#],
    ))
    .await?;
    assert_eq!((code, out.trim()), (0, "Hello, Ada!"), "{err}");

    let (code, out, _) = run(pegboard_cmd(&config, &data, &["auth"])).await?;
    assert_eq!(code, 0);
    assert!(
        out.contains("demo: logged in (scopes: mcp:tools; access token expires in"),
        "{out}"
    );
    for token in stored_tokens(&data)? {
        assert!(!out.contains(&token), "`pegboard auth` printed a token");
    }

    // A second login reuses the stored registration instead of registering again.
    headless_login(&config, &data, "demo", false).await?;
    let again = stored(&data)?;
    assert_eq!(
        again["entries"][format!("{url} dynamic")]["client"]["client_id"],
        client_id.as_str()
    );

    let (code, _, err) = run(pegboard_cmd(&config, &data, &["logout", "demo"])).await?;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("demo: logged out"), "{err}");
    assert!(
        stored_tokens(&data)?.is_empty(),
        "tokens remain after logout"
    );

    let (code, _, err) = run(pegboard_cmd(
        &config,
        &data,
        &["call", "demo-greet", r#"{"name":"Ada"}"#],
    ))
    .await?;
    assert_eq!(code, 1);
    assert!(
        err.contains("server `demo` needs a login: run `pegboard login demo`"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn a_running_gateway_picks_the_server_up_when_the_login_completes() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("demo", &url)])?;
    let data_env = data.to_string_lossy().into_owned();
    let (_gateway, gateway_url, mut lines) =
        common::serve_http_logged(&config, &[], &[("XDG_DATA_HOME", &data_env)]).await?;
    common::wait_for_line(
        &mut lines,
        "server `demo` needs a login: run `pegboard login demo`",
    )
    .await?;
    let (client, mut changes) = common::changes::connect(
        StreamableHttpClientTransport::from_uri(gateway_url.as_str()),
        Duration::from_secs(30),
    )
    .await?;
    let before = client.list_all_tools().await?;
    assert!(before.iter().all(|t| t.name != "demo-greet"), "{before:?}");

    headless_login(&config, &data, "demo", false).await?;
    common::changes::after_changes(
        &mut changes,
        Duration::from_secs(30),
        "demo-greet",
        async || {
            let tools = client.list_all_tools().await.ok()?;
            tools.iter().any(|t| t.name == "demo-greet").then_some(())
        },
    )
    .await?;
    let result = client
        .call_tool(
            CallToolRequestParams::new("demo-greet").with_arguments(
                serde_json::json!({"name": "Bo"})
                    .as_object()
                    .cloned()
                    .context("args")?,
            ),
        )
        .await?;
    assert_eq!(common::first_text(&result), "Hello, Bo!");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn no_token_in_the_most_verbose_logs() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("demo", &url)])?;
    let login_log = headless_login(&config, &data, "demo", true).await?;
    let (code, _, call_log) = run(pegboard_cmd(
        &config,
        &data,
        &["-vv", "call", "demo-greet", r#"{"name":"Ada"}"#],
    ))
    .await?;
    assert_eq!(code, 0, "{call_log}");
    // The logs are the verbose ones (rmcp's HTTP traffic is in them) ...
    assert!(call_log.contains("DEBUG"), "{call_log}");
    let tokens = stored_tokens(&data)?;
    assert!(!tokens.is_empty());
    // ... and carry no token.
    for token in &tokens {
        assert!(
            !login_log.contains(token.as_str()),
            "a token in the login's -vv log"
        );
        assert!(
            !call_log.contains(token.as_str()),
            "a token in the call's -vv log"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_server_that_needs_a_login_does_not_hold_up_the_others() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        serde_json::json!({"credentials": "file", "mcpServers": {
            "demo": {"url": url},
            "units": common::demo_server("units", &[])
        }})
        .to_string(),
    )?;
    let began = std::time::Instant::now();
    let (code, out, err) = run(pegboard_cmd(
        &config,
        &data,
        &["tools", "--startup-timeout", "20"],
    ))
    .await?;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("units-convert") || out.contains("convert"),
        "{out}"
    );
    assert!(
        err.contains("server `demo` needs a login: run `pegboard login demo`"),
        "{err}"
    );
    // Well inside the startup timeout: the 401 answer is taken at once, not waited out.
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );
    Ok(())
}
