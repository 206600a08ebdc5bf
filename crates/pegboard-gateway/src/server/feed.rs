//! What a downstream session is told when the board changes: `list_changed` for tools (and
//! prompts and resources when offered), and its resource subscriptions carried over to servers
//! that came back, for a legacy session (after `initialized`) and a 2026-07-28 listen stream.
//!
//! A session is told only about lists that changed since what it was last answered, and only
//! about what its client may see ([`Told`]). It is told nothing about a list it never asked for
//! (its first answer will be current), nor about servers already in the answer it got: a client
//! that starts the gateway, lists its tools and closes at once (LangChain's `get_tools()`,
//! LlamaIndex) gets no notification, where it used to get three per server that joined, some
//! after the answer, while it was closing (the MCP Python SDK 1.x's stdio reader dies of them).
//!
//! - `tools/list_changed`: when the tools the client may see differ from those of the session's
//!   last `tools/list` answer (or last notification), names, order or definitions.
//! - `prompts/list_changed`, `resources/list_changed` on a board change: when a server whose
//!   prompts (resources) the client may see joined, left or came back on a new connection since
//!   the session's last listing of them. A server's own `list_changed` reaches the sessions that
//!   listed them and may see that server's prompts (resources): [`Told::tells`].
//!
//! Which servers' prompts a client may see: every server's when it sees everything; else a
//! server when the client may see at least one of its tools, when its last `prompts/list` answer
//! held one of its prompts, or when one of its `tools` patterns starts with the server's prefix.
//! Resources follow the policy's rule (`server/visible.rs`): a server at least one of whose tools
//! the client may see, unless its `"resources"` is `false`.
//!
//! With `--store`, what an HTTP session was answered is kept in its stored record too, so the
//! replica that takes it over goes on from there (`server/told_store.rs`).

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use pegboard::PegBoard;
use rmcp::{ErrorData, Peer, RoleServer, service::SubscriptionContext};

use crate::identity::Client;
use crate::policy::ClientView;
use crate::session::{
    downstream::{Offers, attach_hubs},
    lists::Lists,
    relay::Relay,
};
use crate::upstream::{Hub, sides::ListKind};

#[cfg(feature = "store")]
#[path = "told_store.rs"]
mod store;

/// How often a downstream session's notifier checks that its client is still there.
const PRUNE_INTERVAL: Duration = Duration::from_secs(30);

/// What one session (or listen stream) was last answered of each list, and so what it is told
/// when the board changes (see the module docs).
#[derive(Debug)]
pub(crate) struct Told {
    board: PegBoard,
    /// The session's client: the one its requests authenticated as (set by its first answer or
    /// its start).
    client: OnceLock<Arc<Client>>,
    /// What the gateway advertised to the session (no `list_changed` for what it was not).
    offers: OnceLock<Offers>,
    state: Mutex<State>,
    /// With `--store`, where an HTTP session's answers are kept for a replica that adopts it.
    #[cfg(feature = "store")]
    kept: store::Kept,
}

/// The session's last answers; `None`: it never asked for that list.
#[derive(Debug, Default)]
struct State {
    tools: Option<Arc<ClientView>>,
    prompts: Option<Vec<Server>>,
    resources: Option<Vec<Server>>,
}

/// A server that offers prompts (or resources), as a session was answered it: on which
/// connection, and whether the session's client may see its prompts (resources).
#[derive(Debug, Clone)]
struct Server {
    namespace: Option<Arc<str>>,
    /// Its connection: a server that came back has a new one (compared by identity).
    hub: Weak<Hub>,
    visible: bool,
}

