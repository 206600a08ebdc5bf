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
