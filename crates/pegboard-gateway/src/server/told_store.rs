//! [`Told`] with `--store`: what an HTTP session is answered of each list is kept in its stored
//! record (`store/listed.rs`), so that the replica that adopts it knows what it listed.
//!
//! Adopted, the session is compared list by list with what this replica would answer its
//! client now: a list it had listed and that differs (the replicas' configs differ mid-rollout,
//! a server's tools changed meanwhile) is told at once (`list_changed`, only for what the
//! gateway advertised); every list it had listed is then followed as on the replica that opened
//! it. A list it never asked for stays unasked: nothing is told about it.
//!
//! The notification goes where rmcp sends every `list_changed`: the session's `GET` stream.
//! Told while the client has none open here yet (its stream ended with the first replica, and
//! the adopting request is usually a `POST`), it is kept by rmcp and sent when the stream
//! opens (no event store: a new stream gets what the session was sent before it).

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use rmcp::{Peer, RoleServer};

use super::{Due, Server, Told};
use crate::identity::Client;
use crate::policy::ClientView;
use crate::store::listed::{Listed, NO_NAMESPACE};
use crate::store::sessions::StoredSessions;
use crate::upstream::sides::ListKind;

/// Where a session's answers are kept: the store's sessions and its id (unset: not kept, a
/// stdio session or a listen stream).
#[derive(Debug, Default)]
pub(super) struct Kept(OnceLock<(Arc<StoredSessions>, String)>);

impl Told {
    /// Keep what HTTP session `id` is answered in `stored` from now on.
    pub(crate) fn keep_in(&self, stored: &Arc<StoredSessions>, id: &str) {
        let _ = self.kept.0.set((Arc::clone(stored), id.to_string()));
    }

    /// The session was answered the tools of `view`: kept when they differ from its last.
    pub(super) fn keep_tools(&self, view: &ClientView) {
        if let Some((stored, id)) = self.kept.0.get() {
            let fingerprint = view.fingerprint();
            stored.listed(id, |l| {
                let changed = l.tools.as_deref() != Some(fingerprint);
                if changed {
                    l.tools = Some(fingerprint.to_string());
                }
                changed
            });
        }
    }

    /// The session was answered the `kind` list from the servers named `names`.
    pub(super) fn keep_servers(&self, kind: ListKind, names: Option<BTreeSet<String>>) {
        if let Some((stored, id)) = self.kept.0.get() {
            stored.listed(id, |l| {
                let kept = match kind {
                    ListKind::Prompts => &mut l.prompts,
                    ListKind::Resources => &mut l.resources,
                };
                let changed = *kept != names;
                *kept = names;
                changed
            });
        }
    }

    /// The session was adopted, having been answered `listed` on another replica: tell it what
    /// differs from what this replica would answer now, through `peer`, and follow what it had
    /// listed from here (see the module docs). What was told.
    pub(crate) async fn restore(&self, listed: &Listed, peer: &Peer<RoleServer>) -> Due {
        let due = self.seed(listed);
        // Sent before the session's changes are followed: a later change is told after these.
        if due.tools {
            let _ = peer.notify_tool_list_changed().await;
        }
        if due.prompts {
            let _ = peer.notify_prompt_list_changed().await;
        }
        if due.resources {
            let _ = peer.notify_resource_list_changed().await;
        }
        due
    }

    /// This session's answers, as `listed` on another replica, replaced by what this replica
    /// would answer now; which lists differ (and were advertised as changing).
    fn seed(&self, listed: &Listed) -> Due {
        let Some(client) = self.client.get() else {
            return Due::default();
        };
        let offers = self.offers.get().copied().unwrap_or_default();
        let view = client.view(&self.board);
        let prompts = listed
            .prompts
            .as_ref()
            .map(|before| self.compared(ListKind::Prompts, client, &view, before));
        let resources = listed
            .resources
            .as_ref()
            .map(|before| self.compared(ListKind::Resources, client, &view, before));
        let mut due = Due::default();
        let mut state = self.lock();
        if let Some(before) = &listed.tools {
            // `tools/list_changed` is always advertised (`handler.rs`).
            due.tools = view.fingerprint() != before;
            state.tools = Some(view);
        }
        if let Some((servers, differ)) = prompts {
            due.prompts = differ && offers.prompts;
            state.prompts = Some(servers);
        }
        if let Some((servers, differ)) = resources {
            due.resources = differ && offers.resources;
            state.resources = Some(servers);
        }
        due
    }

    /// The servers of the `kind` list on the board now, those the session saw (`before`) kept
    /// as seen, as `answering` keeps them; and whether the servers it may see differ from
    /// `before` (one joined, one left).
    fn compared(
        &self,
        kind: ListKind,
        client: &Client,
        view: &ClientView,
        before: &BTreeSet<String>,
    ) -> (Vec<Server>, bool) {
        let mut servers = self.servers(kind, client, view);
        for server in &mut servers {
            server.visible |= before.contains(name_of(server));
        }
        let differ = names(Some(&servers)).as_ref() != Some(before);
        (servers, differ)
    }
}

/// A server's name among those kept.
fn name_of(server: &Server) -> &str {
    server.namespace.as_deref().unwrap_or(NO_NAMESPACE)
}

/// The names of the servers whose prompts (resources) a session may see, as kept.
pub(super) fn names(servers: Option<&[Server]>) -> Option<BTreeSet<String>> {
    servers.map(|servers| {
        servers
            .iter()
            .filter(|s| s.visible)
            .map(|s| name_of(s).to_string())
            .collect()
    })
}
