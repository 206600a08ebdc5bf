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
//! Its [`Hub`](crate::upstream::Hub) is attached to the sessions like the shared one's (by the
//! session that opened it, `session/connections.rs`), so the server's sampling, elicitation and
//! roots requests reach the session, and only that session calls it.

use std::{sync::Arc, time::Duration};

use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{connection::DynService, handshake::handshake};
use crate::{
    config::ServerConfig,
    upstream::{
        sides::Boxed,
        {OpenPerSession, SessionConnection},
    },
};

/// What a per-client server needs to open more connections to itself; kept in its shared
/// connection's hub (as its [`OpenPerSession`]).
#[derive(Debug)]
pub(crate) struct PerClient {
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

    /// Start or connect the server once more for one session.
    async fn open_one(&self, session: u64) -> Result<SessionConnection, String> {
        let conn = handshake(&self.server, self.handshake_timeout)
            .await
            .map_err(|e| {
                format!(
                    "could not open this session's own connection to server `{}` (\"session\": \"per-client\"): {e:#}",
                    self.server.name
                )
            })?;
        conn.hub
            .set_result_cap(self.server.guards.max_result_tokens);
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
        Ok(SessionConnection {
            peer: conn.service.peer().clone(),
            hub: conn.hub,
            _keep: Box::new(Own {
                _service: conn.service,
                _count: held,
                _done: done.drop_guard(),
            }),
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
    _service: DynService,
    _count: Option<Counted>,
    /// Ends the task that closes the connection when the server is retired.
    _done: DropGuard,
}

impl OpenPerSession for PerClient {
    fn server(&self) -> &str {
        &self.server.name
    }

    fn open(&self, session: u64) -> Boxed<'_, Result<SessionConnection, String>> {
        Box::pin(self.open_one(session))
    }

    fn open_connections(&self) -> watch::Receiver<usize> {
        self.open.subscribe()
    }
}
