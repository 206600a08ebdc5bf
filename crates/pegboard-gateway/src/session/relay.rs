//! The gateway's downstream sessions, as the upstream connections see them: where a log message
//! fans out to, and the roots the gateway offers servers when no single caller can be asked.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError, Weak,
        atomic::{AtomicU64, Ordering},
    },
};

#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    model::{LoggingLevel, LoggingMessageNotificationParam, Root},
    service::SubscriptionSink,
};

use super::{http_sessions::Sessions, lists::Lists, subscriptions::Subscriptions};
use crate::upstream::sides::{Boxed, Downstream, ListKind};

/// A downstream session as the relay reaches it (`downstream.rs` has them).
pub(crate) trait Member: Send + Sync {
    /// Its id (unique in the gateway).
    fn id(&self) -> u64;
    /// Whether its client has gone.
    fn is_closed(&self) -> bool;
    /// The most verbose log level it asked for, if it did.
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn log_level(&self) -> Option<LoggingLevel>;
    /// The roots its client offers.
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn roots(&self) -> Vec<Root>;
    /// Send it a server's log message.
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn notify_log(&self, message: LoggingMessageNotificationParam) -> Boxed<'_, ()>;
    /// Tell it a resource it subscribed to changed (under the board's URI).
    fn notify_resource_updated<'a>(&'a self, uri: &'a str) -> Boxed<'a, ()>;
    /// Tell it that the prompts or resources of the server added under `namespace` changed
    /// (when that is its client's business: see [`Lists::tells`]).
    fn notify_list_changed<'a>(
        &'a self,
        namespace: Option<&'a str>,
        kind: ListKind,
    ) -> Boxed<'a, ()>;
}

/// A listen stream: where to send, and which list changes it is told.
type Listening = (SubscriptionSink, Arc<dyn Lists>);

/// Every live downstream session of one gateway.
#[derive(Debug, Default)]
pub(crate) struct Relay {
    sessions: Mutex<HashMap<u64, Weak<dyn Member>>>,
    next_id: AtomicU64,
    subscriptions: Arc<Subscriptions>,
    /// 2026-07-28 clients' `subscriptions/listen` streams, by listener id (an id from the same
    /// counter as sessions, so subscriptions can hold either).
    listeners: Mutex<HashMap<u64, Listening>>,
    /// HTTP sessions the express lane may serve, by id.
    express_sessions: Arc<Sessions>,
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

impl Relay {
    /// An empty relay.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The HTTP sessions the express lane may serve.
    pub(crate) fn express_sessions(&self) -> &Arc<Sessions> {
        &self.express_sessions
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add(&self, session: Arc<dyn Member>) {
        self.lock().insert(session.id(), Arc::downgrade(&session));
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

    /// Register a 2026-07-28 listen stream for list changes (those `lists` tells) and resource
    /// updates.
    pub(crate) fn listen(
        self: &Arc<Self>,
        sink: SubscriptionSink,
        lists: Arc<dyn Lists>,
    ) -> Listener {
        let id = self.next_id();
        self.sinks().insert(id, (sink, lists));
        Listener {
            relay: self.clone(),
            id,
        }
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Listening>> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The listen streams, filtered by `keep(id, lists)`; cloned out so nothing is locked while
    /// sending.
    fn sinks_where(&self, keep: impl Fn(u64, &dyn Lists) -> bool) -> Vec<SubscriptionSink> {
        self.sinks()
            .iter()
            .filter(|(id, (_, lists))| keep(**id, lists.as_ref()))
            .map(|(_, (sink, _))| sink.clone())
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
        for sink in self.sinks_where(|id, _| subscribers.contains(&id)) {
            // The sink refuses what the stream did not accept; that is not an error here.
            let _ = sink.notify_resource_updated(shown.clone()).await;
        }
    }

    /// The prompts or resources of the server added under `namespace` changed: the sessions
    /// whose client may see them, and that listed them, may list them again.
    pub(crate) async fn list_changed(&self, namespace: Option<&str>, kind: ListKind) {
        for session in self.live() {
            session.notify_list_changed(namespace, kind).await;
        }
        for sink in self.sinks_where(|_, lists| lists.tells(namespace, kind)) {
            let _ = match kind {
                ListKind::Prompts => sink.notify_prompt_list_changed().await,
                ListKind::Resources => sink.notify_resource_list_changed().await,
            };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<dyn Member>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sessions whose client is still connected (ended ones are dropped from the table).
    pub(crate) fn live(&self) -> Vec<Arc<dyn Member>> {
        let mut sessions = self.lock();
        sessions.retain(|_, s| s.upgrade().is_some_and(|s| !s.is_closed()));
        sessions.values().filter_map(Weak::upgrade).collect()
    }

    /// The most verbose level any live session asked for (`None`: nobody asked).
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    pub(crate) fn min_level(&self) -> Option<LoggingLevel> {
        self.live()
            .iter()
            .filter_map(|s| s.log_level())
            .min_by_key(|level| *level as u8)
    }

    /// Send a server's log message to every session that wants its level, the logger prefixed
    /// with the server's namespace (log messages carry no link to a request).
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
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
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
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

impl Downstream for Relay {
    fn resource_updated<'a>(&'a self, namespace: Option<&'a str>, uri: &'a str) -> Boxed<'a, ()> {
        Box::pin(Relay::resource_updated(self, namespace, uri))
    }

    fn list_changed<'a>(&'a self, namespace: Option<&'a str>, kind: ListKind) -> Boxed<'a, ()> {
        Box::pin(Relay::list_changed(self, namespace, kind))
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn broadcast_log<'a>(
        &'a self,
        namespace: &'a str,
        message: LoggingMessageNotificationParam,
    ) -> Boxed<'a, ()> {
        Box::pin(Relay::broadcast_log(self, namespace, message))
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn roots(&self) -> Vec<Root> {
        Relay::roots(self)
    }
}
