//! Internals the workspace's own tests drive (feature `testing`): not part of the API, and not
//! kept stable.

pub use crate::connect::{Outcome, Started, connect, register, start_all};
pub use crate::express::serve as serve_lines;
pub use crate::session::startup::{Starting, Startup};
/// The supervisors, for the restart schedule's test.
pub use crate::supervise::{Supervised, Supervisors};
pub use crate::upstream::{Hub, ProgressTap, UpstreamClient};

/// Telemetry's parts, for its tests and benchmark.
pub mod telemetry {
    pub use crate::telemetry::*;
}
/// The credential store, for the OAuth tests.
pub use crate::credentials::{Store, StoreKey};
/// The description scan, for the corpus test.
pub use crate::guards::scan::scan_tool;
/// The HTTP front's authentication, for the OpenID provider tests.
pub use crate::identity::{
    AccessConfig, AuthError, AuthOptions, Authenticator, HttpAuth, KeyOptions, parse_access,
};
/// The login offered through URL-mode elicitation, and a login against a chosen store.
pub use crate::oauth::elicit::{login_through_client_in, offers_url_elicitation};
pub use crate::oauth::keeper::Upstream;
pub use crate::oauth::login::login_in;

/// Credentials kept in the store at `url` (`"credentials": "store"`), sealed with `key`
/// (`PEGBOARD_STORE_KEY`'s form): what each replica has, for the race tests.
///
/// # Errors
/// The URL or the key cannot be used.
#[cfg(feature = "store")]
pub fn credentials_in_store(url: &str, key: &str) -> anyhow::Result<crate::credentials::Store> {
    let url: crate::config::StoreUrl = url.parse()?;
    let store = crate::store::Store::open(&crate::config::StoreSettings::new(url), None)?;
    let key = crate::credentials::SealKey::parse(key)?;
    Ok(crate::credentials::Store::in_store(
        crate::credentials::InStore::new(store, key),
    ))
}

/// How many sessions have their own connection open to the `"session": "per-client"` server of
/// the board's tool `tool` (`None`: not such a server).
pub fn per_client_open(
    board: &pegboard::PegBoard,
    tool: &str,
) -> Option<tokio::sync::watch::Receiver<usize>> {
    let target = board.tool_target(tool).ok()?;
    let hub = target.extension?.get::<crate::upstream::Hub>()?;
    Some(hub.per_session()?.open_connections())
}

/// `server` serving while servers start: its lists wait for `startup`.
pub fn with_startup(server: crate::BoardServer, startup: Startup) -> crate::BoardServer {
    server.with_startup(startup)
}
