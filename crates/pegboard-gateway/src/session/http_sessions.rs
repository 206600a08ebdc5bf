//! The HTTP sessions the express lane may serve: session id → the session's peer.
//!
//! A session is added when its client sends `notifications/initialized` (the handler reads the
//! id from the request's headers) and leaves when its connection closes. rmcp closes a session
//! that saw nothing for `--session-idle`; calls on the lane pass it by, so one goes rmcp's way
//! whenever the session has not been through rmcp for half that long, keeping it alive.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::lists::Lists;
use crate::identity::Client;
use crate::limits::{Activity, SessionBook};

#[derive(Debug)]
struct Open {
    peer: Peer<RoleServer>,
    /// The client that opened the session (only it may use it).
    client: Arc<Client>,
    /// The session's end (see [`Sessions::end`]).
    ended: CancellationToken,
    /// When a request of the session last went through rmcp.
    through_rmcp: Mutex<Instant>,
    /// What it was last answered of its lists.
    lists: Arc<dyn Lists>,
    /// Whether a request of it has come to the lane yet.
    on_lane: AtomicBool,
    /// Its activity in the session book, once the lane has looked it up.
    activity: OnceLock<Arc<Activity>>,
}

/// An open session, as a request of it on the lane needs it.
pub(crate) struct Lease {
    /// The session id, as kept in the registry (shared).
    pub(crate) id: Arc<str>,
    /// The session (one reference for its parts: this is made for every request on the lane).
    open: Arc<Open>,
    /// This is the session's first request on the lane.
    pub(crate) first_on_lane: bool,
}

impl Lease {
    /// The session's connection.
    pub(crate) fn peer(&self) -> &Peer<RoleServer> {
        &self.open.peer
    }

    /// The client that opened it.
    pub(crate) fn client(&self) -> &Arc<Client> {
        &self.open.client
    }

    /// Cancelled when the session ends.
    pub(crate) fn ended(&self) -> &CancellationToken {
        &self.open.ended
    }

    /// What it was last answered of its lists (the lane's `tools/list` answers too).
    pub(crate) fn lists(&self) -> &Arc<dyn Lists> {
        &self.open.lists
    }

    /// Its activity in `book`: looked up at the session's first request on the lane, kept
    /// for the next ones (`None` while the book does not hold the session).
    pub(crate) fn activity(&self, book: &SessionBook) -> Option<Arc<Activity>> {
        if let Some(activity) = self.open.activity.get() {
            return Some(Arc::clone(activity));
        }
        let activity = book.activity(&self.id)?;
        Some(Arc::clone(self.open.activity.get_or_init(|| activity)))
    }
}

/// The registry (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    map: RwLock<HashMap<Arc<str>, Arc<Open>, RandomState>>,
}

impl Sessions {
    /// The session `id` of `client` finished its handshake; `ended` is cancelled when it ends,
    /// `lists` keeps what it was answered.
    pub(crate) fn add(
        &self,
        id: &str,
        peer: Peer<RoleServer>,
        client: Arc<Client>,
        ended: CancellationToken,
        lists: Arc<dyn Lists>,
    ) {
        let entry = Arc::new(Open {
            peer,
            client,
            ended,
            through_rmcp: Mutex::new(Instant::now()),
            lists,
            on_lane: AtomicBool::new(false),
            activity: OnceLock::new(),
        });
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.into(), entry);
        // Its calls went rmcp's way until now (this runs when rmcp handles `initialized`).
        tracing::debug!("express: the session is up (id {id})");
    }

    /// The session `id` is gone (its connection closed).
    pub(crate) fn remove(&self, id: &str) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// The client that opened the session `id`, while it is open.
    pub(crate) fn client_of(&self, id: &str) -> Option<Arc<Client>> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .map(|entry| Arc::clone(&entry.client))
    }

    /// The client ends the session `id` (`DELETE`): its calls still running, on either path,
    /// end now, and are cancelled upstream at once.
    pub(crate) fn end(&self, id: &str) {
        let gone = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(entry) = gone {
            entry.ended.cancel();
        }
    }

    /// The open session `id` (its id as kept here, shared), its peer and its end, if a call of
    /// it may take the lane now; `None` sends the request rmcp's way (and counts as the
    /// session's activity there).
    pub(crate) fn for_lane(&self, id: &str, idle: Duration) -> Option<Lease> {
        let (key, entry) = self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get_key_value(id)
            .map(|(key, entry)| (Arc::clone(key), Arc::clone(entry)))?;
        if entry.peer.is_transport_closed() {
            self.remove(id);
            return None;
        }
        let mut through_rmcp = entry
            .through_rmcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if through_rmcp.elapsed() >= idle / 2 {
            *through_rmcp = Instant::now();
            return None;
        }
        drop(through_rmcp);
        let first_on_lane = !entry.on_lane.swap(true, Ordering::Relaxed);
        Some(Lease {
            id: key,
            open: entry,
            first_on_lane,
        })
    }

    /// A request of session `id` goes rmcp's way.
    pub(crate) fn through_rmcp(&self, id: &str) {
        let entry = self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        if let Some(entry) = entry {
            *entry
                .through_rmcp
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        }
    }
}
