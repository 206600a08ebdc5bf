//! One downstream session's own connections to `"session": "per-client"` servers
//! (`connect/per_client.rs` opens them): at most one per server, opened at the session's first
//! call of one of its tools, linked to the sessions like any upstream, closed with the session.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError, Weak},
};

use rmcp::{Peer, RoleClient};
use tokio::sync::OnceCell;

use crate::upstream::{
    Hub,
    sides::Downstream,
    {OpenPerSession, SessionConnection},
};

struct Slot {
    /// Which registration of the server opened it: after a reload the server has a new one,
    /// and the session's old connection (of the old config) is replaced. Weak, so that a
    /// server leaving the board drops its opener, which closes the sessions' connections.
    opener: Weak<dyn OpenPerSession>,
    conn: Arc<OnceCell<SessionConnection>>,
}

/// One downstream session's own connections, by server name; they close when it is dropped
/// (with the session).
#[derive(Default)]
pub(crate) struct Connections {
    slots: Mutex<HashMap<String, Slot>>,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Connections")
            .field("servers", &slots.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Connections {
    /// The session's own connection to the server `opener` opens (its peer and hub), opened at
    /// the first call and linked to `downstream`; one that closed (the server exited) is opened
    /// again.
    pub(crate) async fn get(
        &self,
        opener: &Arc<dyn OpenPerSession>,
        session: u64,
        downstream: &Arc<dyn Downstream>,
    ) -> Result<(Peer<RoleClient>, Arc<Hub>), String> {
        let cell = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let name = opener.server();
            let current = slots.get(name).filter(|slot| {
                std::ptr::addr_eq(slot.opener.as_ptr(), Arc::as_ptr(opener))
                    && slot
                        .conn
                        .get()
                        .is_none_or(|own| !own.peer.is_transport_closed())
            });
            match current {
                Some(slot) => slot.conn.clone(),
                None => {
                    let conn = Arc::new(OnceCell::new());
                    slots.insert(
                        name.to_string(),
                        Slot {
                            opener: Arc::downgrade(opener),
                            conn: conn.clone(),
                        },
                    );
                    conn
                }
            }
        };
        let own = cell
            .get_or_try_init(|| async {
                let own = opener.open(session).await?;
                own.hub.attach(Arc::clone(downstream));
                Ok::<_, String>(own)
            })
            .await?;
        Ok((own.peer.clone(), own.hub.clone()))
    }
}