/// Which lists a board change (or an adoption) is to be told about.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Due {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Told {
    /// A session's, before its first request.
    pub(crate) fn new(board: PegBoard) -> Arc<Self> {
        Arc::new(Self {
            board,
            client: OnceLock::new(),
            offers: OnceLock::new(),
            state: Mutex::new(State::default()),
            #[cfg(feature = "store")]
            kept: store::Kept::default(),
        })
    }

    /// A 2026-07-28 listen stream's: it has no session to remember answers by, so the lists are
    /// taken as answered when it opens (its client lists them then).
    fn listening(board: &PegBoard, client: &Arc<Client>, offers: Offers) -> Arc<Self> {
        let told = Self::new(board.clone());
        told.start(client, offers);
        told.tools_answered(client);
        told.answering(ListKind::Prompts, client);
        told.answering(ListKind::Resources, client);
        told
    }

    /// The session started (`initialized`) as `client`, offered `offers`.
    pub(crate) fn start(&self, client: &Arc<Client>, offers: Offers) {
        let _ = self.client.set(Arc::clone(client));
        let _ = self.offers.set(offers);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update leaves the state whole: safe to go on after a panic elsewhere.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session is about to be answered the `kind` list as `client`, from the servers on the
    /// board now (called before the listing: a server that joins meanwhile is told about, at
    /// worst once too often, never missed).
    pub(crate) fn answering(&self, kind: ListKind, client: &Arc<Client>) {
        let _ = self.client.set(Arc::clone(client));
        let view = client.view(&self.board);
        let mut servers = self.servers(kind, client, &view);
        let mut state = self.lock();
        let slot = match kind {
            ListKind::Prompts => &mut state.prompts,
            ListKind::Resources => &mut state.resources,
        };
        // A server kept from before keeps what the client was shown of it.
        if let Some(before) = slot {
            for server in &mut servers {
                server.visible |= before.iter().any(|b| b.same(server) && b.visible);
            }
        }
        *slot = Some(servers);
        // Prompts are kept once answered (`prompts_answered`, which follows): one write a list.
        #[cfg(feature = "store")]
        if kind == ListKind::Resources {
            let names = store::names(slot.as_deref());
            drop(state);
            self.keep_servers(kind, names);
        }
    }

    /// The session was answered `prompts/list` with `names`: the servers they came from are
    /// ones whose prompts its client sees.
    pub(crate) fn prompts_answered<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let separator = self.board.naming().separator().to_string();
        let names: Vec<&str> = names.into_iter().collect();
        let mut state = self.lock();
        for server in state.prompts.iter_mut().flatten() {
            if let Some(ns) = &server.namespace {
                let prefix = format!("{ns}{separator}");
                server.visible |= names.iter().any(|n| n.starts_with(&prefix));
            }
        }
        #[cfg(feature = "store")]
        {
            let names = store::names(state.prompts.as_deref());
            drop(state);
            self.keep_servers(ListKind::Prompts, names);
        }
    }

    /// The live servers on the board that offer `kind`, each with whether `client` may see
    /// its prompts (resources).
    fn servers(&self, kind: ListKind, client: &Client, view: &ClientView) -> Vec<Server> {
        self.board
            .service_peers()
            .into_iter()
            .filter_map(|(peer, extension)| {
                let caps = &peer.peer_info()?.capabilities;
                let offers = match kind {
                    ListKind::Prompts => caps.prompts.is_some(),
                    ListKind::Resources => caps.resources.is_some(),
                };
                let hub = extension?.get::<Hub>()?;
                let namespace: Option<Arc<str>> = hub.board_namespace().map(Arc::from);
                let visible = self.may_see(kind, client, view, namespace.as_deref());
                offers.then(|| Server {
                    namespace,
                    hub: Arc::downgrade(&hub),
                    visible,
                })
            })
            .collect()
    }

    /// Whether `client` may see the prompts (resources) of the server added under `namespace`,
    /// as far as the board tells (see the module docs).
    fn may_see(
        &self,
        kind: ListKind,
        client: &Client,
        view: &ClientView,
        namespace: Option<&str>,
    ) -> bool {
        if client.sees_everything() {
            return true;
        }
        let resources = kind == ListKind::Resources;
        if resources && !client.resources_allowed() {
            return false;
        }
        // A server without a namespace shows names and URIs as they are: only a client that may
        // see every tool sees them (as `server/visible.rs` rules).
        let Some(namespace) = namespace else {
            return client.patterns().sees_everything();
        };
        if resources {
            return view.may_see_resources_of(namespace);
        }
        let prefix = format!("{namespace}{}", self.board.naming().separator());
        view.may_see_tools_of(namespace)
            || client
                .patterns()
                .source()
                .is_some_and(|patterns| patterns.iter().any(|p| p.starts_with(&prefix)))
    }

    /// The board changed: which lists to tell the session about, its answers brought up to date.
    fn board_changed(&self) -> Due {
        let Some(client) = self.client.get() else {
            return Due::default();
        };
        let offers = self.offers.get().copied().unwrap_or_default();
        let view = client.view(&self.board);
        let prompts = offers
            .prompts
            .then(|| self.servers(ListKind::Prompts, client, &view));
        let resources = offers
            .resources
            .then(|| self.servers(ListKind::Resources, client, &view));
        let mut state = self.lock();
        let tools = match &state.tools {
            Some(before) => {
                let differ = view.tools_differ_from(before);
                state.tools = Some(view);
                differ
            }
            None => false,
        };
        Due {
            tools,
            prompts: prompts.is_some_and(|now| servers_changed(&mut state.prompts, now)),
            resources: resources.is_some_and(|now| servers_changed(&mut state.resources, now)),
        }
    }

    /// The client's name, for the log.
    fn client_name(&self) -> &str {
        self.client.get().map_or("-", |c| c.name())
    }
}

