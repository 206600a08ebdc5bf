//! [`Caller`]: what the pipeline needs to know of who calls and through which session, handed
//! down by the front that took the request (the layers above are reached only through it).

use std::sync::Arc;

use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use super::{hooks::Hooks, parked::Bridges};
use crate::identity::Client;
use crate::telemetry::Transport;
use crate::upstream::{Hub, OpenPerSession, sides::Boxed};

/// A connection of a session's own: its peer and hub, or why it could not be opened.
pub(crate) type OwnConnection = Result<(Peer<RoleClient>, Arc<Hub>), String>;

/// A session's own connections to `"session": "per-client"` servers (the session layer has
/// them).
pub(crate) trait OwnConnections: Send + Sync {
    /// The session's own connection to the server `opener` opens.
    fn own_connection<'a>(
        &'a self,
        opener: &'a Arc<dyn OpenPerSession>,
    ) -> Boxed<'a, OwnConnection>;
}

/// The caller of one request.
#[derive(Clone, Copy)]
pub(crate) struct Caller<'a> {
    /// The caller's session (`None` with `--stateless`: it cannot be asked anything, and a
    /// per-client server serves it on its shared connection).
    pub(crate) session: Option<&'a dyn OwnConnections>,
    /// Cancelled when the caller's session ends: its calls end at once (upstream too).
    pub(crate) ended: Option<&'a CancellationToken>,
    /// 2026-07-28 clients' calls parked between their rounds (the gateway's, shared).
    pub(crate) bridges: &'a Bridges,
    /// Who is calling: what it may see, its limits.
    pub(crate) client: &'a Arc<Client>,
    /// What the gateway records of calls.
    pub(crate) hooks: &'a Hooks,
    /// The session's id (HTTP), for the records.
    pub(crate) session_id: Option<&'a str>,
    /// The front the request came in on.
    pub(crate) transport: Transport,
    /// What made the call inside the gateway (`code`: a `run_code` script), for the records.
    pub(crate) via: Option<&'static str>,
}

impl Caller<'_> {
    /// Whether the caller can be asked anything (it has a session).
    pub(crate) fn can_ask(&self) -> bool {
        self.session.is_some()
    }

    /// Done when the caller's session has ended (never, without one).
    pub(crate) async fn session_ended(&self) {
        match self.ended {
            Some(ended) => ended.cancelled().await,
            None => std::future::pending().await,
        }
    }
}
