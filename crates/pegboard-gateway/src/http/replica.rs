//! Session ids that name their replica, so a stock load balancer can keep a session on one process.
//!
//! A session lives in the memory of the replica that opened it. Behind round robin, a stateful
//! client's next request lands on another replica, which answers 404 (session not found). Hashing
//! on `Mcp-Session-Id` cannot help: the first request (`initialize`) carries none. So each replica
//! started with `--replica-id ID` issues session ids `ID.<uuid>`, and the proxy routes on that
//! prefix (an nginx `map` on `$http_mcp_session_id`, `docs/deploy/nginx-replicas.conf`); requests
//! without a session id go round robin.
//!
//! rmcp's `LocalSessionManager` makes its ids itself (a bare UUID) and has no id hook, so
//! [`ReplicaSessions`] wraps it: a new session is created through `restore_session`, the manager's
//! one way to start a session worker under an id of our choosing; everything else is delegated.
//!
//! ```
//! use pegboard_gateway::http::ReplicaId;
//! let id: ReplicaId = "r1".parse()?;
//! assert_eq!(id.as_str(), "r1");
//! assert!("r1.eu".parse::<ReplicaId>().is_err());
//! # Ok::<(), pegboard_gateway::http::ReplicaIdError>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::session_id;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// The longest replica id: it is repeated in every session id and in the proxy's config.
pub const MAX_REPLICA_ID_LEN: usize = 32;

/// The name of one replica, the prefix (before a `.`) of every session id it issues.
///
/// Letters, digits, `-` and `_`, at most [`MAX_REPLICA_ID_LEN`] of them: safe in a header, in an
/// nginx regex and in a log line, and free of the `.` that ends it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReplicaId(String);

/// Why a replica id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaIdError {
    /// Nothing was given.
    #[error(
        "the replica id is empty: give each replica a short name such as `r1` (--replica-id or PEGBOARD_REPLICA_ID)"
    )]
    Empty,
    /// Longer than [`MAX_REPLICA_ID_LEN`].
    #[error(
        "the replica id `{id}` is {len} characters long; keep it to {MAX_REPLICA_ID_LEN} at most (it starts every session id)"
    )]
    TooLong {
        /// The id given.
        id: String,
        /// Its length in characters.
        len: usize,
    },
    /// A character the proxy could not match safely.
    #[error(
        "the replica id `{id}` contains {bad:?}: use only letters, digits, `-` and `_` (it starts every session id, before a `.`, and the proxy matches on it)"
    )]
    BadChar {
        /// The id given.
        id: String,
        /// The first character refused.
        bad: char,
    },
}

impl ReplicaId {
    /// The id as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ReplicaId {
    type Err = ReplicaIdError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        if id.is_empty() {
            return Err(ReplicaIdError::Empty);
        }
        if let Some(bad) = id
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Err(ReplicaIdError::BadChar {
                id: id.to_string(),
                bad,
            });
        }
        if id.len() > MAX_REPLICA_ID_LEN {
            return Err(ReplicaIdError::TooLong {
                id: id.to_string(),
                len: id.len(),
            });
        }
        Ok(Self(id.to_string()))
    }
}

impl fmt::Display for ReplicaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaSessionError {
    /// rmcp's session manager refused.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// A fresh id was already taken (a UUID collision: not expected to happen).
    #[error("session id {0} is already in use on this replica")]
    Taken(SessionId),
    /// The session manager would not start a session under a chosen id.
    #[error("the session manager cannot start a session under the id {0}")]
    Unsupported(SessionId),
}

/// rmcp's in-memory session manager, issuing ids `REPLICA.<uuid>` when it has a replica id.
#[derive(Debug)]
pub(crate) struct ReplicaSessions {
    local: LocalSessionManager,
    replica: Option<ReplicaId>,
    /// Who holds each session (`http/sessions.rs`): told of every session closed here.
    book: Option<Arc<crate::limits::SessionBook>>,
    /// The store's sessions, with `--store`: a session of another replica is restored here
    /// (rmcp's `restore_session`), and one closed here is only forgotten (it stays in the store).
    #[cfg(feature = "store")]
    stored: Option<Arc<crate::store::sessions::StoredSessions>>,
}

impl ReplicaSessions {
    pub(crate) fn new(local: LocalSessionManager, replica: Option<ReplicaId>) -> Self {
        Self {
            local,
            replica,
            book: None,
            #[cfg(feature = "store")]
            stored: None,
        }
    }

    /// Restore sessions of other replicas from `stored`, and tell it of every session closed.
    #[cfg(feature = "store")]
    pub(crate) fn with_store(
        mut self,
        stored: Arc<crate::store::sessions::StoredSessions>,
    ) -> Self {
        self.stored = Some(stored);
        self
    }

    /// Whether session `id` is held here (without the wrong-replica hint of `has_session`).
    #[cfg(feature = "store")]
    pub(crate) async fn holds(&self, id: &str) -> bool {
        self.local.sessions.read().await.contains_key(id)
    }

