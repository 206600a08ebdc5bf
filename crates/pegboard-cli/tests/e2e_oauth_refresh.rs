//! Refresh and rotation against a real authorization server: `oidc-provider` (5-second access
//! tokens, a new refresh token at every refresh, a reused one revokes the grant) in front of MCP
//! servers built with the Python SDK's auth support (tokens checked by introspection).

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::changes::{Client, after_changes, connect};
use common::oauth::{
    browser, headless_login, oauth_config, oidc_provider, pegboard_cmd, resource_server, run,
    stored,
};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;

/// Call `tool` (no arguments) through `client`: its text.
async fn call(client: &Client, tool: &str) -> Result<String> {
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()))
        .await
        .with_context(|| format!("calling {tool}"))?;
    anyhow::ensure!(result.is_error != Some(true), "{tool} failed: {result:?}");
    Ok(common::first_text(&result))
}

/// The refresh token stored for `url`.
fn refresh_token(data: &std::path::Path, url: &str) -> Result<String> {
    stored(data)?["entries"][format!("{url} dynamic")]["tokens"]["token_response"]["refresh_token"]
        .as_str()
        .map(str::to_string)
        .context("no refresh token stored")
}

async fn gateway(
    config: &std::path::Path,
    data: &std::path::Path,
) -> Result<(
    tokio::process::Child,
    Client,
    tokio::sync::watch::Receiver<u64>,
    tokio::sync::watch::Receiver<Vec<String>>,
)> {
    let data_env = data.to_string_lossy().into_owned();
    let (child, url, lines) =
        common::serve_http_logged(config, &[], &[("XDG_DATA_HOME", &data_env)]).await?;
    let (client, changes) = connect(
        StreamableHttpClientTransport::from_uri(url.as_str()),
        Duration::from_secs(30),
    )
    .await?;
    Ok((child, client, changes, lines))
}

/// The 401s the resource server at `url` (its MCP URL) answered to requests that carried a
/// token (`tests/oauth/resource_server.py`'s test hook).
async fn unauthorized_with_token(url: &str) -> Result<u64> {
    let stats = url.replace("/mcp", "/_test/stats");
    let answer: serde_json::Value = browser().get(&stats).send().await?.json().await?;
    answer["unauthorized_with_token"]
        .as_u64()
        .with_context(|| format!("{stats}: {answer}"))
}

