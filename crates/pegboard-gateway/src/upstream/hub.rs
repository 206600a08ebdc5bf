//! [`Hub`]: one upstream connection's state that outlives a single call — its calls in flight,
//! what it learnt about its server (protocol generation, which tools need tasks), its express
//! lane, the link to the downstream sessions, and for a `"session": "per-client"` server how to
//! open one more connection to it for one session ([`OpenPerSession`]; PASSTHROUGH.md §0–§2, §6).

use std::{
    any::Any,
    collections::{HashMap, HashSet},
    fmt,
    sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak},
};

use rmcp::{Peer, RoleClient, model::ProtocolVersion};

use super::{
    flights::Flights,
    lane::Lane,
    sides::{Boxed, Downstream},
};
use crate::protocol::versions::upstream_speaks_2026;

/// A tool of one connection that answers plain calls (no task), found with each call's route.
#[derive(Debug, Default)]
pub(crate) struct PlainTool {
    /// What the layers above keep per tool of this connection, where a call finds it with its
    /// route and no lookup of its own (the call's metric series, see `crate::telemetry`). The
    /// hub never reads it.
    pub(crate) memo: OnceLock<Arc<dyn Any + Send + Sync>>,
}

/// Per upstream connection: its namespace, its in-flight calls, and the relay to the
/// downstream sessions (attached when the first session starts).
#[derive(Debug)]
pub struct Hub {
    namespace: String,
    /// The namespace the server was added to the board under (`None`: `"prefix": false`, its
    /// resource URIs are shown verbatim).
    board_namespace: Option<String>,
    flights: Arc<Flights>,
    /// The gateway's downstream sessions, once the first one started (see [`Hub::attach`]).
    downstream: Mutex<Option<Weak<dyn Downstream>>>,
    /// Tools (original names) that answered a plain call with "requires task augmentation".
    task_tools: RwLock<HashSet<String>>,
    /// Tools that answered a plain call normally: their arguments need no copy kept for a
    /// task retry, so the hot path allocates nothing extra.
    /// Looked up with every call's route (foldhash: tool names are the servers' own).
    plain_tools: RwLock<HashMap<String, Arc<PlainTool>, foldhash::fast::RandomState>>,
    /// The newest protocol version the server said it supports (`server/discover`), if it did.
    newest: OnceLock<ProtocolVersion>,
    /// Set on the shared connection of a `"session": "per-client"` server.
    per_session: OnceLock<Arc<dyn OpenPerSession>>,
    /// A stdio server's express lane (see [`super::lane`]).
    lane: OnceLock<Arc<Lane>>,
    /// The server's `maxResultTokens` (its results are cut to it).
    result_cap: OnceLock<usize>,
    /// Whether the connection speaks 2026-07-28 (learnt from its handshake on the first call).
    modern: OnceLock<bool>,
    /// An HTTP server's host and port (`server.address`, `server.port` of its spans).
    address: OnceLock<(String, Option<u16>)>,
    /// The config entry the server was started for (an error naming a clash names it).
    entry: OnceLock<String>,
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
            flights: Arc::default(),
            downstream: Mutex::new(None),
            task_tools: RwLock::new(HashSet::new()),
            plain_tools: RwLock::new(HashMap::default()),
            newest: OnceLock::new(),
            per_session: OnceLock::new(),
            lane: OnceLock::new(),
            modern: OnceLock::new(),
            result_cap: OnceLock::new(),
            address: OnceLock::new(),
            entry: OnceLock::new(),
        })
    }

    /// The server's namespace (the prefix of its logger names downstream).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Ask the server which protocol versions it supports (`server/discover`, once, 2 s bound); kept for
    /// [`Hub::newest_version`].
    pub async fn learn_versions(&self, peer: &Peer<RoleClient>) {
        if let Some(newest) = super::generation::newest_supported(peer).await {
            let _ = self.newest.set(newest);
        }
    }

    /// The newest protocol version the server supports, when it said so.
    pub(crate) fn newest_version(&self) -> Option<&ProtocolVersion> {
        self.newest.get()
    }

    /// The namespace the server is on the board under (`None`: added without one); the key of
    /// its resource subscriptions.
    pub(crate) fn board_namespace(&self) -> Option<&str> {
        self.board_namespace.as_deref()
    }

    /// Link this hub to the gateway's downstream sessions (a live link stays).
    pub(crate) fn attach(&self, downstream: Arc<dyn Downstream>) {
        let mut current = self
            .downstream
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if current.as_ref().is_none_or(|weak| weak.strong_count() == 0) {
            *current = Some(Arc::downgrade(&downstream));
        }
    }

    /// The gateway's downstream sessions, while any is linked.
    pub(crate) fn downstream(&self) -> Option<Arc<dyn Downstream>> {
        self.downstream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(Weak::upgrade)
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

    /// `tool`, when it is known to answer plain calls.
    pub(crate) fn plain_tool(&self, tool: &str) -> Option<Arc<PlainTool>> {
        self.plain_tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .cloned()
    }

    pub(crate) fn mark_plain(&self, tool: &str) {
        let mut tools = self
            .plain_tools
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if !tools.contains_key(tool) {
            tools.insert(tool.to_string(), Arc::default());
        }
    }

    /// For a `"session": "per-client"` server's shared connection: how to open a session's own.
    pub(crate) fn per_session(&self) -> Option<&Arc<dyn OpenPerSession>> {
        self.per_session.get()
    }

    pub(crate) fn set_per_session(&self, opener: Arc<dyn OpenPerSession>) {
        let _ = self.per_session.set(opener);
    }

    /// The express lane of a stdio server's connection.
    pub(crate) fn lane(&self) -> Option<&Arc<Lane>> {
        self.lane.get()
    }

    pub(crate) fn set_lane(&self, lane: Arc<Lane>) {
        let _ = self.lane.set(lane);
    }

    /// Whether the connection `peer` (this hub's) speaks 2026-07-28, where a call may answer
    /// `input_required`; read from its handshake once, then a load.
    pub(crate) fn speaks_2026(&self, peer: &Peer<RoleClient>) -> bool {
        *self.modern.get_or_init(|| upstream_speaks_2026(peer))
    }

    /// Cut the server's results to `tokens` (its `maxResultTokens`; set once, when it connects).
    pub(crate) fn set_result_cap(&self, tokens: Option<usize>) {
        if let Some(tokens) = tokens {
            let _ = self.result_cap.set(tokens);
        }
    }

    /// The config entry this server was started for (set once, when it is registered).
    pub(crate) fn set_entry(&self, name: &str) {
        let _ = self.entry.set(name.to_string());
    }

    /// The config entry this server was started for, once registered.
    pub(crate) fn entry(&self) -> Option<&str> {
        self.entry.get().map(String::as_str)
    }

    /// An HTTP server's `host` and `port`, as its spans name it (set once, when it connects).
    pub(crate) fn set_address(&self, host: &str, port: Option<u16>) {
        let _ = self.address.set((host.to_string(), port));
    }

    /// An HTTP server's host and port (none for a stdio server).
    pub(crate) fn address(&self) -> Option<(&str, Option<u16>)> {
        self.address
            .get()
            .map(|(host, port)| (host.as_str(), *port))
    }

    /// The server's `maxResultTokens`, if it has one.
    pub(crate) fn result_cap(&self) -> Option<usize> {
        self.result_cap.get().copied()
    }

    pub(crate) fn flights(&self) -> &Arc<Flights> {
        &self.flights
    }
}

/// Opens a server's connections for single sessions; kept in the [`Hub`] of its shared one.
pub(crate) trait OpenPerSession: Send + Sync + fmt::Debug {
    /// The server's config name.
    fn server(&self) -> &str;
    /// Start or connect the server once more, for session `session`.
    fn open(&self, session: u64) -> Boxed<'_, Result<SessionConnection, String>>;
    /// How many sessions' own connections are open now (a process counts until it exited).
    #[cfg_attr(
        not(feature = "testing"),
        expect(dead_code, reason = "read by the tests, through `testing`")
    )]
    fn open_connections(&self) -> tokio::sync::watch::Receiver<usize>;
}

/// One session's own connection to a server; dropping it closes the connection.
pub(crate) struct SessionConnection {
    /// Its rmcp client.
    pub(crate) peer: Peer<RoleClient>,
    /// Its calls in flight.
    pub(crate) hub: Arc<Hub>,
    /// What keeps it open (the service, a counter), dropped with it.
    pub(crate) _keep: Box<dyn Send + Sync>,
}

impl fmt::Debug for SessionConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionConnection")
            .field("hub", &self.hub.namespace())
            .finish_non_exhaustive()
    }
}
