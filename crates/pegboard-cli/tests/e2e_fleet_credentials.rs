//! Issue 34 item 4: upstream OAuth credentials kept in the fleet's store
//! (`"credentials": "store"`), sealed with the key in `PEGBOARD_STORE_KEY`. One
//! `pegboard login NAME --store URL` serves three replicas; against `oidc-provider` (5-second
//! access tokens, a new refresh token at every refresh, a reused one revokes the whole grant),
//! each rotation is spent by exactly one replica and read by the two others. A missing, short
//! or wrong key is refused with what to do.
//!
//! Needs the `store` and `testing` features (`required-features` in Cargo.toml), a real
//! redis-server (Debian's) and the OAuth test servers of `scripts/setup-test-deps.sh`.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::changes::connect;
use common::fleet::Replica;
use common::oauth::{headless_login_with, oidc_provider, pegboard_cmd, resource_server, run};
use demo_servers::testing::redis::RedisServer;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;

/// 32 bytes, base64: the fleet's key.
const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// Another 32 bytes, hex.
const OTHER_KEY: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
/// The keeper's lines, and the warnings.
const LOG: &str = "warn,pegboard_gateway::oauth=debug";
const REFRESHED: &str = "access token refreshed";
const TAKEN: &str = "using the token another process refreshed";

