//! The gateway's side of each upstream connection: the [`UpstreamClient`] handler it connects
//! with, and the [`Hub`] that ties that connection's in-flight calls to the downstream sessions
//! that made them (PASSTHROUGH.md §0–§2, §6).

pub mod child;
mod client;
pub(crate) mod flights;
pub(crate) mod generation;
pub mod limit;
pub mod limit_http;
mod message_id;
mod tap;

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError, RwLock, Weak},
};

pub use client::UpstreamClient;
pub(crate) use client::{can_elicit, client_error};
pub(crate) use flights::OwnedFlightGuard;
pub use flights::{Flight, FlightGuard};
pub use tap::ProgressTap;

use crate::{per_client::PerClient, relay::Relay};

/// Per upstream connection: its namespace, its in-flight calls, and the relay to the
/// downstream sessions (attached when the first session starts).
#[derive(Debug)]
pub struct Hub {
    namespace: String,
    /// The namespace the server was added to the board under (`None`: `"prefix": false`, its
    /// resource URIs are shown verbatim).
    board_namespace: Option<String>,
    flights: flights::Flights,
    relay: Mutex<Weak<Relay>>,
    /// Tools (original names) that answered a plain call with "requires task augmentation".
    task_tools: RwLock<HashSet<String>>,
    /// Tools that answered a plain call normally: their arguments need no copy kept for a
    /// task retry, so the hot path allocates nothing extra.
    plain_tools: RwLock<HashSet<String>>,
    /// The newest protocol version the server said it supports (`server/discover`), if it did.
    newest: std::sync::OnceLock<rmcp::model::ProtocolVersion>,
    /// Set on the shared connection of a `"session": "per-client"` server.
    per_client: std::sync::OnceLock<Arc<PerClient>>,
    /// A stdio server's express lane (see [`crate::express`]).
    lane: std::sync::OnceLock<Arc<crate::express::lane::Lane>>,
    /// Whether the connection speaks 2026-07-28 (learnt from its handshake on the first call).
    modern: std::sync::OnceLock<bool>,
    /// Calls of 2026-07-28 clients waiting for their answers to this server's requests, by
    /// token (see `bridge.rs`).
    parked: Mutex<std::collections::HashMap<String, crate::bridge::Parked>>,
}

impl Hub {
    /// A hub for the server added under `namespace`.
    pub fn new(namespace: impl Into<String>) -> Arc<Self> {
        let namespace = namespace.into();
        Self::build(namespace.clone(), Some(namespace))
    }

    /// A hub for a server added to the board without a namespace (`"prefix": false`): `name`
    /// prefixes its logger names, and its resource URIs and updates stay verbatim.
    pub fn unprefixed(name: impl Into<String>) -> Arc<Self> {
        Self::build(name.into(), None)
    }

    fn build(namespace: String, board_namespace: Option<String>) -> Arc<Self> {
        Arc::new(Self {
            namespace,
            board_namespace,
            flights: flights::Flights::default(),
            relay: Mutex::new(Weak::new()),
            task_tools: RwLock::new(HashSet::new()),
            plain_tools: RwLock::new(HashSet::new()),
            newest: std::sync::OnceLock::new(),
            per_client: std::sync::OnceLock::new(),
            lane: std::sync::OnceLock::new(),
            modern: std::sync::OnceLock::new(),
            parked: Mutex::new(std::collections::HashMap::new()),
        })
    }

    /// The server's namespace (the prefix of its logger names downstream).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Ask the server which protocol versions it supports (`server/discover`, once, 2 s bound); kept for
    /// [`Hub::newest_version`].
    pub async fn learn_versions(&self, peer: &rmcp::Peer<rmcp::RoleClient>) {
        if let Some(newest) = generation::newest_supported(peer).await {
            let _ = self.newest.set(newest);
        }
    }

    /// The newest protocol version the server supports, when it said so.
    pub fn newest_version(&self) -> Option<&rmcp::model::ProtocolVersion> {
        self.newest.get()
    }

    /// The namespace the server is on the board under (`None`: added without one); the key of
    /// its resource subscriptions.
    pub(crate) fn board_namespace(&self) -> Option<&str> {
        self.board_namespace.as_deref()
    }

    /// Link this hub to the gateway's downstream sessions (a live link stays).
    pub fn attach(&self, relay: &Arc<Relay>) {
        let mut current = self.relay.lock().unwrap_or_else(PoisonError::into_inner);
        if current.strong_count() == 0 {
            *current = Arc::downgrade(relay);
        }
    }

    pub(crate) fn relay(&self) -> Option<Arc<Relay>> {
        self.relay
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade()
    }

    /// Whether `tool` must be run as a 2025-11-25 task (it said so once).
    pub(crate) fn needs_task(&self, tool: &str) -> bool {
        let tools = self
            .task_tools
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        !tools.is_empty() && tools.contains(tool)
    }

    pub(crate) fn mark_task_tool(&self, tool: &str) {
        self.task_tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool.to_string());
    }

    /// Whether `tool` is known to answer plain calls.
    pub(crate) fn is_plain(&self, tool: &str) -> bool {
        self.plain_tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    pub(crate) fn mark_plain(&self, tool: &str) {
        self.plain_tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool.to_string());
    }

    /// For a `"session": "per-client"` server's shared connection: how to open a session's own.
    pub fn per_client(&self) -> Option<&Arc<PerClient>> {
        self.per_client.get()
    }

    pub(crate) fn set_per_client(&self, per_client: Arc<PerClient>) {
        let _ = self.per_client.set(per_client);
    }

    /// The express lane of a stdio server's connection.
    pub fn lane(&self) -> Option<&Arc<crate::express::lane::Lane>> {
        self.lane.get()
    }

    pub(crate) fn set_lane(&self, lane: Arc<crate::express::lane::Lane>) {
        let _ = self.lane.set(lane);
    }

    /// Whether the connection `peer` (this hub's) speaks 2026-07-28, where a call may answer
    /// `input_required`; read from its handshake once, then a load.
    pub(crate) fn speaks_2026(&self, peer: &rmcp::Peer<rmcp::RoleClient>) -> bool {
        *self.modern.get_or_init(|| crate::mrtr::speaks_2026(peer))
    }

    pub(crate) fn parked(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, crate::bridge::Parked>> {
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn flights(&self) -> &flights::Flights {
        &self.flights
    }
}
