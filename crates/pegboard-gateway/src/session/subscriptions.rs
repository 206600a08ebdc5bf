//! Resource subscriptions: many sessions on one upstream subscription (PASSTHROUGH.md §3).
//!
//! The upstream connection is shared, so the gateway subscribes upstream once per resource,
//! when the first session asks, and unsubscribes when the last one leaves (or ends); each
//! `notifications/resources/updated` goes to the sessions subscribed to that resource only.
//!
//! Every upstream subscribe and unsubscribe of one resource runs under that resource's own
//! async lock, so they reach the server in the order the gateway decided them, and a session
//! is told it is subscribed only once the server said so (to it, or to an earlier session on
//! the same connection). A server that came back on a new connection (restart, reload) is
//! subscribed again by [`Subscriptions::resync`].

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use pegboard::{Extension, PegBoard, ResourceTarget};
use rmcp::{
    Peer, RoleClient,
    model::{SubscribeRequestParams, UnsubscribeRequestParams},
};

/// A resource at a server: its namespace (`""` for none) and its URI there.
type Key = (String, String);

/// The connection a resource is subscribed on upstream.
struct Upstream {
    peer: Peer<RoleClient>,
    /// The connection's extension (the gateway's hub): a new one means a new connection.
    extension: Option<Extension>,
}

impl Upstream {
    fn of(target: &ResourceTarget) -> Self {
        Self {
            peer: target.peer.clone(),
            extension: target.extension.clone(),
        }
    }

    /// Whether this subscription still lives on `target`'s connection.
    fn serves(&self, target: &ResourceTarget) -> bool {
        if self.peer.is_transport_closed() {
            return false;
        }
        match (&self.extension, &target.extension) {
            (Some(ours), Some(theirs)) => Arc::ptr_eq(&ours.0, &theirs.0),
            _ => true,
        }
    }
}

/// The upstream side of one resource: `None` while not subscribed there.
type Gate = Arc<tokio::sync::Mutex<Option<Upstream>>>;

struct Entry {
    /// Held across every upstream request for this resource.
    gate: Gate,
    /// The sessions told they are subscribed.
    sessions: HashSet<u64>,
    /// Operations between taking the gate and finishing: the entry stays while any runs.
    busy: usize,
}

/// Every subscription of one gateway's sessions.
#[derive(Default)]
pub(crate) struct Subscriptions {
    table: Mutex<HashMap<Key, Entry>>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions")
            .field("resources", &self.lock().len())
            .finish()
    }
}

fn key(namespace: Option<&str>, uri: &str) -> Key {
    (namespace.unwrap_or_default().to_string(), uri.to_string())
}

impl Subscriptions {
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Entry>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Mark an operation on `key` as running (creating its entry) and return its gate.
    fn enter(&self, key: &Key) -> Gate {
        let mut table = self.lock();
        let entry = table.entry(key.clone()).or_insert_with(|| Entry {
            gate: Gate::default(),
            sessions: HashSet::new(),
            busy: 0,
        });
        entry.busy += 1;
        entry.gate.clone()
    }

    /// An operation on `key` finished: the entry goes when nobody holds or uses it.
    fn leave(&self, key: &Key) {
        let mut table = self.lock();
        if let Some(entry) = table.get_mut(key) {
            entry.busy = entry.busy.saturating_sub(1);
            if entry.busy == 0 && entry.sessions.is_empty() {
                table.remove(key);
            }
        }
    }

    /// `session` subscribes to `target`; the first subscriber subscribes upstream.
    pub(crate) async fn subscribe(
        &self,
        session: u64,
        target: ResourceTarget,
    ) -> Result<(), rmcp::ServiceError> {
        self.join(session, target, false).await
    }

    /// A 2026-07-28 listen stream `listener` holds `target`, which its acknowledgment already
    /// accepted: when the upstream subscribe fails, the stream keeps holding it, and the
    /// resource is subscribed on the next board change that brings a working connection.
    pub(crate) async fn hold(
        &self,
        listener: u64,
        target: ResourceTarget,
    ) -> Result<(), rmcp::ServiceError> {
        self.join(listener, target, true).await
    }

    async fn join(
        &self,
        session: u64,
        target: ResourceTarget,
        hold_on_failure: bool,
    ) -> Result<(), rmcp::ServiceError> {
        let key = key(target.namespace.as_deref(), &target.original);
        let gate = self.enter(&key);
        let result = {
            let mut upstream = gate.lock().await;
            let subscribed = match upstream.as_ref() {
                Some(current) if current.serves(&target) => Ok(()),
                _ => subscribe_upstream(&target).await.map(|()| {
                    *upstream = Some(Upstream::of(&target));
                }),
            };
            if (subscribed.is_ok() || hold_on_failure)
                && let Some(entry) = self.lock().get_mut(&key)
            {
                entry.sessions.insert(session);
            }
            subscribed
        };
        self.leave(&key);
        result
    }

