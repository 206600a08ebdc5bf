//! A session taken over from the store (`--store`) gets back, at the end of its replayed
//! handshake, what it had set on the replica that opened it: its log level and its resource
//! subscriptions (see `crate::store::sessions`); and it is told `list_changed` for a list it
//! had listed that this replica would answer otherwise (`server/told_store.rs`).

use std::sync::Arc;

use rmcp::{Peer, RoleServer};

use super::{BoardServer, catalog};
use crate::identity::Client;
use crate::store::sessions::Adopted;

impl BoardServer {
    /// Apply `adopted` to this session `id`, opened for `client`, telling `peer` what its lists
    /// look like here. A resource no longer on the board (or no longer the client's) is left
    /// out, and said in the debug log.
    pub(super) async fn readopt(
        &self,
        id: &str,
        adopted: Adopted,
        client: &Arc<Client>,
        peer: &Peer<RoleServer>,
    ) {
        if let Some(level) = adopted.level {
            self.session.set_level(&self.board, level).await;
        }
        let mut subscribed = 0;
        for uri in adopted.subscriptions {
            let target = match catalog::resource_target(&self.board, client, &uri) {
                Ok(target) => target,
                Err(e) => {
                    tracing::debug!(
                        "a taken-over session's subscription to {uri} is dropped: {e:?}"
                    );
                    continue;
                }
            };
            match self
                .relay
                .subscriptions()
                .subscribe(self.session.id(), target)
                .await
            {
                Ok(()) => subscribed += 1,
                Err(e) => tracing::debug!(
                    "a taken-over session's subscription to {uri} failed upstream: {e}"
                ),
            }
        }
        tracing::debug!(
            "session {id} taken over: log level {:?}, {subscribed} subscription(s) set again",
            adopted.level
        );
        if adopted.listed.is_empty() {
            return;
        }
        // Compared with what the lists answer here: not before the servers have started (up to
        // `--wait`), as the lists wait, or a server still starting would count as gone.
        self.startup.wait().await;
        let told = self.told.restore(&adopted.listed, peer).await;
        tracing::debug!(
            "session {id} taken over: list_changed told for tools {}, prompts {}, resources {} \
             (listed before: tools {}, prompts {}, resources {})",
            told.tools,
            told.prompts,
            told.resources,
            adopted.listed.tools.is_some(),
            adopted.listed.prompts.is_some(),
            adopted.listed.resources.is_some(),
        );
    }
}
