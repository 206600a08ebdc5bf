//! The gateway's downstream sessions, as the upstream connections see them: where a log message
//! fans out to, and the roots the gateway offers servers when no single caller can be asked.
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError, Weak,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::{
    model::{LoggingLevel, LoggingMessageNotificationParam, Root},
    service::SubscriptionSink,
};

use crate::{downstream::Session, subscriptions::Subscriptions};

/// Every live downstream session of one gateway.
#[derive(Debug, Default)]
pub struct Relay {
    sessions: Mutex<HashMap<u64, Weak<Session>>>,
    next_id: AtomicU64,
    subscriptions: Arc<Subscriptions>,
    /// 2026-07-28 clients' `subscriptions/listen` streams, by listener id (an id from the same
    /// counter as sessions, so subscriptions can hold either).
    listeners: Mutex<HashMap<u64, SubscriptionSink>>,
    /// HTTP sessions the express lane may serve (see [`crate::express`]).
    express_sessions: Arc<crate::express::sessions::Sessions>,
}

/// A listen stream registered with the relay; dropping it ends its subscriptions.
pub(crate) struct Listener {
    relay: Arc<Relay>,
    id: u64,
}

impl Listener {
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.relay
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        self.relay.subscriptions.end_session(self.id);
    }
}

/// Which list changed at a server.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ListKind {
    Prompts,
    Resources,
}

impl Relay {
    /// An empty relay.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The HTTP sessions the express lane may serve.
    pub(crate) fn express_sessions(&self) -> &Arc<crate::express::sessions::Sessions> {
        &self.express_sessions
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add(&self, session: &Arc<Session>) {
        self.lock().insert(session.id(), Arc::downgrade(session));
    }

    pub(crate) fn remove(&self, id: u64) {
        self.lock().remove(&id);
        self.subscriptions.end_session(id);
    }

    pub(crate) fn subscriptions(&self) -> &Subscriptions {
        &self.subscriptions
    }

    /// The board changed: a server that came back on a new connection (a restart, a reload)
    /// is subscribed again to the resources sessions hold on it. Every session's watcher may
    /// call it; a resource already on the current connection costs no request.
    pub(crate) fn resync_subscriptions(&self, board: &pegboard::PegBoard) {
        let subscriptions = self.subscriptions.clone();
        let board = board.clone();
        tokio::spawn(async move { subscriptions.resync(&board).await });
    }

    /// Register a 2026-07-28 listen stream for list changes and resource updates.
    pub(crate) fn listen(self: &Arc<Self>, sink: SubscriptionSink) -> Listener {
        let id = self.next_id();
        self.sinks().insert(id, sink);
        Listener {
            relay: self.clone(),
            id,
        }
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, SubscriptionSink>> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The listen streams, filtered by `keep(id)`; cloned out so nothing is locked while sending.
    fn sinks_where(&self, keep: impl Fn(u64) -> bool) -> Vec<SubscriptionSink> {
        self.sinks()
            .iter()
            .filter(|(id, _)| keep(**id))
            .map(|(_, sink)| sink.clone())
            .collect()
    }

    /// A server's resource changed: tell the sessions subscribed to it, under the board's URI.
    /// `namespace` is the one the server was added under (`None`: its URIs are shown verbatim).
    pub(crate) async fn resource_updated(&self, namespace: Option<&str>, uri: &str) {
        let subscribers = self.subscriptions.subscribers(namespace, uri);
        if subscribers.is_empty() {
            return;
        }
        let shown = match namespace {
            Some(namespace) => pegboard::uri::encode(&pegboard::uri::alias(namespace), uri),
            None => uri.to_string(),
        };
        for session in self.live() {
            if subscribers.contains(&session.id()) {
                session.notify_resource_updated(&shown).await;
            }
        }
        for sink in self.sinks_where(|id| subscribers.contains(&id)) {
            // The sink refuses what the stream did not accept; that is not an error here.
            let _ = sink.notify_resource_updated(shown.clone()).await;
        }
    }

    /// A server's prompts or resources changed: every session may list them again.
    pub(crate) async fn list_changed(&self, kind: ListKind) {
        for session in self.live() {
            session.notify_list_changed(kind).await;
        }
        for sink in self.sinks_where(|_| true) {
            let _ = match kind {
                ListKind::Prompts => sink.notify_prompt_list_changed().await,
                ListKind::Resources => sink.notify_resource_list_changed().await,
            };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Session>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sessions whose client is still connected (ended ones are dropped from the table).
    pub(crate) fn live(&self) -> Vec<Arc<Session>> {
        let mut sessions = self.lock();
        sessions.retain(|_, s| s.upgrade().is_some_and(|s| !s.is_closed()));
        sessions.values().filter_map(Weak::upgrade).collect()
    }

    /// The most verbose level any live session asked for (`None`: nobody asked).
    pub(crate) fn min_level(&self) -> Option<LoggingLevel> {
        self.live()
            .iter()
            .filter_map(|s| s.log_level())
            .min_by_key(|level| *level as u8)
    }

    /// Send a server's log message to every session that wants its level, the logger prefixed
    /// with the server's namespace (log messages carry no link to a request).
    pub(crate) async fn broadcast_log(
        &self,
        namespace: &str,
        mut message: LoggingMessageNotificationParam,
    ) {
        message.logger = Some(match message.logger.take() {
            Some(logger) => format!("{namespace}/{logger}"),
            None => namespace.to_string(),
        });
        for session in self.live() {
            if session
                .log_level()
                .is_none_or(|wanted| message.level as u8 >= wanted as u8)
            {
                session.notify_log(message.clone()).await;
            }
        }
    }

    /// The union of the live sessions' roots, deduplicated by URI, in session order.
    pub(crate) fn roots(&self) -> Vec<Root> {
        let mut sessions = self.live();
        sessions.sort_by_key(|s| s.id());
        let mut seen = std::collections::HashSet::new();
        sessions
            .iter()
            .flat_map(|s| s.roots())
            .filter(|root| seen.insert(root.uri.clone()))
            .collect()
    }
}
