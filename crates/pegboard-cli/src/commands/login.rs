//! `pegboard login NAME` and `pegboard logout NAME`.

use anyhow::{Result, bail};
use pegboard_gateway::config::{CredentialsBackend, OAuthSettings, StoreSettings, StoreUrl};
use pegboard_gateway::oauth::{self, LoggedOut, LoginError, LoginOptions};

use super::server_named;
use crate::cli::{LoginArgs, LogoutArgs};
use crate::config::Transport;

/// Run `pegboard login`.
pub async fn run(args: LoginArgs) -> Result<i32> {
    let server = server_named(args.config.as_deref(), &args.name)?;
    let Transport::Http {
        url,
        headers,
        oauth: settings,
    } = &server.transport
    else {
        bail!(LoginError::NotHttp(args.name));
    };
    let settings = &in_fleet_store(args.config.as_deref(), args.store, settings)?;
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        bail!(LoginError::StaticHeader(args.name));
    }
    let options = LoginOptions {
        open_browser: !args.no_browser,
        timeout: args.timeout,
    };
    let name = args.name.clone();
    let logged_in = oauth::login(&args.name, url, settings, &options, |auth_url| {
        eprintln!("{name}: to log in, open {auth_url}");
    })
    .await?;
    let scopes = match logged_in.scopes.as_slice() {
        [] => String::new(),
        scopes => format!(", scopes: {}", scopes.join(" ")),
    };
    let expiry = match logged_in.lifetime {
        Some(l) => format!(", access token valid {}", human(l.as_secs())),
        None => String::new(),
    };
    let refresh = if logged_in.refreshable {
        "; refreshed automatically"
    } else {
        "; no refresh token: log in again when it expires"
    };
    eprintln!(
        "{}: logged in{scopes}{expiry}{refresh} (stored in {})",
        args.name, logged_in.stored_in
    );
    Ok(0)
}

/// `settings`, its credentials in the fleet's store when `--store` says so (`store`) or the
/// config's `"credentials": "store"` does: the store opened for them (over the config's
/// `store`), its key read.
fn in_fleet_store(
    config: Option<&std::path::Path>,
    store: Option<String>,
    settings: &OAuthSettings,
) -> Result<OAuthSettings> {
    let mut settings = settings.clone();
    if store.is_none() && settings.credentials != CredentialsBackend::Store {
        return Ok(settings);
    }
    let configured = pegboard_gateway::load_config(config, false)?.store;
    open_fleet_store(store, configured)?;
    settings.credentials = CredentialsBackend::Store;
    Ok(settings)
}

/// Keep this process's `"credentials": "store"` credentials in the store at `store` (over
/// the config's `configured`), sealed with the key in PEGBOARD_STORE_KEY.
pub(crate) fn open_fleet_store(
    store: Option<String>,
    configured: Option<StoreSettings>,
) -> Result<()> {
    // The error names the URL with its password hidden (`***`).
    let store: Option<StoreUrl> = match store.as_deref() {
        Some(url) => Some(
            url.parse()
                .map_err(|e| anyhow::anyhow!("--store / PEGBOARD_STORE: {e}"))?,
        ),
        None => None,
    };
    let store = match (store, configured) {
        (Some(url), Some(configured)) => StoreSettings { url, ..configured },
        (Some(url), None) => StoreSettings::new(url),
        (None, Some(configured)) => configured,
        (None, None) => bail!(pegboard_gateway::secrets::StoreError::NoStore),
    };
    oauth::credentials_in_store(&store)?;
    Ok(())
}

/// Run `pegboard logout`.
pub async fn logout(args: LogoutArgs) -> Result<i32> {
    let server = server_named(args.config.as_deref(), &args.name)?;
    let Transport::Http {
        url,
        oauth: settings,
        ..
    } = &server.transport
    else {
        bail!(LoginError::NotHttp(args.name));
    };
    let settings = &in_fleet_store(args.config.as_deref(), args.store, settings)?;
    match oauth::logout(url, settings).await? {
        LoggedOut::NothingStored => eprintln!("{}: not logged in; nothing to forget", args.name),
        LoggedOut::Forgotten {
            revoked,
            failed: None,
        } => {
            let how = match revoked {
                Some(n) => format!(
                    "{n} token{} revoked at the server",
                    if n == 1 { "" } else { "s" }
                ),
                None => "the server has no revocation endpoint".to_string(),
            };
            eprintln!("{}: logged out ({how})", args.name);
        }
        LoggedOut::Forgotten {
            failed: Some(why), ..
        } => eprintln!(
            "{}: logged out; the tokens are forgotten here but could not be revoked at the server: {why}",
            args.name
        ),
    }
    Ok(0)
}

/// `3600` -> "1 h", `90` -> "1 min 30 s".
pub fn human(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 if secs.is_multiple_of(60) => format!("{} min", secs / 60),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ if secs.is_multiple_of(3600) => format!("{} h", secs / 3600),
        _ => format!("{} h {} min", secs / 3600, (secs % 3600) / 60),
    }
}
