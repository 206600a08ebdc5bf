//! Resource subscriptions: many sessions on one upstream subscription (PASSTHROUGH.md §3).
//!
//! The upstream connection is shared, so the gateway subscribes upstream once per resource,
//! when the first session asks, and unsubscribes when the last one leaves (or ends); each
//! `notifications/resources/updated` goes to the sessions subscribed to that resource only.
// resources/subscribe is legacy-only in rmcp (2026-07-28 uses subscriptions/listen), and that
// is the generation the gateway relays it for.
#![allow(deprecated)]

use std::{
    collections::{HashMap, HashSet},
    sync::{Mutex, MutexGuard, PoisonError},
};

use pegboard::ResourceTarget;
use rmcp::{
    Peer, RoleClient,
    model::{SubscribeRequestParams, UnsubscribeRequestParams},
};

/// A resource at a server: its namespace (`""` for none) and its URI there.
type Key = (String, String);

struct Subscription {
    peer: Peer<RoleClient>,
    sessions: HashSet<u64>,
}

/// Every subscription of one gateway's sessions.
#[derive(Default)]
pub(crate) struct Subscriptions {
    table: Mutex<HashMap<Key, Subscription>>,
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
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Subscription>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `session` subscribes to `target`; the first subscriber subscribes upstream.
    pub(crate) async fn subscribe(
        &self,
        session: u64,
        target: ResourceTarget,
    ) -> Result<(), rmcp::ServiceError> {
        let key = key(target.namespace.as_deref(), &target.original);
        let first = {
            let mut table = self.lock();
            let entry = table.entry(key.clone()).or_insert_with(|| Subscription {
                peer: target.peer.clone(),
                sessions: HashSet::new(),
            });
            let first = entry.sessions.is_empty();
            entry.sessions.insert(session);
            first
        };
        if first
            && let Err(e) = target
                .peer
                .subscribe(SubscribeRequestParams::new(target.original))
                .await
        {
            self.remove(session, &key);
            return Err(e);
        }
        Ok(())
    }

    /// `session` unsubscribes from `target`; the last subscriber unsubscribes upstream.
    pub(crate) async fn unsubscribe(&self, session: u64, target: ResourceTarget) {
        let key = key(target.namespace.as_deref(), &target.original);
        if let Some(peer) = self.remove(session, &key) {
            unsubscribe_upstream(peer, key.1).await;
        }
    }

    /// A session ended: its subscriptions go, and upstream those nobody else holds.
    pub(crate) fn end_session(&self, session: u64) {
        let orphaned: Vec<(Peer<RoleClient>, String)> = {
            let mut table = self.lock();
            let mut orphaned = Vec::new();
            table.retain(|(_, uri), sub| {
                sub.sessions.remove(&session);
                if sub.sessions.is_empty() {
                    orphaned.push((sub.peer.clone(), uri.clone()));
                }
                !sub.sessions.is_empty()
            });
            orphaned
        };
        if orphaned.is_empty() {
            return;
        }
        // Called from `Drop`: tell the servers in the background, when a runtime is there.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for (peer, uri) in orphaned {
                    unsubscribe_upstream(peer, uri).await;
                }
            });
        }
    }

    /// The sessions subscribed to `uri` at the server added under `namespace`.
    pub(crate) fn subscribers(&self, namespace: Option<&str>, uri: &str) -> Vec<u64> {
        self.lock()
            .get(&key(namespace, uri))
            .map(|sub| sub.sessions.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Remove one subscriber; the upstream connection when it was the last one.
    fn remove(&self, session: u64, key: &Key) -> Option<Peer<RoleClient>> {
        let mut table = self.lock();
        let sub = table.get_mut(key)?;
        sub.sessions.remove(&session);
        if sub.sessions.is_empty() {
            return table.remove(key).map(|sub| sub.peer);
        }
        None
    }
}

async fn unsubscribe_upstream(peer: Peer<RoleClient>, uri: String) {
    if let Err(e) = peer.unsubscribe(UnsubscribeRequestParams::new(uri)).await {
        tracing::debug!("resources/unsubscribe upstream failed: {e}");
    }
}