    /// `session` unsubscribes from `target`; the last subscriber unsubscribes upstream.
    pub(crate) async fn unsubscribe(&self, session: u64, target: ResourceTarget) {
        let key = key(target.namespace.as_deref(), &target.original);
        if !self.lock().contains_key(&key) {
            return;
        }
        let gate = self.enter(&key);
        self.release_if_unheld(&gate, &key, Some(session)).await;
        self.leave(&key);
    }

    /// Under `key`'s gate: drop `leaving` (after any subscribe of it that came first), then
    /// unsubscribe upstream when no session holds the resource any more.
    async fn release_if_unheld(&self, gate: &Gate, key: &Key, leaving: Option<u64>) {
        let mut upstream = gate.lock().await;
        let unheld = self.lock().get_mut(key).is_none_or(|entry| {
            if let Some(session) = leaving {
                entry.sessions.remove(&session);
            }
            entry.sessions.is_empty()
        });
        if unheld && let Some(current) = upstream.take() {
            unsubscribe_upstream(current.peer, key.1.clone()).await;
        }
    }

    /// A session ended: its subscriptions go, and upstream those nobody else holds.
    pub(crate) fn end_session(self: &Arc<Self>, session: u64) {
        let orphaned: Vec<(Key, Gate)> = {
            let mut table = self.lock();
            let mut orphaned = Vec::new();
            for (key, entry) in table.iter_mut() {
                if entry.sessions.remove(&session) && entry.sessions.is_empty() {
                    entry.busy += 1;
                    orphaned.push((key.clone(), entry.gate.clone()));
                }
            }
            orphaned
        };
        if orphaned.is_empty() {
            return;
        }
        // Called from `Drop`: tell the servers in the background, when a runtime is there.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let this = self.clone();
                runtime.spawn(async move {
                    for (key, gate) in orphaned {
                        this.release_if_unheld(&gate, &key, None).await;
                        this.leave(&key);
                    }
                });
            }
            Err(_) => {
                for (key, _) in orphaned {
                    self.leave(&key);
                }
            }
        }
    }

    /// Subscribe again, on their server's current connection, the resources sessions hold
    /// whose server came back on a new one (a restart or a reload); call it when the board
    /// changed. A resource whose server is not on the board now is left for a later call.
    pub(crate) async fn resync(&self, board: &PegBoard) {
        let keys: Vec<Key> = self.lock().keys().cloned().collect();
        for key in keys {
            let shown = if key.0.is_empty() {
                key.1.clone()
            } else {
                pegboard::uri::encode(&pegboard::uri::alias(&key.0), &key.1)
            };
            // A server that is down (not yet restarted) is left for the change that brings
            // it back.
            let Ok(target) = board.resource_target(&shown) else {
                continue;
            };
            if target.peer.is_transport_closed() {
                continue;
            }
            if target.namespace.as_deref().unwrap_or_default() != key.0 {
                continue;
            }
            let gate = self.enter(&key);
            {
                let mut upstream = gate.lock().await;
                let held = self
                    .lock()
                    .get(&key)
                    .is_some_and(|entry| !entry.sessions.is_empty());
                let stale = upstream.as_ref().is_none_or(|u| !u.serves(&target));
                if held && stale {
                    match subscribe_upstream(&target).await {
                        Ok(()) => *upstream = Some(Upstream::of(&target)),
                        Err(e) => tracing::warn!(
                            uri = shown,
                            "could not subscribe again after the server came back: {e}"
                        ),
                    }
                }
            }
            self.leave(&key);
        }
    }

    /// The sessions subscribed to `uri` at the server added under `namespace`.
    pub(crate) fn subscribers(&self, namespace: Option<&str>, uri: &str) -> Vec<u64> {
        self.lock()
            .get(&key(namespace, uri))
            .map(|entry| entry.sessions.iter().copied().collect())
            .unwrap_or_default()
    }
}

#[expect(deprecated, reason = "legacy-only, live in 2025-11-25")]
async fn subscribe_upstream(target: &ResourceTarget) -> Result<(), rmcp::ServiceError> {
    target
        .peer
        .subscribe(SubscribeRequestParams::new(target.original.clone()))
        .await
}

#[expect(deprecated, reason = "legacy-only, live in 2025-11-25")]
async fn unsubscribe_upstream(peer: Peer<RoleClient>, uri: String) {
    if let Err(e) = peer.unsubscribe(UnsubscribeRequestParams::new(uri)).await {
        tracing::debug!("resources/unsubscribe upstream failed: {e}");
    }
}
