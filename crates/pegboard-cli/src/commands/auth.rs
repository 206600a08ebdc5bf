//! `pegboard auth`: each `url` server's login state. Never a token.

use anyhow::Result;
use pegboard_gateway::oauth::{AuthState, auth_state};

use super::login::human;
use crate::cli::AuthArgs;

/// Run `pegboard auth`.
pub async fn run(args: AuthArgs) -> Result<i32> {
    let config = super::load_config(args.config.as_deref(), false)?;
    // Credentials kept in the fleet's store are read from it.
    let in_store = config.servers.iter().any(|s| {
        matches!(&s.transport, crate::config::Transport::Http { oauth, .. }
            if oauth.credentials == pegboard_gateway::config::CredentialsBackend::Store)
    });
    if in_store {
        super::login::open_fleet_store(args.store, config.store.clone())?;
    }
    let states = futures::future::join_all(
        config
            .servers
            .iter()
            .map(|server| async move { (server.name.as_str(), auth_state(server).await) }),
    )
    .await;
    let mut lines = Vec::new();
    for (name, state) in states {
        let Some(state) = state else { continue };
        lines.push(format!("{name}: {}", describe(name, &state)));
    }
    if lines.is_empty() {
        lines.push(format!(
            "{}: no `url` servers; only those log in",
            config.source.display()
        ));
    }
    crate::output::print(&(lines.join("\n") + "\n"))?;
    Ok(0)
}

fn describe(name: &str, state: &AuthState) -> String {
    match state {
        AuthState::LoggedIn {
            scopes,
            expires_in,
            refreshable,
            stored_in,
        } => {
            let scopes = if scopes.is_empty() {
                String::new()
            } else {
                format!("scopes: {}; ", scopes.join(" "))
            };
            let expiry = match expires_in {
                Some(s) if *s > 0 => format!("access token expires in {}", human(s.unsigned_abs())),
                Some(_) if *refreshable => {
                    "access token expired, refreshed on next use".to_string()
                }
                Some(_) => "access token expired".to_string(),
                None => "no expiry given".to_string(),
            };
            format!("logged in ({scopes}{expiry}; stored in {stored_in})")
        }
        AuthState::NeedsLogin(why) => format!("needs login ({why}): run `pegboard login {name}`"),
        AuthState::NoAuthNeeded => "no auth needed".to_string(),
        AuthState::StaticHeader => {
            "no auth needed (an Authorization header is set in the config)".to_string()
        }
        AuthState::Unknown(why) => format!("unknown: {why}"),
    }
}
