//! The metrics' state: operation series, gauges, counters, the registered servers and clients.
//! Everything a call touches is an atomic or a lock-free lookup; label values are resolved here,
//! against the config's names, so none is ever a string a client made up.

use std::any::Any;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use super::copy_on_write::CopyOnWrite;
use super::histogram::{AtomicHistogram, SESSION};
use super::labels::{DEFAULT_CLIENT, DenyReason, Method, UNKNOWN};
use super::series::{MAX_GROUPS, OpGroup, OpKey, OpKeyRef, SeriesMap};
use super::servers::Servers;

type ClientSet = HashSet<Arc<str>, foldhash::fast::RandomState>;

/// A tool call's two groups: its downstream request's and its upstream request's.
#[derive(Debug)]
pub struct ToolCallGroups {
    /// In `mcp_server_operation_duration_seconds`.
    pub server: Arc<OpGroup>,
    /// In `mcp_client_operation_duration_seconds`.
    pub client: Arc<OpGroup>,
}

type ToolCallMap = indexmap::IndexMap<OpKey, Arc<ToolCallGroups>, foldhash::fast::RandomState>;

/// Where a call's route keeps what telemetry found for its tool, so the next call of it finds
/// its groups there and not in the gateway's maps: one slot per tool of one server connection
/// (whose owner never reads it). See [`Metrics::tool_call_groups`].
pub type ToolMemo = OnceLock<Arc<dyn Any + Send + Sync>>;

/// What a [`ToolMemo`] holds: the groups of the tool's calls by one client, in one [`Metrics`].
struct Remembered {
    /// Whose groups they are (a `Weak`: the address stays this metrics' while it is held).
    metrics: Weak<Metrics>,
    groups: Arc<ToolCallGroups>,
}

/// All metric state of one gateway.
#[derive(Debug)]
pub struct Metrics {
    /// The configured servers (gauges, counters, status windows).
    pub servers: Servers,
    clients: CopyOnWrite<ClientSet>,
    /// `mcp_server_operation_duration_seconds`.
    pub server_ops: SeriesMap,
    /// `mcp_client_operation_duration_seconds`.
    pub client_ops: SeriesMap,
    /// `mcp_server_session_duration_seconds`.
    pub session_duration: AtomicHistogram,
    /// Each routed tool call's groups by its labels (see [`Metrics::tool_call_groups`]).
    tool_calls: CopyOnWrite<ToolCallMap>,
    sessions: AtomicI64,
    in_flight: AtomicI64,
    denied: [AtomicU64; DenyReason::ALL.len()],
    spans_dropped: Arc<AtomicU64>,
    /// Round trips to the store that failed (shared with the store's handle).
    store_errors: Arc<AtomicU64>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            servers: Servers::default(),
            clients: CopyOnWrite::default(),
            server_ops: SeriesMap::default(),
            client_ops: SeriesMap::default(),
            session_duration: AtomicHistogram::new(SESSION),
            tool_calls: CopyOnWrite::default(),
            sessions: AtomicI64::new(0),
            in_flight: AtomicI64::new(0),
            denied: std::array::from_fn(|_| AtomicU64::new(0)),
            spans_dropped: Arc::new(AtomicU64::new(0)),
            store_errors: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// The `gen_ai_tool_name` value: the board name for a tool call (`_unknown` when it is not on the
/// board), nothing for other methods.
#[inline]
fn tool_label(method: Method, tool: Option<&str>) -> &str {
    if method.is_tool_call() {
        tool.unwrap_or(UNKNOWN)
    } else {
        ""
    }
}

impl Metrics {
    /// Let `name` be a `pegboard_client` value (a client of the config).
    pub fn register_client(&self, name: &str) {
        self.clients.write(|clients| {
            if !clients.contains(name) {
                clients.to_mut().insert(Arc::from(name));
            }
        });
    }

