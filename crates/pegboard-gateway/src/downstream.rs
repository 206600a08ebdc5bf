//! One downstream session's state: its connection, the log level it asked for and its roots.
//! The [`crate::server::BoardServer`] of each session holds one (PASSTHROUGH.md §0).
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pegboard::PegBoard;
use rmcp::{
    Peer, RoleServer,
    model::{
        LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam, Root,
        SetLevelRequestParams,
    },
};

use crate::{
    relay::{ListKind, Relay},
    upstream::Hub,
};

/// A downstream session, registered with the gateway's [`Relay`] once initialized.
#[derive(Debug)]
pub struct Session {
    id: u64,
    relay: Arc<Relay>,
    peer: OnceLock<Peer<RoleServer>>,
    level: Mutex<Option<LoggingLevel>>,
    roots: Mutex<Vec<Root>>,
    /// What the upstreams offer, decided at the session's first `get_info` and kept: rmcp
    /// expects a session's capabilities not to change (PASSTHROUGH.md §8).
    offers: OnceLock<Offers>,
    /// Its own connections to `"session": "per-client"` servers; dropped (closed) with it.
    own: crate::per_client::Connections,
}

/// What at least one upstream offers, so the gateway advertises it downstream.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offers {
    pub(crate) logging: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) subscribe: bool,
    pub(crate) completions: bool,
}

impl Offers {
    fn of(board: &PegBoard, starting: bool) -> Self {
        let mut offers = Self {
            logging: starting,
            prompts: starting,
            resources: starting,
            subscribe: false,
            completions: starting,
        };
        for (peer, _) in board.service_peers() {
            let Some(info) = peer.peer_info() else {
                continue;
            };
            let caps = &info.capabilities;
            offers.logging |= caps.logging.is_some();
            offers.prompts |= caps.prompts.is_some();
            offers.completions |= caps.completions.is_some();
            if let Some(resources) = &caps.resources {
                offers.resources = true;
                offers.subscribe |= resources.subscribe == Some(true);
            }
        }
        offers
    }
}

impl Session {
    pub(crate) fn new(relay: &Arc<Relay>) -> Arc<Self> {
        Arc::new(Self {
            id: relay.next_id(),
            relay: relay.clone(),
            peer: OnceLock::new(),
            level: Mutex::new(None),
            roots: Mutex::new(Vec::new()),
            offers: OnceLock::new(),
            own: crate::per_client::Connections::default(),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Its own connection to a per-client server: peer and hub (see [`crate::per_client`]).
    pub(crate) async fn own_connection(
        &self,
        per_client: &Arc<crate::per_client::PerClient>,
    ) -> Result<(rmcp::Peer<rmcp::RoleClient>, Arc<Hub>), String> {
        self.own.get(per_client, self.id, &self.relay).await
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.peer.get().is_none_or(Peer::is_transport_closed)
    }

    /// What to advertise: what some upstream offers, decided at the first `get_info` and kept.
    /// While servers are still `starting`, any of them may bring logging, prompts, resources or
    /// completions, and the answer cannot wait for them: those are offered (their lists are empty
    /// until a server brings some).
    pub(crate) fn offers(&self, board: &PegBoard, starting: bool) -> Offers {
        *self.offers.get_or_init(|| Offers::of(board, starting))
    }

    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn roots(&self) -> Vec<Root> {
        self.roots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) async fn notify_log(&self, message: LoggingMessageNotificationParam) {
        if let Some(peer) = self.peer.get()
            && let Err(e) = peer.notify_logging_message(message).await
        {
            tracing::debug!(session = self.id, "could not forward a log message: {e}");
        }
    }

    pub(crate) async fn notify_resource_updated(&self, uri: &str) {
        if let Some(peer) = self.peer.get()
            && let Err(e) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
        {
            tracing::debug!(
                session = self.id,
                "could not forward a resource update: {e}"
            );
        }
    }

    pub(crate) async fn notify_list_changed(&self, kind: ListKind) {
        let Some(peer) = self.peer.get() else { return };
        let sent = match kind {
            ListKind::Prompts => peer.notify_prompt_list_changed().await,
            ListKind::Resources => peer.notify_resource_list_changed().await,
        };
        if let Err(e) = sent {
            tracing::debug!(
                session = self.id,
                "could not forward {kind:?} list_changed: {e}"
            );
        }
    }

    /// The client finished its handshake: join the relay, link every upstream to it, and fetch
    /// the client's roots if it has any.
    pub(crate) fn start(self: &Arc<Self>, board: &PegBoard, peer: Peer<RoleServer>) {
        let has_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let _ = self.peer.set(peer);
        self.relay.add(self);
        attach_hubs(board, &self.relay);
        if has_roots {
            let session = self.clone();
            let board = board.clone();
            tokio::spawn(async move { session.refresh_roots(&board).await });
        }
    }

    /// Ask the client for its roots again; tell the upstreams when the gateway's roots changed.
    pub(crate) async fn refresh_roots(&self, board: &PegBoard) {
        let Some(peer) = self.peer.get() else { return };
        #[allow(deprecated)] // roots are deprecated by SEP-2577 but live in 2025-11-25
        let roots = match peer.list_roots().await {
            Ok(result) => result.roots,
            Err(e) => {
                tracing::debug!(session = self.id, "roots/list to the client failed: {e}");
                return;
            }
        };
        let before = self.relay.roots();
        *self.roots.lock().unwrap_or_else(PoisonError::into_inner) = roots;
        if self.relay.roots() != before {
            notify_roots_changed(board).await;
        }
    }

    /// `logging/setLevel`: the shared upstreams log at the most verbose level any session wants.
    pub(crate) async fn set_level(&self, board: &PegBoard, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
        let Some(min) = self.relay.min_level() else {
            return;
        };
        for (peer, _) in board.service_peers() {
            let logs = peer
                .peer_info()
                .is_some_and(|info| info.capabilities.logging.is_some());
            if logs {
                #[allow(deprecated)] // logging is deprecated by SEP-2577 but live in 2025-11-25
                if let Err(e) = peer.set_level(SetLevelRequestParams::new(min)).await {
                    tracing::debug!("logging/setLevel upstream failed: {e}");
                }
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.relay.remove(self.id);
    }
}

/// Link every upstream hub on the board to `relay` (new upstreams appear with reloads).
pub(crate) fn attach_hubs(board: &PegBoard, relay: &Arc<Relay>) {
    for (_, extension) in board.service_peers() {
        if let Some(hub) = extension.and_then(|e| e.get::<Hub>()) {
            hub.attach(relay);
        }
    }
}

async fn notify_roots_changed(board: &PegBoard) {
    for (peer, _) in board.service_peers() {
        if let Err(e) = peer.notify_roots_list_changed().await {
            tracing::debug!("roots list_changed upstream failed: {e}");
        }
    }
}
