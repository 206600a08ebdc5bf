//! What telemetry knows of each configured server: its state (and why), tools, restarts, messages
//! over the limit, and its rolling window. The set of names is the config's: a name that was
//! never registered is labelled `_unknown`, so label values stay bounded. A server removed by a
//! reload keeps its entry (state `stopped`): its counters stay monotonic if it comes back, and
//! the series that point at it never go stale.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;

use super::copy_on_write::CopyOnWrite;
use super::window::Window;

/// A server's state, as the supervisor sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerState {
    /// Configured, starting for the first time.
    Starting,
    /// Connected; its tools are on the board.
    Up,
    /// Exited or lost; being started again (with backoff).
    Restarting,
    /// Needs the user to log in (upstream OAuth) before it can start.
    NeedsLogin,
    /// Could not start, or gave up restarting; see the reason.
    Failed,
    /// Stopped on purpose (removed by a reload, or the gateway shutting down).
    Stopped,
}

impl ServerState {
    /// The name used in JSON and on the page.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ServerState::Starting => "starting",
            ServerState::Up => "up",
            ServerState::Restarting => "restarting",
            ServerState::NeedsLogin => "needs_login",
            ServerState::Failed => "failed",
            ServerState::Stopped => "stopped",
        }
    }
}

/// Longest reason kept (a server's stderr can be long; the page needs the first lines).
const REASON_MAX: usize = 500;

/// One server's entry.
#[derive(Debug)]
pub struct ServerEntry {
    /// The configured name (namespace): the `pegboard_server` label.
    pub name: Arc<str>,
    state: Mutex<(ServerState, Option<String>)>,
    tools: AtomicU64,
    restarts: AtomicU64,
    over_limit: AtomicU64,
    /// Calls, errors, latencies of the last five minutes.
    pub window: Window,
}

/// What a scrape or the status page reads of one server.
#[derive(Debug, Clone)]
pub struct ServerReading {
    /// The configured name.
    pub name: Arc<str>,
    /// Its state.
    pub state: ServerState,
    /// Why it is in that state (failed, needs login, restarting), if said.
    pub reason: Option<String>,
    /// Tools it has on the board.
    pub tools: u64,
    /// Restarts since the gateway started.
    pub restarts: u64,
    /// Messages it sent over the size limit.
    pub over_limit: u64,
}

impl ServerEntry {
    fn new(name: Arc<str>) -> Self {
        Self {
            name,
            state: Mutex::new((ServerState::Starting, None)),
            tools: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            over_limit: AtomicU64::new(0),
            window: Window::default(),
        }
    }

    /// Set the state (and why; cut to 500 characters).
    pub fn set_state(&self, state: ServerState, reason: Option<&str>) {
        let reason = reason.map(|r| {
            let mut r = r.trim().to_string();
            if let Some((cut, _)) = r.char_indices().nth(REASON_MAX) {
                r.truncate(cut);
                r.push('…');
            }
            r
        });
        *self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (state, reason);
    }

    /// Set the number of tools it has on the board.
    pub fn set_tools(&self, n: usize) {
        self.tools
            .store(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Count a restart.
    pub fn restarted(&self) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a message over the size limit.
    pub fn over_limit(&self) {
        self.over_limit.fetch_add(1, Ordering::Relaxed);
    }

    /// Its current values.
    #[must_use]
    pub fn read(&self) -> ServerReading {
        let (state, reason) = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        ServerReading {
            name: Arc::clone(&self.name),
            state,
            reason,
            tools: self.tools.load(Ordering::Relaxed),
            restarts: self.restarts.load(Ordering::Relaxed),
            over_limit: self.over_limit.load(Ordering::Relaxed),
        }
    }
}

type Map = IndexMap<Arc<str>, Arc<ServerEntry>, foldhash::fast::RandomState>;

/// The configured servers, read without a lock (a copy-on-write map: servers are added at
/// startup and on reloads, looked up on every call).
#[derive(Debug, Default)]
pub struct Servers {
    map: CopyOnWrite<Map>,
}

impl Servers {
    /// The entry of `name`, if it is registered.
    #[inline]
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Arc<ServerEntry>> {
        self.map.load().get(name).cloned()
    }

    /// Whether `name` is registered (no reference taken: the per-call check).
    #[inline]
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.map.load().contains_key(name)
    }

    /// The entry of `name`, registering it if new (config names only: never a name a client
    /// sent).
    pub fn register(&self, name: &str) -> Arc<ServerEntry> {
        if let Some(entry) = self.get(name) {
            return entry;
        }
        self.map.write(|map| {
            if let Some(entry) = map.get(name) {
                return Arc::clone(entry);
            }
            let name: Arc<str> = Arc::from(name);
            let entry = Arc::new(ServerEntry::new(Arc::clone(&name)));
            map.to_mut().insert(name, Arc::clone(&entry));
            entry
        })
    }

    /// Every entry, in registration order.
    #[must_use]
    pub fn all(&self) -> Vec<Arc<ServerEntry>> {
        self.map.load().values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registering_twice_gives_the_same_entry() {
        let servers = Servers::default();
        let a = servers.register("units");
        let b = servers.register("units");
        assert!(Arc::ptr_eq(&a, &b));
        a.set_tools(3);
        a.restarted();
        assert_eq!(servers.get("units").map(|e| e.read().tools), Some(3));
        assert!(servers.get("nope").is_none());
        assert_eq!(servers.all().len(), 1);
    }

    #[test]
    fn a_long_reason_is_cut() {
        let servers = Servers::default();
        let e = servers.register("x");
        e.set_state(ServerState::Failed, Some(&"é".repeat(2000)));
        let reading = e.read();
        assert_eq!(reading.state, ServerState::Failed);
        assert_eq!(
            reading.reason.map(|r| r.chars().count()),
            Some(REASON_MAX + 1)
        );
    }
}
