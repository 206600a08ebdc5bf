//! [`Lists`]: what a session was last answered of its lists, as the session layer and the
//! express lane reach it (the server layer keeps it: `server/feed.rs`).

use std::sync::Arc;

use crate::identity::Client;
use crate::upstream::sides::ListKind;

/// What a session (or a listen stream) was last answered of its lists, and so what it is told
/// when they change: kept by the server layer (`server/feed.rs`), asked here and by the lanes.
pub(crate) trait Lists: Send + Sync + std::fmt::Debug {
    /// The session is answered `tools/list` as `client` from the board as it is now.
    fn tools_answered(&self, client: &Arc<Client>);
    /// Whether it is told that the `kind` list of the server added under `namespace` changed.
    fn tells(&self, namespace: Option<&str>, kind: ListKind) -> bool;
}