    /// Tell `book` of every session closed (its client's DELETE, idle expiry, its worker's end).
    pub(crate) fn with_book(mut self, book: Arc<crate::limits::SessionBook>) -> Self {
        self.book = Some(book);
        self
    }

    /// How many sessions are open.
    #[cfg(test)]
    async fn open(&self) -> usize {
        self.local.sessions.read().await.len()
    }

    /// A session id unknown here: if it names another replica, the proxy sent it to the wrong one.
    fn unknown(&self, id: &SessionId) {
        let (Some(ours), Some((theirs, _))) = (&self.replica, id.split_once('.')) else {
            return;
        };
        if theirs != ours.as_str() {
            tracing::debug!(
                "session {id} belongs to replica `{theirs}`, but the proxy sent it to this one (`{ours}`): \
                 check its routing on Mcp-Session-Id (docs/deploy/nginx-replicas.conf)"
            );
        }
    }
}

type Transport = <LocalSessionManager as SessionManager>::Transport;

impl SessionManager for ReplicaSessions {
    type Error = ReplicaSessionError;
    type Transport = Transport;

    async fn create_session(&self) -> Result<(SessionId, Transport), Self::Error> {
        let Some(replica) = &self.replica else {
            return Ok(self.local.create_session().await?);
        };
        let id: SessionId = format!("{replica}.{}", session_id()).into();
        match self.local.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => Ok((id, transport)),
            RestoreOutcome::AlreadyPresent => Err(ReplicaSessionError::Taken(id)),
            _ => Err(ReplicaSessionError::Unsupported(id)),
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let found = self.local.has_session(id).await?;
        if !found {
            self.unknown(id);
        }
        Ok(found)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp closes a session twice when the client ends it (the `DELETE`, then the end of its
        // worker): it is logged once, when it was open.
        let was_open = self.local.has_session(id).await?;
        self.local.close_session(id).await?;
        if let Some(book) = &self.book {
            book.closed(id);
        }
        #[cfg(feature = "store")]
        if let Some(stored) = &self.stored {
            stored.forget(id);
        }
        if was_open {
            // Logged once it is out of the table, so no longer counted against --max-sessions
            // (the idle-session test waits for this line).
            tracing::debug!("HTTP session {id} closed");
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.resume(id, last_event_id).await?)
    }

    /// Without a store, not supported: a session of another replica is never re-created here;
    /// it is answered 404 like any unknown session. With one, rmcp restores a session the store
    /// holds (see `crate::store::sessions`).
    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Transport>, Self::Error> {
        #[cfg(feature = "store")]
        if self.stored.is_some() {
            return Ok(self.local.restore_session(id).await?);
        }
        let _ = id;
        Ok(RestoreOutcome::NotSupported)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_ids_parse() {
        for id in ["r1", "eu-west_2", "A", &"x".repeat(MAX_REPLICA_ID_LEN)] {
            assert_eq!(
                id.parse::<ReplicaId>().map(|r| r.to_string()),
                Ok(id.to_string())
            );
        }
    }

    #[test]
    fn bad_ids_say_why() {
        assert_eq!("".parse::<ReplicaId>(), Err(ReplicaIdError::Empty));
        for (id, bad) in [("r.1", '.'), ("r 1", ' '), ("é1", 'é'), ("r1/", '/')] {
            let err = id.parse::<ReplicaId>().unwrap_err();
            assert_eq!(err, ReplicaIdError::BadChar { id: id.into(), bad });
            assert!(err.to_string().contains("letters, digits"), "{err}");
        }
        let long = "r".repeat(MAX_REPLICA_ID_LEN + 1);
        let err = long.parse::<ReplicaId>().unwrap_err();
        assert!(
            matches!(err, ReplicaIdError::TooLong { len: 33, .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn sessions_are_named_after_the_replica_and_foreign_ones_are_unknown() {
        let sessions = ReplicaSessions::new(LocalSessionManager::default(), "r1".parse().ok());
        let (id, _transport) = sessions.create_session().await.unwrap();
        let (prefix, rest) = id.split_once('.').unwrap();
        assert_eq!(prefix, "r1");
        assert_eq!(rest.len(), 36, "{id}");
        assert!(sessions.has_session(&id).await.unwrap());
        assert_eq!(sessions.open().await, 1);
        let foreign: SessionId = format!("r2.{rest}").into();
        assert!(!sessions.has_session(&foreign).await.unwrap());
        sessions.close_session(&id).await.unwrap();
        assert_eq!(sessions.open().await, 0);
    }

    #[tokio::test]
    async fn without_a_replica_id_sessions_are_plain_uuids() {
        let sessions = ReplicaSessions::new(LocalSessionManager::default(), None);
        let (id, _transport) = sessions.create_session().await.unwrap();
        assert!(!id.contains('.'), "{id}");
        assert_eq!(id.len(), 36);
    }
}
