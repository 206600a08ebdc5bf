//! [`BoardServer`]: a [`PegBoard`] served as one MCP server.
//!
//! `tools/list` answers from the board's snapshot, `tools/call` is forwarded upstream with its
//! progress, cancellation and server-to-client requests (the one call pipeline, `crate::call`), logging is relayed
//! both ways, and every downstream client is sent `notifications/tools/list_changed` when the
//! board changes. Each downstream session gets its own [`BoardServer::session`].
//! Serve it over any rmcp transport: stdio, or streamable HTTP inside your own axum app.
//! Served that way its `tools/list` is rmcp's typed list, which has no room for the members of
//! a definition rmcp does not model (`execution`, a vendor's own); the gateway's own fronts
//! ([`Gateway::serve_stdio`](crate::Gateway::serve_stdio), [`crate::http::router`]) list every
//! tool whole.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! let board = pegboard::PegBoard::new();
//! // ... add services ...
//! let server = pegboard_gateway::BoardServer::new(board).serve(rmcp::transport::stdio()).await?;
//! server.waiting().await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use rmcp::{ErrorData, model::Implementation};

use pegboard::PegBoard;

use rmcp::{RoleServer, service::RequestContext};

use crate::{
    call::{caller::Caller, hooks::Hooks, parked::Bridges},
    identity::{Client, DEFAULT_CLIENT},
    protocol::headers::SESSION_HEADER,
    session::{downstream::Session, lists::Lists, relay::Relay, startup::Startup},
    telemetry::Transport,
};

#[cfg(feature = "store")]
mod adopted;
pub(crate) mod catalog;
mod code;
mod feed;
mod handler;
mod visible;

/// A [`PegBoard`] as an rmcp [`ServerHandler`](rmcp::ServerHandler). Clones are cheap and share the board.
#[derive(Clone)]
pub struct BoardServer {
    board: PegBoard,
    info: Implementation,
    instructions: Option<String>,
    relay: Arc<Relay>,
    session: Arc<Session>,
    /// What the session was last answered of its lists (what it is told when they change).
    told: Arc<feed::Told>,
    /// 2026-07-28 clients' bridged calls between rounds, shared by every session.
    bridges: Bridges,
    stateless: bool,
    search: Option<crate::search_mode::SearchMode>,
    /// Code mode, when on (it takes precedence over search mode).
    #[cfg(feature = "code-mode")]
    code: Option<crate::code_mode::CodeMode>,
    startup: Startup,
    express: bool,
    /// What the gateway records of calls (telemetry, audit), shared by every session.
    hooks: Hooks,
    /// The client of requests that carry none of their own (stdio: `--client`, else the
    /// unrestricted `default`); over HTTP each request's authenticated client.
    client: Arc<Client>,
    /// The store's sessions (`--store`, HTTP): what a session sets is written there, and an
    /// adopted session gets back what it had set.
    #[cfg(feature = "store")]
    stored: Option<Arc<crate::store::sessions::StoredSessions>>,
}

impl BoardServer {
    /// Serve this board (it stays shared: changes to it show downstream at once).
    pub fn new(board: PegBoard) -> Self {
        let relay = Relay::new();
        let session = Session::new(&relay);
        Self {
            told: feed::Told::new(board.clone()),
            board,
            info: Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
            instructions: None,
            relay,
            session,
            bridges: Bridges::default(),
            stateless: false,
            search: None,
            #[cfg(feature = "code-mode")]
            code: None,
            startup: Startup::default(),
            express: true,
            hooks: Hooks::default(),
            client: Arc::new(Client::unrestricted(DEFAULT_CLIENT, usize::MAX)),
            #[cfg(feature = "store")]
            stored: None,
        }
    }

    /// Keep what each HTTP session sets in the store's sessions (see the field).
    #[cfg(feature = "store")]
    #[must_use]
    pub(crate) fn with_stored(
        mut self,
        stored: Option<Arc<crate::store::sessions::StoredSessions>>,
    ) -> Self {
        self.stored = stored;
        self
    }

