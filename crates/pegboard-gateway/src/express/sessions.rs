//! The HTTP sessions the express lane may serve: session id → the session's peer.
//!
//! A session is added when its client sends `notifications/initialized` (the handler reads the
//! id from the request's headers) and leaves when its connection closes. rmcp closes a session
//! that saw nothing for `--session-idle`; calls on the lane pass it by, so one goes rmcp's way
//! whenever the session has not been through rmcp for half that long, keeping it alive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use axum::http::HeaderName;
use foldhash::fast::RandomState;
use rmcp::{Peer, RoleServer};

/// The HTTP header carrying the session id.
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

#[derive(Debug)]
struct Entry {
    peer: Peer<RoleServer>,
    /// When a request of the session last went through rmcp.
    through_rmcp: Mutex<Instant>,
}

/// The registry (see the module docs).
#[derive(Debug, Default)]
pub struct Sessions {
    map: RwLock<HashMap<Arc<str>, Arc<Entry>, RandomState>>,
}

impl Sessions {
    pub(crate) fn add(&self, id: &str, peer: Peer<RoleServer>) {
        let entry = Arc::new(Entry {
            peer,
            through_rmcp: Mutex::new(Instant::now()),
        });
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.into(), entry);
    }

    pub(crate) fn remove(&self, id: &str) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// The open session `id` (its id as kept here, shared) and its peer, if a call of it may
    /// take the lane now; `None` sends the request rmcp's way (and counts as the session's
    /// activity there).
    pub(crate) fn for_lane(
        &self,
        id: &str,
        idle: Duration,
    ) -> Option<(Arc<str>, Peer<RoleServer>)> {
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
        Some((key, entry.peer.clone()))
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
