//! [`BoardServer`]: a [`PegBoard`] served as one MCP server (feature `server`).
//!
//! `tools/list` answers from the board's snapshot, `tools/call` is forwarded upstream with its
//! progress, cancellation and server-to-client requests (see `forward.rs`), logging is relayed
//! both ways, and every downstream client is sent `notifications/tools/list_changed` when the
//! board changes. Each downstream session gets its own [`BoardServer::session`].
//! Serve it over any rmcp transport: stdio, or streamable HTTP inside your own axum app.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! let board = pegboard::PegBoard::new();
//! // ... add services ...
//! let server = pegboard_gateway::server::BoardServer::new(board).serve(rmcp::transport::stdio()).await?;
//! server.waiting().await?;
//! # Ok(()) }
//! ```
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::{borrow::Cow, sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, DiscoverResult, GetPromptRequestParams, GetPromptResponse,
        Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, PromptsCapability, ProtocolVersion,
        ReadResourceRequestParams, ReadResourceResponse, ResourcesCapability, ResultType,
        ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
        SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use serde_json::json;

use pegboard::{PegBoard, PegBoardError};

use crate::{catalog, downstream::Session, forward, relay::Relay};

pub use pegboard::export::NAMESPACE_META_KEY;

/// How often a downstream session's notifier checks that its client is still there.
const PRUNE_INTERVAL: Duration = Duration::from_secs(30);

/// A [`PegBoard`] as an rmcp [`ServerHandler`]. Clones are cheap and share the board.
#[derive(Clone)]
pub struct BoardServer {
    board: PegBoard,
    info: Implementation,
    instructions: Option<String>,
    relay: Arc<Relay>,
    session: Arc<Session>,
    stateless: bool,
    search: Option<crate::search_mode::SearchMode>,
    startup: crate::startup::Startup,
    express: bool,
}

impl BoardServer {
    /// Serve this board (it stays shared: changes to it show downstream at once).
    pub fn new(board: PegBoard) -> Self {
        let relay = Relay::new();
        let session = Session::new(&relay);
        Self {
            board,
            info: Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
            instructions: None,
            relay,
            session,
            stateless: false,
            search: None,
            startup: crate::startup::Startup::default(),
            express: true,
        }
    }

    /// The handler for one more downstream session: same board and relay, its own session
    /// state (log level, roots). Serve each client connection with its own.
    #[must_use]
    pub fn session(&self) -> Self {
        Self {
            session: Session::new(&self.relay),
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

    /// The gateway's downstream sessions, for the upstream hubs (see [`crate::upstream::Hub::attach`]).
    pub fn relay(&self) -> &Arc<Relay> {
        &self.relay
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

    /// Serve in search mode per `settings` (see [`crate::search_mode`]); off does nothing.
    #[must_use]
    pub fn with_tool_search(mut self, settings: crate::search_mode::SearchSettings) -> Self {
        self.search = (settings.mode != crate::search_mode::ToolSearch::Off)
            .then(|| crate::search_mode::SearchMode::new(self.board.clone(), settings));
        self
    }

    /// Serve while servers are still starting: the lists, `server/discover` and calls of tools not
    /// on the board yet wait for `startup` (see [`crate::startup`]). Without it nothing waits.
    #[must_use]
    pub fn with_startup(mut self, startup: crate::startup::Startup) -> Self {
        self.startup = startup;
        self
    }

    /// Whether plain `tools/call` and `tools/list` may take the express lane (on by default; see
    /// [`crate::express`]). Off, every request goes through rmcp.
    #[must_use]
    pub fn with_express(mut self, on: bool) -> Self {
        self.express = on;
        self
    }

    /// Whether the express lane is on (see [`BoardServer::with_express`]).
    pub fn express(&self) -> bool {
        self.express && self.search.is_none()
    }

    /// What the lists wait for while servers are still starting.
    pub(crate) fn startup(&self) -> &crate::startup::Startup {
        &self.startup
    }

    /// The board served.
    pub fn board(&self) -> &PegBoard {
        &self.board
    }
}

/// Board errors as MCP answers: a bad request is a protocol error; a tool that could not be
/// reached is a tool result with `isError`, so the LLM reads why and can carry on.
fn to_response(tool: &str, error: PegBoardError) -> Result<CallToolResponse, ErrorData> {
    board_error(tool, error).map(Into::into)
}

/// [`to_response`]'s answer as a plain result (the express lane builds its own message).
pub(crate) fn board_error(tool: &str, error: PegBoardError) -> Result<CallToolResult, ErrorData> {
    match error {
        PegBoardError::ToolNotFound { .. } | PegBoardError::InvalidArguments { .. } => Err(
            ErrorData::invalid_params(error.to_string(), Some(json!({ "tool": tool }))),
        ),
        PegBoardError::ServiceError {
            source: rmcp::ServiceError::McpError(upstream),
            ..
        } => Err(upstream),
        other => Ok(CallToolResult::error(vec![ContentBlock::text(
            other.to_string(),
        )])),
    }
}

/// An HTTP session's place in the express lane's registry, given up when dropped.
struct SessionEntry(Arc<Relay>, String);

impl Drop for SessionEntry {
    fn drop(&mut self) {
        self.0.express_sessions().remove(&self.1);
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

impl ServerHandler for BoardServer {
    fn get_info(&self) -> ServerConfig {
        let offers = self.session.offers(&self.board, !self.startup.is_settled());
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if !self.stateless && offers.logging {
            capabilities.logging = Some(serde_json::Map::new());
        }
        if offers.prompts {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(!self.stateless);
            capabilities.prompts = Some(prompts);
        }
        if offers.resources {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(offers.subscribe && !self.stateless);
            resources.list_changed = Some(!self.stateless);
            capabilities.resources = Some(resources);
        }
        if offers.completions {
            capabilities.completions = Some(serde_json::Map::new());
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        if let Some(instructions) = &self.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    /// The protocol generations the gateway offers a client: up to the oldest one its servers
    /// support (asked with `server/discover`, else the version their handshake settled on). A client then talks to the gateway as it would to the servers directly (a
    /// 2026-07-28 client falls back to 2025-11-25 with 2025 servers, and keeps sampling,
    /// elicitation, roots and logging), instead of landing on a generation the servers cannot
    /// serve through the gateway (PASSTHROUGH.md §7's bridge would be needed otherwise).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        let oldest = self
            .board
            .service_peers()
            .iter()
            .filter_map(|(peer, extension)| {
                let learnt = extension
                    .as_ref()
                    .and_then(|e| e.get::<crate::upstream::Hub>())
                    .and_then(|hub| hub.newest_version().cloned());
                learnt.or_else(|| peer.peer_info().map(|info| info.protocol_version.clone()))
            })
            .min_by(|a, b| a.as_str().cmp(b.as_str()));
        match oldest.map(|v| ProtocolVersion::known_up_to(&v)) {
            Some(versions) if !versions.is_empty() => Cow::Borrowed(versions),
            _ => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    /// `server/discover` (2026-07-28): its `supportedVersions` decide the client's lifecycle, and
    /// come from the servers; give them `--wait` to join (see [`crate::startup`]).
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        self.startup.wait().await;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            ServerHandler::get_info(self),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.startup.wait().await;
        let listed = self.search.as_ref().and_then(|mode| mode.list());
        Ok(ListToolsResult::with_all_items(
            listed.unwrap_or_else(|| self.board.mcp_tools()),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let meta = self.search.as_ref().and_then(|mode| mode.get_tool(name));
        meta.or_else(|| self.board.get_tool(name).map(|t| t.to_rmcp()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.startup.wait_for_tool(&self.board, &request.name).await;
        let request = match crate::search_mode::intercept(self.search.as_ref(), request) {
            crate::search_mode::Intercept::Answer(answer) => return answer.map(Into::into),
            crate::search_mode::Intercept::Call(request) => request,
        };
        let mut request = request;
        let name = std::mem::take(&mut request.name);
        let session = (!self.stateless).then_some(&*self.session);
        match forward::call_tool(&self.board, &name, request, &context, session).await {
            Ok(CallToolResponse::Complete(mut result)) => {
                // The upstream answered on its own connection, maybe of an older protocol
                // generation (no `resultType`); a 2026-07-28 client requires the field. rmcp
                // strips it again for legacy clients.
                result.result_type = Some(ResultType::COMPLETE);
                Ok(result.into())
            }
            // `input_required` for a 2026-07-28 client, as the server sent it: the retry names
            // the same tool, so it reaches the same server with its answers and state.
            Ok(other) => Ok(other),
            Err(forward::Failure::Board(error)) => to_response(&name, error),
            // The guard in `forward` has told the upstream.
            Err(forward::Failure::Cancelled) => Err(ErrorData::internal_error(
                "request cancelled by the client",
                None,
            )),
            // Like a server that failed: the model reads why, and may try again.
            Err(forward::Failure::Open(why) | forward::Failure::Unanswered(why)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into())
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.startup.wait().await;
        Ok(catalog::list_prompts(&self.board).await)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        catalog::get_prompt(&self.board, request, &context, !self.stateless).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.startup.wait().await;
        Ok(catalog::list_resources(&self.board).await)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.startup.wait().await;
        Ok(catalog::list_resource_templates(&self.board).await)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        catalog::read_resource(&self.board, request, &context, !self.stateless).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.stateless {
            return Err(no_session("a resource subscription"));
        }
        let target = self
            .board
            .resource_target(&request.uri)
            .map_err(catalog::to_error)?;
        self.relay
            .subscriptions()
            .subscribe(self.session.id(), target)
            .await
            .map_err(|e| match e {
                rmcp::ServiceError::McpError(upstream) => upstream,
                other => ErrorData::internal_error(other.to_string(), None),
            })
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = self
            .board
            .resource_target(&request.uri)
            .map_err(catalog::to_error)?;
        self.relay
            .subscriptions()
            .unsubscribe(self.session.id(), target)
            .await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        catalog::complete(&self.board, request).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.stateless {
            return Err(no_session("a log level"));
        }
        self.session.set_level(&self.board, request.level).await;
        Ok(())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        let (session, board) = (self.session.clone(), self.board.clone());
        // Not inline: the roots/list request's answer arrives through this same serve loop.
        tokio::spawn(async move { session.refresh_roots(&board).await });
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Over HTTP: the session may take the express lane from now on, until it ends.
        let http_session = (!self.stateless)
            .then(|| context.extensions.get::<axum::http::request::Parts>())
            .flatten()
            .and_then(|parts| parts.headers.get(crate::express::sessions::SESSION_HEADER))
            .and_then(|id| id.to_str().ok())
            .map(str::to_string);
        let peer = context.peer;
        if let Some(id) = &http_session {
            self.relay.express_sessions().add(id, peer.clone());
        }
        self.session.start(&self.board, peer.clone());
        let relay = self.relay.clone();
        let board = self.board.clone();
        let offers = self.session.offers(&self.board, !self.startup.is_settled());
        let mut changes = self.board.subscribe();
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

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.supported_by(&ServerHandler::get_info(self).capabilities);
        // Only URIs the board can route: the others could never be updated.
        if let Some(uris) = &mut accepted.resource_subscriptions {
            uris.retain(|uri| self.board.resource_target(uri).is_ok());
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // A 2026-07-28 client has no `initialized` notification: link the upstreams here.
        crate::downstream::attach_hubs(&self.board, &self.relay);
        let listener = self.relay.listen(context.sink().clone());
        // Watched from before the first upstream subscribe: a server that restarts while this
        // stream subscribes is subscribed again by the loop below.
        let mut changes = self.board.subscribe();
        changes.mark_unchanged();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let subscribed = match self.board.resource_target(uri) {
                Ok(target) => self
                    .relay
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
                    crate::downstream::attach_hubs(&self.board, &self.relay);
                    self.relay.resync_subscriptions(&self.board);
                }
            }
        }
    }
}
