//! [`BoardServer`] as rmcp's [`ServerHandler`]: each MCP request to the board's answer.
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::borrow::Cow;

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, DiscoverResult, GetPromptRequestParams, GetPromptResponse,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, PromptsCapability, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ResourcesCapability, ResultType, ServerCapabilities, ServerConfig,
        SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};

use super::{BoardServer, feed, no_session, to_response};
use crate::{catalog, forward};

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
        // A session's first request may name a prompt of a server still starting.
        self.startup.wait().await;
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
        self.startup.wait().await;
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
        self.startup.wait().await;
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
        self.startup.wait().await;
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
        let offers = self.session.offers(&self.board, !self.startup.is_settled());
        feed::follow(&self.board, &self.relay, peer, offers, http_session);
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
        feed::listen(&self.board, &self.relay, context).await
    }
}