/// A config of the `url` server alpha with `"credentials": "store"`.
fn config(dir: &std::path::Path, url: &str) -> Result<std::path::PathBuf> {
    let config = serde_json::json!({
        "credentials": "store",
        "mcpServers": { "alpha": {
            "url": url, "oauth": { "redirectPort": common::oauth::free_port() } } }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

fn count(replicas: &[Replica], needle: &str) -> usize {
    replicas
        .iter()
        .map(|r| common::count_lines(&r.log.borrow(), needle))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_login_serves_three_replicas_and_one_replica_spends_each_rotation() -> Result<()> {
    let redis = RedisServer::start().await?;
    let store = redis.url(0);
    let (_as, issuer, mut as_lines) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = config(dir.path(), &url)?;
    let data_env = data.to_string_lossy().into_owned();
    let env = [
        ("PEGBOARD_STORE", store.as_str()),
        ("PEGBOARD_STORE_KEY", KEY),
        ("XDG_DATA_HOME", data_env.as_str()),
        ("RUST_LOG", LOG),
    ];
    // Once, for the fleet.
    let said = headless_login_with(&config, &data, "alpha", false, &env[..2]).await?;
    assert!(
        said.contains("stored in the store redis://127.0.0.1:"),
        "{said}"
    );
    assert!(
        !data.join("pegboard/credentials.json").exists(),
        "nothing goes to this machine's file"
    );
    let after_login = common::count_lines(&as_lines.borrow(), "token request");
    // `pegboard auth` reads them from the store too.
    let mut auth = pegboard_cmd(&config, &data, &["auth"]);
    auth.envs(env[..2].iter().copied());
    let (code, out, err) = run(auth).await?;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("alpha: logged in"), "{out}");

    let mut fleet = Vec::new();
    for _ in 0..3 {
        fleet.push(Replica::start(&config, &store, &[], &env[1..]).await?);
    }
    let mut clients = Vec::new();
    for replica in &fleet {
        let (client, _) = connect(
            StreamableHttpClientTransport::from_uri(replica.url.as_str()),
            Duration::from_secs(30),
        )
        .await?;
        clients.push(client);
    }
    let call = async |client: &common::changes::Client| -> Result<String> {
        let result = client
            .call_tool(CallToolRequestParams::new("alpha-count"))
            .await
            .context("calling alpha-count")?;
        anyhow::ensure!(result.is_error != Some(true), "{result:?}");
        Ok(common::first_text(&result))
    };
    for client in &clients {
        call(client).await?;
    }
    // Two rotations (the access token lives 5 s): each replica is due at about the same time.
    tokio::time::timeout(
        Duration::from_secs(40),
        as_lines.wait_for(|l| common::count_lines(l, "token request") >= after_login + 2),
    )
    .await
    .context("no two refreshes within 40 s")??;
    // Every replica took part in both rounds: the one that refreshed, the others that read
    // the rotated token (their lines follow the refresher's within milliseconds).
    let mut watching: Vec<_> = fleet.iter().map(|r| r.log.clone()).collect();
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let done = count(&fleet, REFRESHED) >= 2 && count(&fleet, TAKEN) >= 4;
            if done {
                return;
            }
            let changed = watching.iter_mut().map(|w| Box::pin(w.changed()));
            let _ = futures::future::select_all(changed).await;
        }
    })
    .await
    .with_context(|| {
        format!(
            "refreshed {} times, taken {} times",
            count(&fleet, REFRESHED),
            count(&fleet, TAKEN)
        )
    })?;
    let refreshes = common::count_lines(&as_lines.borrow(), "token request") - after_login;
    assert_eq!(
        count(&fleet, REFRESHED),
        refreshes,
        "every token request came from one refresh of one replica"
    );
    assert!(
        refreshes <= 3,
        "{refreshes} token requests for two or three rotations among three replicas"
    );
    // All three still serve with the rotated token; none was locked out (a spent refresh
    // token, reused, would have revoked the grant).
    for client in &clients {
        call(client).await?;
    }
    assert_eq!(count(&fleet, "needs a login"), 0);
    assert_eq!(count(&fleet, "refused"), 0);
    for client in clients {
        client.cancel().await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_short_or_wrong_key_is_refused_with_what_to_do() -> Result<()> {
    let redis = RedisServer::start().await?;
    let store = redis.url(0);
    let (_as, issuer, _) = oidc_provider().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = config(dir.path(), &url)?;
    let serve = |key: Option<&str>| {
        let mut command = pegboard_cmd(
            &config,
            &data,
            &["serve", "--http", "127.0.0.1:0", "--store", &store],
        );
        command.env_remove("PEGBOARD_STORE_KEY");
        if let Some(key) = key {
            command.env("PEGBOARD_STORE_KEY", key);
        }
        command
    };
    // No key: the gateway does not start, and says what to set.
    let (code, _, err) = run(serve(None)).await?;
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("PEGBOARD_STORE_KEY") && err.contains("openssl rand -base64 32"),
        "{err}"
    );
    // A short one.
    let (code, _, err) = run(serve(Some("c2hvcnQ="))).await?;
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("decodes to 5 bytes; it must be 32"), "{err}");
    // `pegboard login --store` without a key changes nothing and says so.
    let mut login = pegboard_cmd(&config, &data, &["login", "alpha", "--no-browser"]);
    login
        .env("PEGBOARD_STORE", &store)
        .env_remove("PEGBOARD_STORE_KEY");
    let (code, _, err) = run(login).await?;
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("PEGBOARD_STORE_KEY"), "{err}");

    // A URL that is not a store's is refused without showing its password.
    let mut login = pegboard_cmd(&config, &data, &["login", "alpha", "--no-browser"]);
    login
        .env("PEGBOARD_STORE", "http://:hunter2@127.0.0.1:6379/0")
        .env("PEGBOARD_STORE_KEY", KEY);
    let (code, _, err) = run(login).await?;
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("--store / PEGBOARD_STORE") && !err.contains("hunter2"),
        "{err}"
    );

    // Logged in with one key, served with another: the credentials do not open, and the
    // gateway says why (it serves on, the server needing a login).
    headless_login_with(
        &config,
        &data,
        "alpha",
        false,
        &[("PEGBOARD_STORE", &store), ("PEGBOARD_STORE_KEY", KEY)],
    )
    .await?;
    let mut replica = Replica::start(
        &config,
        &store,
        &[],
        &[("PEGBOARD_STORE_KEY", OTHER_KEY), ("RUST_LOG", "warn")],
    )
    .await?;
    tokio::time::timeout(
        Duration::from_secs(30),
        replica.log.wait_for(|l| {
            l.iter()
                .any(|l| l.contains("do not open with the key in PEGBOARD_STORE_KEY"))
        }),
    )
    .await
    .context("no word of the wrong key")??;
    replica.kill().await?;
    Ok(())
}