/// Whether `now` differs from the servers the session was answered (`before`, `None`: never
/// asked) by a server its client may see that joined, left or came back; `before` becomes `now`.
fn servers_changed(before: &mut Option<Vec<Server>>, mut now: Vec<Server>) -> bool {
    let Some(old) = before.as_ref() else {
        return false;
    };
    let gone = old.iter().filter(|o| !now.iter().any(|n| n.same(o)));
    let came = now.iter().filter(|n| !old.iter().any(|o| o.same(n)));
    let changed = gone.chain(came).any(|s| s.visible);
    for server in &mut now {
        server.visible |= old.iter().any(|o| o.same(server) && o.visible);
    }
    *before = Some(now);
    changed
}

impl Server {
    fn same(&self, other: &Server) -> bool {
        Weak::ptr_eq(&self.hub, &other.hub)
    }
}

impl Lists for Told {
    fn tools_answered(&self, client: &Arc<Client>) {
        let _ = self.client.set(Arc::clone(client));
        // The view of the board now, read before the answer is built from the board: a change
        // meanwhile is told about, at worst once too often, never missed.
        let view = client.view(&self.board);
        #[cfg(feature = "store")]
        self.keep_tools(&view);
        self.lock().tools = Some(view);
    }

    fn tells(&self, namespace: Option<&str>, kind: ListKind) -> bool {
        let offered = self.offers.get().is_some_and(|offers| match kind {
            ListKind::Prompts => offers.prompts,
            ListKind::Resources => offers.resources,
        });
        let Some(client) = self.client.get().filter(|_| offered) else {
            return false;
        };
        let answered_visible = {
            let state = self.lock();
            let servers = match kind {
                ListKind::Prompts => &state.prompts,
                ListKind::Resources => &state.resources,
            };
            let Some(servers) = servers else {
                // Never listed: its first listing will be current.
                return false;
            };
            servers
                .iter()
                .any(|s| s.visible && s.namespace.as_deref() == namespace)
        };
        answered_visible || self.may_see(kind, client, &client.view(&self.board), namespace)
    }
}

/// An HTTP session's place in the express lane's registry, given up when dropped.
struct SessionEntry(Arc<Relay>, String);

impl Drop for SessionEntry {
    fn drop(&mut self) {
        self.0.express_sessions().remove(&self.1);
    }
}

/// Follow the board for a session that sent `initialized`, telling it what `told` says is due,
/// until its client goes; an HTTP session (`http_session`, its id) leaves the express lane's
/// registry then.
pub(super) fn follow(
    board: &PegBoard,
    relay: &Arc<Relay>,
    peer: Peer<RoleServer>,
    told: Arc<Told>,
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
                    if changed.is_err() {
                        return;
                    }
                    let due = told.board_changed();
                    tracing::debug!(
                        client = told.client_name(),
                        generation = board.generation(),
                        tools = due.tools,
                        prompts = due.prompts,
                        resources = due.resources,
                        "board changed: list_changed due to the session"
                    );
                    if due.tools && peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                    if due.prompts {
                        let _ = peer.notify_prompt_list_changed().await;
                    }
                    if due.resources {
                        let _ = peer.notify_resource_list_changed().await;
                    }
                    // A reload may have connected new upstreams, and a restarted one
                    // has none of its subscriptions.
                    attach_hubs(&board, &relay);
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

/// A 2026-07-28 `subscriptions/listen` stream of `client`: its accepted resources subscribed
/// upstream, then `list_changed` (what its client may see, as for a session) and
/// resubscriptions as the board changes, until the client ends the stream.
pub(super) async fn listen(
    board: &PegBoard,
    relay: &Arc<Relay>,
    context: SubscriptionContext,
    client: &Arc<Client>,
    offers: Offers,
) -> Result<(), ErrorData> {
    // A 2026-07-28 client has no `initialized` notification: link the upstreams here.
    attach_hubs(board, relay);
    // Watched from before the first upstream subscribe, and the lists taken as answered from
    // then: a server that restarts while this stream subscribes is subscribed again below.
    let mut changes = board.subscribe();
    changes.mark_unchanged();
    let told = Told::listening(board, client, offers);
    let listener = relay.listen(context.sink().clone(), told.clone());
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
                let due = told.board_changed();
                // The sink refuses what the stream did not accept; that is not an error here.
                if due.tools {
                    let _ = context.sink().notify_tool_list_changed().await;
                }
                if due.prompts {
                    let _ = context.sink().notify_prompt_list_changed().await;
                }
                if due.resources {
                    let _ = context.sink().notify_resource_list_changed().await;
                }
                attach_hubs(board, relay);
                relay.resync_subscriptions(board);
            }
        }
    }
}
