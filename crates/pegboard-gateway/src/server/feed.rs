//! What a downstream session is told when the board changes: `list_changed` for tools (and
//! prompts and resources when offered), and its resource subscriptions carried over to servers
//! that came back, for a legacy session (after `initialized`) and a 2026-07-28 listen stream.

use std::{sync::Arc, time::Duration};

use pegboard::PegBoard;
use rmcp::{ErrorData, Peer, RoleServer, service::SubscriptionContext};

use crate::{downstream::Offers, relay::Relay};

/// How often a downstream session's notifier checks that its client is still there.
const PRUNE_INTERVAL: Duration = Duration::from_secs(30);

/// An HTTP session's place in the express lane's registry, given up when dropped.
struct SessionEntry(Arc<Relay>, String);

impl Drop for SessionEntry {
    fn drop(&mut self) {
        self.0.express_sessions().remove(&self.1);
    }
}

/// Follow the board for a session that sent `initialized`, until its client goes; an HTTP
/// session (`http_session`, its id) leaves the express lane's registry then.
pub(super) fn follow(
    board: &PegBoard,
    relay: &Arc<Relay>,
    peer: Peer<RoleServer>,
    offers: Offers,
    http_session: Option<String>,
) {
    let (board, relay) = (board.clone(), relay.clone());
    let mut changes = board.subscribe();
    changes.mark_unchanged();
    tokio::spawn(async move {
        let mut prune = tokio::time::interval(PRUNE_INTERVAL);
        // Leaving the loop: the session is over.
        let _registered = http_session.map(|id| SessionEntry(relay.clone(), id));
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                    // A server that came, went or restarted changes the prompts and
                    // resources too (they are listed live, so the lists are never stale).
                    if offers.prompts {
                        let _ = peer.notify_prompt_list_changed().await;
                    }
                    if offers.resources {
                        let _ = peer.notify_resource_list_changed().await;
                    }
                    // A reload may have connected new upstreams, and a restarted one
                    // has none of its subscriptions.
                    crate::downstream::attach_hubs(&board, &relay);
                    relay.resync_subscriptions(&board);
                }
                _ = prune.tick() => {
                    if peer.is_transport_closed() {
                        return;
                    }
                }
            }
        }
    });
}

/// A 2026-07-28 `subscriptions/listen` stream: its accepted resources subscribed upstream, then
/// `list_changed` and resubscriptions as the board changes, until the client ends the stream.
pub(super) async fn listen(
    board: &PegBoard,
    relay: &Arc<Relay>,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    // A 2026-07-28 client has no `initialized` notification: link the upstreams here.
    crate::downstream::attach_hubs(board, relay);
    let listener = relay.listen(context.sink().clone());
    // Watched from before the first upstream subscribe: a server that restarts while this
    // stream subscribes is subscribed again by the loop below.
    let mut changes = board.subscribe();
    changes.mark_unchanged();
    for uri in context.accepted().resource_subscriptions.iter().flatten() {
        let subscribed = match board.resource_target(uri) {
            Ok(target) => relay
                .subscriptions()
                .hold(listener.id(), target)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = subscribed {
            tracing::warn!(
                uri,
                "could not subscribe upstream (tried again when the server comes back): {e}"
            );
        }
    }
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let _ = context.sink().notify_tool_list_changed().await;
                crate::downstream::attach_hubs(board, relay);
                relay.resync_subscriptions(board);
            }
        }
    }
}