/// Tokens are refreshed before they expire: across six lifetimes of 5 s, no request the gateway
/// sends carries a token the server refuses (not one 401: the gateway retries a call once after
/// a 401 with a refreshed token, so the calls alone would pass with a refresh that comes only
/// after expiry), and the refreshes happened (at least one per lifetime but the first).
#[tokio::test]
async fn two_hundred_calls_over_thirty_seconds_need_no_login() -> Result<()> {
    let (_as, issuer, as_lines) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &url)])?;
    let said = headless_login(&config, &data, "alpha", false).await?;
    assert!(
        said.contains("access token valid 5 s; refreshed automatically"),
        "{said}"
    );
    let first_refresh_token = refresh_token(&data, &url)?;
    let logins_before = common::count_lines(&as_lines.borrow(), "token request");

    let (_gw, client, _, lines) = gateway(&config, &data).await?;
    // 200 calls paced over 30 s: six access-token lifetimes.
    let mut pace = tokio::time::interval(Duration::from_millis(150));
    for n in 1..=200 {
        pace.tick().await;
        assert_eq!(call(&client, "alpha-count").await?, format!("alpha {n}"));
    }
    let refreshes = common::count_lines(&as_lines.borrow(), "token request") - logins_before;
    assert!(
        (5..=40).contains(&refreshes),
        "{refreshes} token requests in 30 s"
    );
    assert_eq!(
        unauthorized_with_token(&url).await?,
        0,
        "the resource server refused a token the gateway sent ({refreshes} refreshes)"
    );
    assert_ne!(
        refresh_token(&data, &url)?,
        first_refresh_token,
        "the refresh token never rotated"
    );
    assert_eq!(common::count_lines(&lines.borrow(), "needs a login"), 0);
    let (_, out, _) = run(pegboard_cmd(&config, &data, &["auth"])).await?;
    assert!(out.contains("alpha: logged in"), "{out}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn two_gateways_sharing_the_store_both_keep_working() -> Result<()> {
    let (_as, issuer, _) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &url)])?;
    headless_login(&config, &data, "alpha", false).await?;
    let (_gw1, one, _, lines1) = gateway(&config, &data).await?;
    let (_gw2, two, _, lines2) = gateway(&config, &data).await?;
    // 16 s: three rotations, each gateway refreshing on its own schedule from the one store.
    // A refresh token spent twice would make oidc-provider revoke the grant, and calls fail.
    let mut pace = tokio::time::interval(Duration::from_millis(100));
    for _ in 0..80 {
        pace.tick().await;
        call(&one, "alpha-count").await?;
        call(&two, "alpha-count").await?;
    }
    for lines in [&lines1, &lines2] {
        assert_eq!(common::count_lines(&lines.borrow(), "needs a login"), 0);
        assert_eq!(common::count_lines(&lines.borrow(), "refused"), 0);
    }
    one.cancel().await?;
    two.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_revoked_grant_needs_a_login_for_that_server_only() -> Result<()> {
    let (_as, issuer, _) = oidc_provider().await?;
    let (_alpha, alpha_url) = resource_server("alpha", &issuer).await?;
    let (_beta, beta_url) = resource_server("beta", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &alpha_url), ("beta", &beta_url)])?;
    headless_login(&config, &data, "alpha", false).await?;
    headless_login(&config, &data, "beta", false).await?;
    let (_gw, client, mut changes, mut lines) = gateway(&config, &data).await?;
    after_changes(
        &mut changes,
        Duration::from_secs(30),
        "both servers",
        async || {
            let tools = client.list_all_tools().await.ok()?;
            (tools.len() == 2).then_some(())
        },
    )
    .await?;
    assert_eq!(call(&client, "alpha-count").await?, "alpha 1");

    // Revoke alpha's grant at the authorization server (RFC 7009 with its refresh token: the
    // whole grant goes, access token included).
    let record = stored(&data)?;
    let client_id = record["entries"][format!("{alpha_url} dynamic")]["client"]["client_id"]
        .as_str()
        .context("client id")?
        .to_string();
    let revoked = browser()
        .post(format!("{issuer}/token/revocation"))
        .form(&[
            ("token", refresh_token(&data, &alpha_url)?.as_str()),
            ("token_type_hint", "refresh_token"),
            ("client_id", client_id.as_str()),
        ])
        .send()
        .await?;
    assert!(revoked.status().is_success(), "{}", revoked.status());

    // alpha's next refresh is refused: its tools leave the board (list_changed) ...
    after_changes(
        &mut changes,
        Duration::from_secs(30),
        "alpha gone",
        async || {
            let _ = client
                .call_tool(CallToolRequestParams::new("alpha-count"))
                .await;
            let tools = client.list_all_tools().await.ok()?;
            tools.iter().all(|t| t.name != "alpha-count").then_some(())
        },
    )
    .await?;
    common::wait_for_line(
        &mut lines,
        "server `alpha` needs a login: run `pegboard login alpha`",
    )
    .await?;
    // ... beta is untouched.
    for n in 1..=5 {
        assert_eq!(call(&client, "beta-count").await?, format!("beta {n}"));
    }
    let (_, out, _) = run(pegboard_cmd(&config, &data, &["auth"])).await?;
    assert!(
        out.contains("alpha: needs login (the authorization server refused the stored refresh token): run `pegboard login alpha`"),
        "{out}"
    );
    assert!(out.contains("beta: logged in"), "{out}");

    // A new login brings alpha back into the running gateway.
    headless_login(&config, &data, "alpha", false).await?;
    after_changes(
        &mut changes,
        Duration::from_secs(30),
        "alpha back",
        async || {
            let tools = client.list_all_tools().await.ok()?;
            tools.iter().any(|t| t.name == "alpha-count").then_some(())
        },
    )
    .await?;
    assert_eq!(call(&client, "alpha-count").await?, "alpha 2");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_failing_token_endpoint_is_retried_and_the_credentials_kept() -> Result<()> {
    let (_as, issuer, as_lines) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &url)])?;
    headless_login(&config, &data, "alpha", false).await?;
    let (_gw, client, _, mut lines) = gateway(&config, &data).await?;
    assert_eq!(call(&client, "alpha-count").await?, "alpha 1");

    // The next three token requests answer 500.
    let hooked = browser()
        .post(format!("{issuer}/_test/token-failures?count=3"))
        .send()
        .await?;
    assert!(hooked.status().is_success());
    common::wait_for_lines(&mut lines, "token refresh failed", 3).await?;
    assert!(
        lines
            .borrow()
            .iter()
            .any(|l| l.contains("the credentials are kept, trying again in")),
        "{:?}",
        lines.borrow()
    );
    // The credentials were kept through the failures ...
    let record = stored(&data)?;
    let entry = &record["entries"][format!("{url} dynamic")];
    assert!(entry["refused"].is_null(), "{entry}");
    assert!(entry["tokens"]["token_response"]["refresh_token"].is_string());
    // ... and once the endpoint answers again, calls go through without a login.
    for n in 2..=6 {
        assert_eq!(call(&client, "alpha-count").await?, format!("alpha {n}"));
    }
    assert_eq!(
        common::count_lines(&as_lines.borrow(), "answered 500 (test hook)"),
        3
    );
    assert_eq!(common::count_lines(&lines.borrow(), "needs a login"), 0);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn logout_revokes_the_tokens_at_the_authorization_server() -> Result<()> {
    let (_as, issuer, _) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &url)])?;
    headless_login(&config, &data, "alpha", false).await?;
    let spent = refresh_token(&data, &url)?;
    // What the authorization server says about a token (asked as the resource server).
    let active = async |token: &str| -> Result<bool> {
        let answer: serde_json::Value = browser()
            .post(format!("{issuer}/token/introspection"))
            .basic_auth("resource-server", Some("resource-server-secret"))
            .form(&[("token", token)])
            .send()
            .await?
            .json()
            .await?;
        answer["active"].as_bool().context("no `active`")
    };
    assert!(active(&spent).await?);
    let (code, _, err) = run(pegboard_cmd(&config, &data, &["logout", "alpha"])).await?;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("alpha: logged out (2 tokens revoked at the server)"),
        "{err}"
    );
    assert!(!active(&spent).await?, "the refresh token is still active");
    let (_, out, _) = run(pegboard_cmd(&config, &data, &["auth"])).await?;
    assert!(out.contains("alpha: needs login (logged out)"), "{out}");
    Ok(())
}

