//! The histogram series of the operation metrics, found per call without a lock.
//!
//! A group is one label set without `error_type` (method, tool, server, client); it holds one
//! histogram per outcome: success's inline, each error type's made on its first use. An
//! operation looks its group up when it starts (a hash of three short strings in a copy-on-write
//! map: no lock, no allocation once the group exists) and records into it when it ends: two
//! relaxed atomic adds.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use indexmap::{Equivalent, IndexMap};

use super::copy_on_write::CopyOnWrite;
use super::histogram::{AtomicHistogram, OPERATION};
use super::labels::{ErrorType, Method, UNKNOWN};
use super::servers::ServerEntry;

/// Groups one map holds by default; past it, new label sets fold into `_unknown` tools (bounded
/// memory even if a caller passes names it should not). A new group copies the map (groups are
/// made while a board warms up, looked up on every call), so the cap also bounds that copy.
pub const MAX_GROUPS: usize = 10_000;

/// A group's labels (`client` is empty for the client-side metric, which has no such label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpKey {
    /// `mcp_method_name`.
    pub method: Method,
    /// `gen_ai_tool_name` (empty unless `tools/call`).
    pub tool: Arc<str>,
    /// `pegboard_server` (empty when no server is involved).
    pub server: Arc<str>,
    /// `pegboard_client`.
    pub client: Arc<str>,
    /// `pegboard_caller`: what made the request inside the gateway (`code`: a `run_code`
    /// script), empty for a client's own request (and then no such label is written).
    pub via: &'static str,
}

/// An [`OpKey`] borrowed from the caller's strings, to look a group up without allocating.
#[derive(Debug, Clone, Copy)]
pub struct OpKeyRef<'a> {
    /// As [`OpKey::method`].
    pub method: Method,
    /// As [`OpKey::tool`].
    pub tool: &'a str,
    /// As [`OpKey::server`].
    pub server: &'a str,
    /// As [`OpKey::client`].
    pub client: &'a str,
    /// As [`OpKey::via`].
    pub via: &'static str,
}

fn hash_parts<H: Hasher>(
    method: Method,
    (tool, server, client): (&str, &str, &str),
    via: &str,
    state: &mut H,
) {
    method.hash(state);
    tool.hash(state);
    server.hash(state);
    client.hash(state);
    via.hash(state);
}

impl Hash for OpKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_parts(
            self.method,
            (&self.tool, &self.server, &self.client),
            self.via,
            state,
        );
    }
}

impl Hash for OpKeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_parts(
            self.method,
            (self.tool, self.server, self.client),
            self.via,
            state,
        );
    }
}

impl Equivalent<OpKey> for OpKeyRef<'_> {
    fn equivalent(&self, key: &OpKey) -> bool {
        self.method == key.method
            && self.tool == &*key.tool
            && self.server == &*key.server
            && self.client == &*key.client
            && self.via == key.via
    }
}

impl From<OpKeyRef<'_>> for OpKey {
    fn from(key: OpKeyRef<'_>) -> Self {
        Self {
            method: key.method,
            tool: Arc::from(key.tool),
            server: Arc::from(key.server),
            client: Arc::from(key.client),
            via: key.via,
        }
    }
}

/// One label set's histograms, one per outcome.
#[derive(Debug)]
pub struct OpGroup {
    /// Its labels.
    pub key: OpKey,
    /// The server's entry, for the status window (server-side groups with a known server).
    pub server: Option<Arc<ServerEntry>>,
    /// Successes: inline, where the group is (most operations succeed).
    ok: AtomicHistogram,
    /// Each [`ErrorType`]'s, by its index.
    failed: [OnceLock<Box<AtomicHistogram>>; ErrorType::ALL.len()],
}