    /// The `pegboard_server` value of `server`: its name when registered, `_unknown` when
    /// not, empty when there is none.
    #[inline]
    fn server_label<'a>(&self, server: Option<&'a str>) -> &'a str {
        match server {
            None => "",
            Some(name) if self.servers.contains(name) => name,
            Some(_) => UNKNOWN,
        }
    }

    /// The group of a downstream request (labels resolved and bounded here).
    #[inline]
    pub fn server_group(
        &self,
        method: Method,
        tool: Option<&str>,
        server: Option<&str>,
        client: Option<&str>,
    ) -> Arc<OpGroup> {
        let server_value = self.server_label(server);
        let client_value = match client {
            None => DEFAULT_CLIENT,
            Some(c) if c == DEFAULT_CLIENT || self.clients.load().contains(c) => c,
            Some(_) => UNKNOWN,
        };
        let key = OpKeyRef {
            method,
            tool: tool_label(method, tool),
            server: server_value,
            client: client_value,
        };
        self.server_ops
            .group(key, || self.servers.get(server_value))
    }

    /// The groups of a `tools/call` of `tool` (a board name; `original` on its server), routed
    /// to `server`, by `client`: one lookup for both, where [`Metrics::server_group`] and
    /// [`Metrics::client_group`] make five (each label checked against the config's names,
    /// then each series). A call touches fewer of the gateway's memory lines this way, which
    /// is most of what metrics cost a call when calls are few (`crates/pegboard-load`).
    /// Kept only when every label is the name given (none folded to `_unknown`, which a server
    /// not registered yet would be).
    ///
    /// `memo` is the route's slot for this tool (on `server`'s connection, under the name
    /// `original`), when it has one: once the groups are kept, they are remembered there for
    /// the first client that calls it, and its calls find them without a lookup. At one call
    /// in flight a call finds the gateway's data where the other processes on its core left
    /// it, and a lookup reads several lines of it: the map, its index, the keys' strings
    /// (`crates/pegboard-load/README.md`).
    pub fn tool_call_groups(
        self: &Arc<Self>,
        tool: &str,
        original: &str,
        server: &str,
        client: Option<&str>,
        memo: Option<&ToolMemo>,
    ) -> Arc<ToolCallGroups> {
        let client_name = client.unwrap_or(DEFAULT_CLIENT);
        if let Some(remembered) = memo
            .and_then(OnceLock::get)
            .and_then(|kept| kept.downcast_ref::<Remembered>())
            && std::ptr::eq(remembered.metrics.as_ptr(), Arc::as_ptr(self))
            && *remembered.groups.server.key.tool == *tool
            && *remembered.groups.server.key.client == *client_name
        {
            return Arc::clone(&remembered.groups);
        }
        let key = OpKeyRef {
            method: Method::ToolsCall,
            tool,
            server,
            client: client_name,
        };
        if let Some(groups) = self.tool_calls.load().get(&key)
            && *groups.client.key.tool == *original
        {
            // Only while the slot is empty: for a client after its first, a call would
            // otherwise make a `Remembered` only to have the slot refuse it.
            if let Some(memo) = memo.filter(|memo| memo.get().is_none()) {
                self.remember(memo, groups);
            }
            return Arc::clone(groups);
        }
        self.new_tool_call(key, original, client)
    }

    /// Keep `groups` in `memo`, if it holds nothing yet (its first client's calls are the fast
    /// ones; another client's are looked up).
    #[cold]
    #[inline(never)]
    fn remember(self: &Arc<Self>, memo: &ToolMemo, groups: &Arc<ToolCallGroups>) {
        let _ = memo.set(Arc::new(Remembered {
            metrics: Arc::downgrade(self),
            groups: Arc::clone(groups),
        }));
    }

    /// [`Metrics::tool_call_groups`] the first time (or, for labels it does not keep, each
    /// time).
    #[cold]
    #[inline(never)]
    fn new_tool_call(
        &self,
        key: OpKeyRef<'_>,
        original: &str,
        client: Option<&str>,
    ) -> Arc<ToolCallGroups> {
        let OpKeyRef {
            tool,
            server,
            client: client_name,
            ..
        } = key;
        let groups = Arc::new(ToolCallGroups {
            server: self.server_group(Method::ToolsCall, Some(tool), Some(server), client),
            client: self.client_group(Method::ToolsCall, Some(original), server),
        });
        let named = |k: &OpKey| *k.server == *server && *k.tool != *UNKNOWN;
        if named(&groups.server.key)
            && named(&groups.client.key)
            && *groups.server.key.client == *client_name
        {
            self.keep_tool_call(key, &groups);
        }
        groups
    }

    #[cold]
    fn keep_tool_call(&self, key: OpKeyRef<'_>, groups: &Arc<ToolCallGroups>) {
        self.tool_calls.write(|map| {
            if map.len() < MAX_GROUPS {
                map.to_mut().insert(OpKey::from(key), Arc::clone(groups));
            }
        });
    }

    /// The group of an upstream request (`tool` is the server's own name for it).
    #[inline]
    pub fn client_group(&self, method: Method, tool: Option<&str>, server: &str) -> Arc<OpGroup> {
        let key = OpKeyRef {
            method,
            tool: tool_label(method, tool),
            server: self.server_label(Some(server)),
            client: "",
        };
        self.client_ops.group(key, || None)
    }

    /// A downstream request began.
    #[inline]
    pub fn call_started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A downstream request ended.
    #[inline]
    pub fn call_ended(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// A session opened.
    pub fn session_opened(&self) {
        self.sessions.fetch_add(1, Ordering::Relaxed);
    }

    /// A session that lasted `lasted` closed.
    pub fn session_closed(&self, lasted: Duration) {
        self.sessions.fetch_sub(1, Ordering::Relaxed);
        self.session_duration.observe(lasted);
    }

    /// Count a refused request.
    pub fn denied(&self, reason: DenyReason) {
        if let Some(c) = self.denied.get(reason.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counter of spans dropped by a full export queue (shared with the exporter).
    #[must_use]
    pub fn spans_dropped_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.spans_dropped)
    }

    /// The counter of the store's failed round trips (shared with the store's handle).
    #[must_use]
    pub fn store_errors_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.store_errors)
    }

    /// The store's failed round trips so far.
    #[must_use]
    pub fn store_errors(&self) -> u64 {
        self.store_errors.load(Ordering::Relaxed)
    }

    /// Sessions open now.
    #[must_use]
    pub fn sessions(&self) -> i64 {
        self.sessions.load(Ordering::Relaxed)
    }

    /// Downstream requests in flight now.
    #[must_use]
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Refused requests for `reason` so far.
    #[must_use]
    pub fn denied_count(&self, reason: DenyReason) -> u64 {
        self.denied
            .get(reason.index())
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Spans dropped so far.
    #[must_use]
    pub fn spans_dropped(&self) -> u64 {
        self.spans_dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_calls_groups_are_the_ones_looked_up_apart_and_kept_only_when_named() {
        let m = Arc::new(Metrics::default());
        m.register_client("ci");
        // Its server not registered yet: `_unknown`, and not kept.
        let early = m.tool_call_groups("units-convert", "convert", "units", None, None);
        assert_eq!(&*early.server.key.server, UNKNOWN);
        m.servers.register("units");
        let a = m.tool_call_groups("units-convert", "convert", "units", None, None);
        let b = m.tool_call_groups("units-convert", "convert", "units", None, None);
        assert!(Arc::ptr_eq(&a, &b), "kept once named");
        assert!(Arc::ptr_eq(
            &a.server,
            &m.server_group(
                Method::ToolsCall,
                Some("units-convert"),
                Some("units"),
                None
            )
        ));
        assert!(Arc::ptr_eq(
            &a.client,
            &m.client_group(Method::ToolsCall, Some("convert"), "units")
        ));
        assert!(a.server.server.is_some(), "with the server's status window");
        let ci = m.tool_call_groups("units-convert", "convert", "units", Some("ci"), None);
        assert_eq!(&*ci.server.key.client, "ci");
        assert!(Arc::ptr_eq(&ci.client, &a.client));
        // The same board name for another original (a reload): looked up again.
        let moved = m.tool_call_groups("units-convert", "convert2", "units", None, None);
        assert_eq!(&*moved.client.key.tool, "convert2");
        let stranger = m.tool_call_groups("units-convert", "convert", "units", Some("x"), None);
        assert_eq!(&*stranger.server.key.client, UNKNOWN);
    }

    #[test]
    fn a_routes_memo_gives_the_groups_a_lookup_would_for_its_first_client_only() {
        let m = Arc::new(Metrics::default());
        m.servers.register("units");
        m.register_client("ci");
        let memo = ToolMemo::new();
        let call = |m: &Arc<Metrics>, client| {
            m.tool_call_groups("units-convert", "convert", "units", client, Some(&memo))
        };
        let first = call(&m, None);
        assert!(memo.get().is_none(), "remembered once kept, not before");
        let second = call(&m, None);
        assert!(memo.get().is_some());
        let third = call(&m, None);
        assert!(Arc::ptr_eq(&first, &second) && Arc::ptr_eq(&second, &third));
        // Another client's, another board name's, another gateway's: their own, as looked up.
        let ci = call(&m, Some("ci"));
        assert_eq!(&*ci.server.key.client, "ci");
        assert!(Arc::ptr_eq(
            &ci,
            &m.tool_call_groups("units-convert", "convert", "units", Some("ci"), None)
        ));
        let renamed = m.tool_call_groups("units-cvt", "convert", "units", None, Some(&memo));
        assert_eq!(&*renamed.server.key.tool, "units-cvt");
        let other = Arc::new(Metrics::default());
        other.servers.register("units");
        let theirs = call(&other, None);
        assert!(!Arc::ptr_eq(&theirs, &first));
        assert!(Arc::ptr_eq(
            &theirs,
            &other.tool_call_groups("units-convert", "convert", "units", None, None)
        ));
        assert!(Arc::ptr_eq(&call(&m, None), &first), "still the first's");
    }

    #[test]
    fn label_values_come_from_the_config_never_from_the_caller() {
        let m = Metrics::default();
        m.servers.register("units");
        m.register_client("ci");
        let g = m.server_group(Method::ToolsCall, None, Some("units"), None);
        assert_eq!(
            (&*g.key.tool, &*g.key.server, &*g.key.client),
            ("_unknown", "units", "default")
        );
        assert!(g.server.is_some());
        let g = m.server_group(
            Method::ToolsCall,
            Some("units-convert"),
            Some("evil"),
            Some("x"),
        );
        assert_eq!(
            (&*g.key.tool, &*g.key.server, &*g.key.client),
            ("units-convert", "_unknown", "_unknown")
        );
        assert!(g.server.is_none());
        let g = m.server_group(Method::ToolsList, Some("ignored"), None, Some("ci"));
        assert_eq!(
            (&*g.key.tool, &*g.key.server, &*g.key.client),
            ("", "", "ci")
        );
        let g = m.client_group(Method::ToolsCall, Some("convert"), "units");
        assert_eq!((&*g.key.tool, &*g.key.server), ("convert", "units"));
    }
}
