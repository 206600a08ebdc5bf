//! Two connections (as two gateway processes would have) sharing one credential store refresh
//! at the same instant, again and again, against `oidc-provider`, which rotates the refresh token
//! at every refresh and revokes the whole grant when a spent one comes back. The entry's lock
//! must make the second refresh read the first one's rotated token: neither connection may ever
//! end up needing a login.
//!
//! The authorization server and the resource server are the ones of the CLI's OAuth tests
//! (`crates/pegboard-cli/tests/oauth/`), installed by `scripts/setup-test-deps.sh`.

mod oauth_servers;

use std::time::Duration;

use anyhow::{Context, Result, bail};
use oauth_servers::{authorization_server, browse, free_port, resource_server};
use pegboard_gateway::config::{CredentialsBackend, OAuthSettings};
use pegboard_gateway::testing::Store;
use pegboard_gateway::{
    oauth::LoginOptions,
    testing::{Upstream, login_in},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_refreshes_from_one_store_never_spend_a_token_twice() -> Result<()> {
    let (_as, issuer) = authorization_server().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let settings = OAuthSettings {
        redirect_port: Some(free_port()),
        credentials: CredentialsBackend::File,
        ..OAuthSettings::default()
    };
    // Log in, the test playing the browser.
    let store = Store::file_in(dir.path().join("pegboard"));
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let browser = tokio::spawn(async move { browse(&url_rx.await?).await });
    let options = LoginOptions {
        open_browser: false,
        timeout: Duration::from_secs(60),
    };
    let logged_in = login_in(&store, "alpha", &url, &settings, &options, |u| {
        let _ = url_tx.send(u.to_string());
    })
    .await?;
    browser.await??;
    assert!(logged_in.refreshable);

    // Two connections, each with its own handle on the store (as two processes have).
    let one = Upstream::open_in(
        &Store::file_in(dir.path().join("pegboard")),
        "alpha",
        &url,
        &settings,
    )
    .await?;
    let two = Upstream::open_in(
        &Store::file_in(dir.path().join("pegboard")),
        "alpha",
        &url,
        &settings,
    )
    .await?;
    for round in 0..10 {
        let a = one.bearer().await?.context("a token")?;
        let b = two.bearer().await?.context("a token")?;
        // Both were told 401 at the same instant: both refresh now.
        let (fresh_a, fresh_b) =
            tokio::join!(one.after_unauthorized(&a), two.after_unauthorized(&b));
        if one.needs_login() || two.needs_login() {
            bail!("round {round}: a connection needs a login: a refresh token was spent twice");
        }
        let (fresh_a, fresh_b) = (
            fresh_a.context("no new token")?,
            fresh_b.context("no new token")?,
        );
        assert!(
            fresh_a != a && fresh_b != b,
            "round {round}: no refresh happened"
        );
    }
    Ok(())
}

/// Three replicas keeping the credentials in one store (`"credentials": "store"`, a real
/// redis-server) are told 401 at the same instant, again and again: under the store's lock
/// exactly one refreshes and the two others read the rotated token, so all three come back
/// with the same new access token (three refreshes would give three), and none is locked out.
#[cfg(feature = "store")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_on_the_store_spend_each_rotation_once() -> Result<()> {
    use pegboard_gateway::testing::credentials_in_store;
    const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let redis = demo_servers::testing::redis::RedisServer::start().await?;
    let (_as, issuer) = authorization_server().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let settings = OAuthSettings {
        redirect_port: Some(free_port()),
        credentials: CredentialsBackend::Store,
        ..OAuthSettings::default()
    };
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let browser = tokio::spawn(async move { browse(&url_rx.await?).await });
    let options = LoginOptions {
        open_browser: false,
        timeout: Duration::from_secs(60),
    };
    let store = credentials_in_store(&redis.url(0), KEY)?;
    let logged_in = login_in(&store, "alpha", &url, &settings, &options, |u| {
        let _ = url_tx.send(u.to_string());
    })
    .await?;
    browser.await??;
    assert!(logged_in.refreshable);
    assert!(
        logged_in.stored_in.starts_with("the store redis://"),
        "{}",
        logged_in.stored_in
    );
    let mut replicas = Vec::new();
    for _ in 0..3 {
        let own = credentials_in_store(&redis.url(0), KEY)?;
        replicas.push(Upstream::open_in(&own, "alpha", &url, &settings).await?);
    }
    for round in 0..6 {
        let mut sent = Vec::new();
        for replica in &replicas {
            sent.push(replica.bearer().await?.context("a token")?);
        }
        let (a, b, c) = tokio::join!(
            replicas[0].after_unauthorized(&sent[0]),
            replicas[1].after_unauthorized(&sent[1]),
            replicas[2].after_unauthorized(&sent[2]),
        );
        if replicas.iter().any(Upstream::needs_login) {
            bail!("round {round}: a replica needs a login: a refresh token was spent twice");
        }
        let (a, b, c) = (a.context("a")?, b.context("b")?, c.context("c")?);
        assert_ne!(a, sent[0], "round {round}: no refresh happened");
        assert!(
            a == b && b == c,
            "round {round}: the replicas hold different tokens: more than one refreshed"
        );
    }
    // A replica with another key cannot read them, and says why.
    let wrong = credentials_in_store(
        &redis.url(0),
        "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
    )?;
    let entry = wrong.server(pegboard_gateway::testing::StoreKey::new(&url, &settings));
    let refused = entry.load().await.expect_err("another key opens nothing");
    assert!(
        refused
            .to_string()
            .contains("do not open with the key in PEGBOARD_STORE_KEY"),
        "{refused}"
    );
    Ok(())
}