impl OpGroup {
    fn new(key: OpKey, server: Option<Arc<ServerEntry>>) -> Self {
        Self {
            key,
            server,
            ok: AtomicHistogram::new(OPERATION),
            failed: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Count an operation that ended with `error` after `elapsed`.
    #[inline]
    pub fn observe(&self, error: Option<ErrorType>, elapsed: Duration) {
        match error {
            None => self.ok.observe(elapsed),
            Some(e) => self.observe_failed(e, elapsed),
        }
    }

    /// Out of the success's line of code (see `operation.rs`).
    #[cold]
    #[inline(never)]
    fn observe_failed(&self, error: ErrorType, elapsed: Duration) {
        if let Some(cell) = self.failed.get(error.index()) {
            cell.get_or_init(|| Box::new(AtomicHistogram::new(OPERATION)))
                .observe(elapsed);
        }
    }

    /// The histograms recorded so far, with their outcome (success's once it has a count).
    pub fn outcomes(&self) -> impl Iterator<Item = (Option<ErrorType>, &AtomicHistogram)> {
        let ok = (self.ok.count() > 0).then_some((None, &self.ok));
        let failed = ErrorType::ALL
            .iter()
            .zip(self.failed.iter())
            .filter_map(|(e, cell)| cell.get().map(|h| (Some(*e), &**h)));
        ok.into_iter().chain(failed)
    }
}

type Map = IndexMap<OpKey, Arc<OpGroup>, foldhash::fast::RandomState>;

/// The groups of one metric.
#[derive(Debug)]
pub struct SeriesMap {
    map: CopyOnWrite<Map>,
    cap: usize,
}

impl Default for SeriesMap {
    fn default() -> Self {
        Self::with_cap(MAX_GROUPS)
    }
}

impl SeriesMap {
    /// A map that folds new tools into `_unknown` once it holds `cap` groups.
    #[must_use]
    pub fn with_cap(cap: usize) -> Self {
        Self {
            map: CopyOnWrite::default(),
            cap,
        }
    }

    /// The group of `key`, made if new (with the server entry `server` gives, for the status
    /// window).
    #[inline]
    pub fn group(
        &self,
        key: OpKeyRef<'_>,
        server: impl FnOnce() -> Option<Arc<ServerEntry>>,
    ) -> Arc<OpGroup> {
        if let Some(group) = self.map.load().get(&key) {
            return Arc::clone(group);
        }
        self.insert(key, server())
    }

    #[cold]
    fn insert(&self, key: OpKeyRef<'_>, server: Option<Arc<ServerEntry>>) -> Arc<OpGroup> {
        self.map.write(|map| {
            if let Some(group) = map.get(&key) {
                return Arc::clone(group);
            }
            let key = if map.len() >= self.cap && !key.tool.is_empty() && key.tool != UNKNOWN {
                OpKeyRef {
                    tool: UNKNOWN,
                    ..key
                }
            } else {
                key
            };
            if let Some(group) = map.get(&key) {
                return Arc::clone(group);
            }
            let owned = OpKey::from(key);
            let group = Arc::new(OpGroup::new(owned.clone(), server));
            map.to_mut().insert(owned, Arc::clone(&group));
            group
        })
    }

    /// Every group, in creation order.
    #[must_use]
    pub fn all(&self) -> Arc<Map> {
        self.map.load_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(tool: &'a str, client: &'a str) -> OpKeyRef<'a> {
        OpKeyRef {
            method: Method::ToolsCall,
            tool,
            server: "units",
            client,
            via: "",
        }
    }

    #[test]
    fn the_same_labels_find_the_same_group() {
        let map = SeriesMap::default();
        let a = map.group(key("units-convert", "default"), || None);
        let b = map.group(key("units-convert", "default"), || None);
        let c = map.group(key("units-convert", "ci"), || None);
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        a.observe(None, Duration::from_millis(1));
        b.observe(Some(ErrorType::ToolError), Duration::from_millis(1));
        let outcomes: Vec<_> = a.outcomes().map(|(e, h)| (e, h.snapshot().count)).collect();
        assert_eq!(outcomes, vec![(None, 1), (Some(ErrorType::ToolError), 1)]);
        // Success is listed once it has a count, as each error type is.
        c.observe(Some(ErrorType::Timeout), Duration::from_secs(1));
        let listed: Vec<_> = c.outcomes().map(|(e, _)| e).collect();
        assert_eq!(listed, vec![Some(ErrorType::Timeout)]);
        assert_eq!(map.all().len(), 2);
    }

    #[test]
    fn past_the_cap_new_tools_fold_into_unknown() {
        let map = SeriesMap::with_cap(100);
        for i in 0..100 {
            map.group(key(&format!("t{i}"), "default"), || None);
        }
        let folded = map.group(key("one-too-many", "default"), || None);
        assert_eq!(&*folded.key.tool, UNKNOWN);
        assert_eq!(map.all().len(), 101);
        let again = map.group(key("another", "default"), || None);
        assert!(Arc::ptr_eq(&folded, &again));
    }
}
