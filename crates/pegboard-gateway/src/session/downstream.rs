//! One downstream session's state: its connection, the log level it asked for and its roots.
//! The [`crate::server::BoardServer`] of each session holds one (PASSTHROUGH.md §0).

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pegboard::PegBoard;
#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    Peer, RoleServer,
    model::{
        LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam, Root,
        SetLevelRequestParams,
    },
};

use tokio_util::sync::CancellationToken;

use super::{
    connections::Connections,
    lists::Lists,
    relay::{Member, Relay},
};
use crate::{
    call::caller::{OwnConnection, OwnConnections},
    telemetry::{SessionGuard, Telemetry},
    upstream::{
        Hub, OpenPerSession,
        sides::{Boxed, Downstream, ListKind},
    },
};

/// A downstream session, registered with the gateway's [`Relay`] once initialized.
#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
#[derive(Debug)]
pub(crate) struct Session {
    id: u64,
    relay: Arc<Relay>,
    peer: OnceLock<Peer<RoleServer>>,
    level: Mutex<Option<LoggingLevel>>,
    roots: Mutex<Vec<Root>>,
    /// What the upstreams offer, decided at the session's first `get_info` and kept: rmcp
    /// expects a session's capabilities not to change (PASSTHROUGH.md §8).
    offers: OnceLock<Offers>,
    /// Its own connections to `"session": "per-client"` servers; dropped (closed) with it.
    own: Connections,
    /// Cancelled when the session ends: its calls still running end at once, upstream too.
    ended: CancellationToken,
    /// Which of a server's list changes it is told (set when it starts).
    lists: OnceLock<Arc<dyn Lists>>,
    /// Counts it in `pegboard_sessions` from its start; its drop, with the session's, records
    /// how long it lasted (`mcp_server_session_duration_seconds`). Unset with telemetry off.
    counted: OnceLock<SessionGuard>,
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
            own: Connections::default(),
            ended: CancellationToken::new(),
            lists: OnceLock::new(),
            counted: OnceLock::new(),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Cancelled when the session ends.
    pub(crate) fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// Its own connection to a per-client server: peer and hub (see `session/connections.rs`).
    pub(crate) fn own_connection<'a>(
        &'a self,
        opener: &'a Arc<dyn OpenPerSession>,
    ) -> Boxed<'a, OwnConnection> {
        let downstream: Arc<dyn Downstream> = self.relay.clone();
        Box::pin(async move { self.own.get(opener, self.id, &downstream).await })
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

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    pub(crate) fn roots(&self) -> Vec<Root> {
        self.roots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
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

    /// Tell it that a list of the server added under `namespace` changed, if it is told that.
    pub(crate) async fn notify_list_changed(&self, namespace: Option<&str>, kind: ListKind) {
        let Some(peer) = self.peer.get() else { return };
        if !self.lists.get().is_some_and(|l| l.tells(namespace, kind)) {
            return;
        }
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

    /// The client finished its handshake: join the relay (told of list changes as `lists`
    /// says), link every upstream to it, fetch the client's roots if it has any, and count it
    /// with `telemetry` until it ends.
    pub(crate) fn start(
        self: &Arc<Self>,
        board: &PegBoard,
        peer: Peer<RoleServer>,
        lists: Arc<dyn Lists>,
        telemetry: Option<&Telemetry>,
    ) {
        let _ = self.lists.set(lists);
        if let Some(telemetry) = telemetry {
            // A second handshake on one session is not a second session.
            self.counted.get_or_init(|| telemetry.session_opened());
        }
        let has_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let _ = self.peer.set(peer);
        self.relay.add(Arc::clone(self) as Arc<dyn Member>);
        attach_hubs(board, &self.relay);
        if has_roots {
            let session = self.clone();
            let board = board.clone();
            tokio::spawn(async move { session.refresh_roots(&board).await });
        }
    }

    /// Ask the client for its roots again; tell the upstreams when the gateway's roots changed.
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    pub(crate) async fn refresh_roots(&self, board: &PegBoard) {
        let Some(peer) = self.peer.get() else { return };
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
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    pub(crate) async fn set_level(&self, board: &PegBoard, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
        let Some(min) = self.relay.min_level() else {
            return;
        };
        for (peer, _) in board.service_peers() {
            let logs = peer
                .peer_info()
                .is_some_and(|info| info.capabilities.logging.is_some());
            if logs && let Err(e) = peer.set_level(SetLevelRequestParams::new(min)).await {
                tracing::debug!("logging/setLevel upstream failed: {e}");
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.ended.cancel();
        self.relay.remove(self.id);
    }
}

impl OwnConnections for Session {
    fn own_connection<'a>(
        &'a self,
        opener: &'a Arc<dyn OpenPerSession>,
    ) -> Boxed<'a, OwnConnection> {
        Session::own_connection(self, opener)
    }
}

/// Link every upstream hub on the board to `relay` (new upstreams appear with reloads).
pub(crate) fn attach_hubs(board: &PegBoard, relay: &Arc<Relay>) {
    for (_, extension) in board.service_peers() {
        if let Some(hub) = extension.and_then(|e| e.get::<Hub>()) {
            hub.attach(relay.clone());
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

impl Member for Session {
    fn id(&self) -> u64 {
        self.id
    }

    fn is_closed(&self) -> bool {
        Session::is_closed(self)
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn log_level(&self) -> Option<LoggingLevel> {
        Session::log_level(self)
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn roots(&self) -> Vec<Root> {
        Session::roots(self)
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn notify_log(&self, message: LoggingMessageNotificationParam) -> Boxed<'_, ()> {
        Box::pin(Session::notify_log(self, message))
    }

    fn notify_resource_updated<'a>(&'a self, uri: &'a str) -> Boxed<'a, ()> {
        Box::pin(Session::notify_resource_updated(self, uri))
    }

    fn notify_list_changed<'a>(
        &'a self,
        namespace: Option<&'a str>,
        kind: ListKind,
    ) -> Boxed<'a, ()> {
        Box::pin(Session::notify_list_changed(self, namespace, kind))
    }
}
