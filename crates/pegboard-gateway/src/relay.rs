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

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, Root};

use crate::downstream::Session;

/// Every live downstream session of one gateway.
#[derive(Debug, Default)]
pub struct Relay {
    sessions: Mutex<HashMap<u64, Weak<Session>>>,
    next_id: AtomicU64,
}

impl Relay {
    /// An empty relay.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add(&self, session: &Arc<Session>) {
        self.lock().insert(session.id(), Arc::downgrade(session));
    }

    pub(crate) fn remove(&self, id: u64) {
        self.lock().remove(&id);
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