#[tokio::test]
async fn no_token_in_the_gateways_most_verbose_logs_across_refreshes() -> Result<()> {
    let (_as, issuer, mut as_lines) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("alpha", &url)])?;
    let login_log = headless_login(&config, &data, "alpha", true).await?;
    let mut seen = common::oauth::stored_tokens(&data)?;
    let data_env = data.to_string_lossy().into_owned();
    let (_gw, gateway_url, lines) =
        common::serve_http_logged(&config, &["-vv"], &[("XDG_DATA_HOME", &data_env)]).await?;
    let (client, _) = connect(
        StreamableHttpClientTransport::from_uri(gateway_url.as_str()),
        Duration::from_secs(30),
    )
    .await?;
    // Calls until the gateway has refreshed twice (two more token requests than the login's).
    let before = common::count_lines(&as_lines.borrow(), "token request");
    let mut pace = tokio::time::interval(Duration::from_millis(200));
    let refreshed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            pace.tick().await;
            call(&client, "alpha-count").await?;
            for token in common::oauth::stored_tokens(&data)? {
                if !seen.contains(&token) {
                    seen.push(token);
                }
            }
            if common::count_lines(&as_lines.borrow_and_update(), "token request") >= before + 2 {
                return anyhow::Ok(());
            }
        }
    })
    .await;
    refreshed.context("no two refreshes within 60 s")??;
    let log = lines.borrow().join("\n");
    assert!(log.contains("DEBUG"), "not the verbose log");
    assert!(seen.len() >= 4, "{} tokens seen", seen.len());
    for token in &seen {
        assert!(
            !log.contains(token.as_str()),
            "a token in the gateway's -vv log"
        );
        assert!(
            !login_log.contains(token.as_str()),
            "a token in the login's -vv log"
        );
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_preregistered_confidential_client_logs_in_and_refreshes() -> Result<()> {
    let port = common::oauth::free_port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let (_as, issuer, as_lines) =
        common::oauth::oidc_provider_with(&[("STATIC_REDIRECT", &redirect)]).await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        serde_json::json!({"credentials": "file", "mcpServers": {"alpha": {"url": url, "oauth": {
            "clientId": "pegboard-static", "clientSecret": "${STATIC_SECRET}", "redirectPort": port}}}})
        .to_string(),
    )?;
    let secret = [("STATIC_SECRET", "static-secret")];
    common::oauth::headless_login_with(&config, &data, "alpha", false, &secret).await?;
    let record = stored(&data)?;
    let entry = &record["entries"][format!("{url} pegboard-static")];
    assert_eq!(entry["client"]["kind"], "preregistered", "{record}");
    assert!(
        entry["client"]["client_secret"].is_null(),
        "the config's secret was stored"
    );
    assert_eq!(
        common::count_lines(&as_lines.borrow(), "registration request"),
        0
    );

    // Two processes, the second after the access token expired: it refreshes with the secret.
    let data_env = data.to_string_lossy().into_owned();
    let (_gw, gateway_url, _) =
        common::serve_http_logged(&config, &[], &[("XDG_DATA_HOME", &data_env), secret[0]]).await?;
    let (client, _) = connect(
        StreamableHttpClientTransport::from_uri(gateway_url.as_str()),
        Duration::from_secs(30),
    )
    .await?;
    let before = common::count_lines(&as_lines.borrow(), "token request");
    let mut pace = tokio::time::interval(Duration::from_millis(200));
    tokio::time::timeout(Duration::from_secs(60), async {
        while common::count_lines(&as_lines.borrow(), "token request") < before + 2 {
            pace.tick().await;
            call(&client, "alpha-count").await?;
        }
        anyhow::Ok(())
    })
    .await
    .context("no two refreshes within 60 s")??;
    call(&client, "alpha-count").await?;
    client.cancel().await?;
    Ok(())
}
