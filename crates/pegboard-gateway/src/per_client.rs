//! `"session": "per-client"`: a server that keeps per-client state (an in-memory store, a login,
//! a working directory) gets one upstream connection per downstream session, as FastMCP's
//! `StatefulProxyClient` does (PASSTHROUGH.md §12).
//!
//! The shared connection stays: it provides the board's tool list and serves callers without a
//! session (`--stateless` HTTP, `pegboard call`). A session's first `tools/call` of one of the
//! server's tools opens that session's own connection (started or connected as the shared one
//! is; for a `command`, its own process); later calls of the session reuse it. It closes when
//! the session ends, or when the server leaves the board (a reload removed or changed it). At
//! most one connection per (session, server): N clients means N processes.
//! Its [`Hub`] is attached to the relay like the shared one's, so the server's sampling,
//! elicitation and roots requests reach the session, and only that session calls it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError, Weak},
    time::Duration,
};

use rmcp::{Peer, RoleClient};
use tokio::sync::{OnceCell, watch};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::{
    config::ServerConfig,
    connect::{self, DynService},
    relay::Relay,
    upstream::Hub,
};

/// What a per-client server needs to open more connections to itself; kept in its shared
/// connection's [`Hub`] ([`Hub::per_client`]).
#[derive(Debug)]
pub struct PerClient {
    server: ServerConfig,
    handshake_timeout: Duration,
    /// How many sessions' connections are open (a stdio one counts until its process exited).
    open: watch::Sender<usize>,
    /// Cancelled when the server leaves the board (a reload removed or changed it): the
    /// sessions' own connections to it close then, not only when their sessions end.
    retired: CancellationToken,
}

impl Drop for PerClient {
    fn drop(&mut self) {
        self.retired.cancel();
    }
}

impl PerClient {
    pub(crate) fn new(server: ServerConfig, handshake_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            server,
            handshake_timeout,
            open: watch::Sender::new(0),
            retired: CancellationToken::new(),
        })
    }

    /// How many sessions have their own connection open now; a `command` server's connection
    /// counts until its process has exited. Wait on it with [`watch::Receiver::wait_for`].
    pub fn open_connections(&self) -> watch::Receiver<usize> {
        self.open.subscribe()
    }

    /// Start or connect the server once more for one session.
    async fn open(&self, session: u64, relay: &Arc<Relay>) -> Result<Own, String> {
        let conn = connect::handshake(&self.server, self.handshake_timeout)
            .await
            .map_err(|e| {
                format!(
                    "could not open this session's own connection to server `{}` (\"session\": \"per-client\"): {e:#}",
                    self.server.name
                )
            })?;
        conn.hub.attach(relay);
        let (stop, retired, done) = (
            conn.service.cancellation_token(),
            self.retired.clone(),
            CancellationToken::new(),
        );
        let ended = done.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = retired.cancelled() => stop.cancel(),
                () = ended.cancelled() => {}
            }
        });
        tracing::info!(server = %self.server.name, session, "opened a per-client connection");
        let count = Counted::new(self.open.clone(), &self.server.name, session);
        let held = match conn.stderr {
            // A child counts until it has exited (its stderr closes then), not only until the
            // connection is dropped: what a test or an operator wants to know is the process.
            Some(tail) => {
                tokio::spawn(async move {
                    tail.closed().await;
                    drop(count);
                });
                None
            }
            None => Some(count),
        };
        Ok(Own {
            service: conn.service,
            hub: conn.hub,
            _count: held,
            _done: done.drop_guard(),
        })
    }
}

/// One open connection counted in [`PerClient::open_connections`] until dropped.
struct Counted {
    open: watch::Sender<usize>,
    server: String,
    session: u64,
}

impl Counted {
    fn new(open: watch::Sender<usize>, server: &str, session: u64) -> Self {
        open.send_modify(|n| *n += 1);
        Self {
            open,
            server: server.to_string(),
            session,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.open.send_modify(|n| *n = n.saturating_sub(1));
        tracing::info!(server = %self.server, session = self.session, "closed a per-client connection");
    }
}

/// A session's own connection to one server. Dropping it closes the connection (rmcp cancels
/// the service; a child is shut down, and killed at the latest when its transport drops).
struct Own {
    service: DynService,
    hub: Arc<Hub>,
    _count: Option<Counted>,
    /// Ends the task that closes the connection when the server is retired.
    _done: DropGuard,
}

struct Slot {
    /// Which registration of the server opened it: after a reload the server has a new one,
    /// and the session's old connection (of the old config) is replaced. Weak, so that a
    /// server leaving the board drops its [`PerClient`], which closes the sessions' connections.
    per_client: Weak<PerClient>,
    conn: Arc<OnceCell<Own>>,
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
    /// The session's own connection to the server of `per_client` (its peer and hub), opened
    /// at the first call; one that closed (the server exited) is opened again.
    pub(crate) async fn get(
        &self,
        per_client: &Arc<PerClient>,
        session: u64,
        relay: &Arc<Relay>,
    ) -> Result<(Peer<RoleClient>, Arc<Hub>), String> {
        let cell = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let name = &per_client.server.name;
            match slots.get(name) {
                Some(slot)
                    if std::ptr::eq(slot.per_client.as_ptr(), Arc::as_ptr(per_client))
                        && slot
                            .conn
                            .get()
                            .is_none_or(|own| !own.service.peer().is_transport_closed()) =>
                {
                    slot.conn.clone()
                }
                _ => {
                    let conn = Arc::new(OnceCell::new());
                    slots.insert(
                        name.clone(),
                        Slot {
                            per_client: Arc::downgrade(per_client),
                            conn: conn.clone(),
                        },
                    );
                    conn
                }
            }
        };
        let own = cell
            .get_or_try_init(|| per_client.open(session, relay))
            .await?;
        Ok((own.service.peer().clone(), own.hub.clone()))
    }
}