    /// The store's sessions and this request's session id, when both are there.
    #[cfg(feature = "store")]
    fn stored_session<'a>(
        &'a self,
        context: &'a RequestContext<RoleServer>,
    ) -> Option<(&'a Arc<crate::store::sessions::StoredSessions>, &'a str)> {
        let stored = self.stored.as_ref()?;
        let id = context
            .extensions
            .get::<axum::http::request::Parts>()?
            .headers
            .get(SESSION_HEADER)?
            .to_str()
            .ok()?;
        Some((stored, id))
    }

    /// Keep what this request's session is answered of its lists in the store (`--store`,
    /// HTTP). Set at `initialized` too; here as well because rmcp may serve a list request
    /// before it has handled the `initialized` that came first.
    fn keep_lists(&self, context: &RequestContext<RoleServer>) {
        #[cfg(feature = "store")]
        if let Some((stored, id)) = self.stored_session(context) {
            self.told.keep_in(stored, id);
        }
        #[cfg(not(feature = "store"))]
        let _ = context;
    }

    /// The handler for one more downstream session: same board and relay, its own session
    /// state (log level, roots). Serve each client connection with its own.
    #[must_use]
    pub fn session(&self) -> Self {
        Self {
            session: Session::new(&self.relay),
            told: feed::Told::new(self.board.clone()),
            ..self.clone()
        }
    }

    /// Sessions cannot be asked anything (`--stateless` HTTP): server-to-client requests and
    /// `logging/setLevel` answer a clear error.
    #[must_use]
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// The gateway's downstream sessions.
    pub(crate) fn relay(&self) -> &Arc<Relay> {
        &self.relay
    }

    /// The caller of a request of this session, for the call pipeline: its client is the one
    /// the HTTP front authenticated it as, else this server's.
    pub(crate) fn caller<'a>(&'a self, context: &'a RequestContext<RoleServer>) -> Caller<'a> {
        let session = (!self.stateless).then_some(&*self.session);
        let parts = context.extensions.get::<axum::http::request::Parts>();
        Caller {
            session: session.map(|s| s as &dyn crate::call::caller::OwnConnections),
            ended: session.map(|s| s.ended()),
            bridges: &self.bridges,
            client: self.client_of(context),
            hooks: &self.hooks,
            session_id: parts
                .and_then(|p| p.headers.get(SESSION_HEADER))
                .and_then(|id| id.to_str().ok()),
            transport: match parts {
                Some(_) => Transport::Tcp,
                None => Transport::Pipe,
            },
            via: None,
        }
    }

    /// The caller of the tool calls a `run_code` script of this request makes (recorded as
    /// from code).
    #[cfg(feature = "code-mode")]
    pub(crate) fn code_caller<'a>(&'a self, context: &'a RequestContext<RoleServer>) -> Caller<'a> {
        Caller {
            via: Some(crate::code_mode::VIA),
            ..self.caller(context)
        }
    }

    /// The client of a request: the HTTP front's (in the request's extensions), else this
    /// server's.
    pub(crate) fn client_of<'a>(
        &'a self,
        context: &'a RequestContext<RoleServer>,
    ) -> &'a Arc<Client> {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<Client>>())
            .unwrap_or(&self.client)
    }

    /// Record calls with `hooks`.
    pub(crate) fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Serve requests that carry no client of their own (stdio) as `client`.
    pub(crate) fn with_client(mut self, client: Arc<Client>) -> Self {
        self.client = client;
        self
    }

    /// What this session was last answered of its lists (the express lane answers too).
    pub(crate) fn lists(&self) -> Arc<dyn Lists> {
        Arc::clone(&self.told) as Arc<dyn Lists>
    }

    /// The client of requests that carry none of their own.
    pub(crate) fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// What the gateway records of calls.
    pub(crate) fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// Present another server name and version to clients.
    #[must_use]
    pub fn with_info(mut self, name: &str, version: &str) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's LLM, sent in the handshake.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Serve in search mode per `settings` (`search_tools` and `call_tool` in place of the board's tools); off does nothing.
    #[must_use]
    pub fn with_tool_search(mut self, settings: crate::search_mode::SearchSettings) -> Self {
        self.search = (settings.mode != crate::search_mode::ToolSearch::Off)
            .then(|| crate::search_mode::SearchMode::new(self.board.clone(), settings));
        self
    }

    /// Serve in code mode per `settings` (`search_tools`, `describe_tools` and `run_code`; see
    /// docs/code-mode.md); `None` leaves it off. Needs the `code-mode` feature. Its
    /// `search_tools` ranks as search mode's (set by [`BoardServer::with_tool_search`] before
    /// this; lexical, or hybrid with the `embed` feature, by default).
    #[cfg(feature = "code-mode")]
    #[must_use]
    pub fn with_code_mode(mut self, settings: Option<crate::config::CodeModeSettings>) -> Self {
        // `search_tools` ranks as search mode's, with its settings when it is configured.
        let ranker = || {
            self.search.clone().unwrap_or_else(|| {
                crate::search_mode::SearchMode::new(self.board.clone(), Default::default())
            })
        };
        self.code =
            settings.map(|s| crate::code_mode::CodeMode::new(self.board.clone(), s, ranker()));
        self
    }

    /// Serve while servers are still starting: the lists, `server/discover` and calls of tools not
    /// on the board yet wait for `startup` (`session/startup.rs`). Without it nothing waits.
    #[must_use]
    pub(crate) fn with_startup(mut self, startup: Startup) -> Self {
        self.startup = startup;
        self
    }

    /// Whether plain `tools/call` and `tools/list` may take the express lane (on by default; see
    /// docs/gateway.md). Off, every request goes through rmcp.
    #[must_use]
    pub fn with_express(mut self, on: bool) -> Self {
        self.express = on;
        self
    }

    /// Whether the express lane is on (see [`BoardServer::with_express`]).
    pub fn express(&self) -> bool {
        self.express && self.search.is_none() && !self.code_mode_on()
    }

    /// Cancelled when this handler's session ends.
    pub(crate) fn session_ended(&self) -> &tokio_util::sync::CancellationToken {
        self.session.ended()
    }

    /// What the lists wait for while servers are still starting.
    pub(crate) fn startup(&self) -> &Startup {
        &self.startup
    }

    /// The board served.
    pub fn board(&self) -> &PegBoard {
        &self.board
    }
}

/// What `--stateless` cannot do: it keeps no session to hold `what`.
fn no_session(what: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("pegboard --stateless keeps no session to hold {what}"),
        None,
    )
}
