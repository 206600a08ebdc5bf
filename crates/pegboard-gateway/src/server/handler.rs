//! [`BoardServer`] as rmcp's [`ServerHandler`]: each MCP request to the board's answer.

use std::borrow::Cow;

#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
        DiscoverResult, GetPromptRequestParams, GetPromptResponse, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        PromptsCapability, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        ResourcesCapability, ServerCapabilities, ServerConfig, SetLevelRequestParams,
        SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};

use super::{BoardServer, catalog, feed, no_session};
use std::sync::Arc;

use crate::{
    call::pipeline,
    identity::Client,
    protocol::headers::SESSION_HEADER,
    session::lists::Lists,
    upstream::{Hub, sides::ListKind},
};

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
        if let Some(instructions) = self
            .instructions
            .clone()
            .or_else(|| self.code_instructions())
        {
            config = config.with_instructions(instructions);
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
                    .and_then(|e| e.get::<Hub>())
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
    /// come from the servers; give them `--wait` to join (`session/startup.rs`).
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.startup.wait().await;
        let client = self.client_of(&context);
        self.keep_lists(&context);
        self.told.tools_answered(client);
        let listed = self
            .code_list(client)
            .or_else(|| self.search.as_ref().and_then(|mode| mode.list(client)));
        let tools = listed.unwrap_or_else(|| {
            let mut tools = self.board.mcp_tools();
            if !client.sees_everything() {
                client
                    .view(&self.board)
                    .retain_tools(&mut tools, |t| &t.name);
            }
            tools
        });
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let meta = match self.code_tool(name) {
            Some(tool) => Some(tool),
            None if self.code_mode_on() => None,
            None => self.search.as_ref().and_then(|mode| mode.get_tool(name)),
        };
        meta.or_else(|| self.board.get_tool(name).map(|t| t.to_rmcp()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.startup.wait_for_tool(&self.board, &request.name).await;
        let client = self.client_of(&context);
        let request = match self.code_call(request, &context).await {
            Ok(request) => request,
            Err(answer) => return answer,
        };
        let request = match crate::search_mode::intercept(self.search.as_ref(), request, client) {
            crate::search_mode::Intercept::Answer(answer) => return answer.map(Into::into),
            crate::search_mode::Intercept::Call(request) => request,
        };
        pipeline::call_tool(&self.board, request, &context, &self.caller(&context)).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.startup.wait().await;
        let client = self.client_of(&context);
        self.keep_lists(&context);
        self.told.answering(ListKind::Prompts, client);
        let listed = catalog::list_prompts(&self.board, client).await;
        self.told
            .prompts_answered(listed.prompts.iter().map(|p| p.name.as_str()));
        Ok(listed)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        // A session's first request may name a prompt of a server still starting.
        self.startup.wait().await;
        catalog::get_prompt(&self.board, request, &context, &self.caller(&context)).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.startup.wait().await;
        let client = self.client_of(&context);
        self.keep_lists(&context);
        self.told.answering(ListKind::Resources, client);
        Ok(catalog::list_resources(&self.board, client).await)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.startup.wait().await;
        let client = self.client_of(&context);
        self.keep_lists(&context);
        self.told.answering(ListKind::Resources, client);
        Ok(catalog::list_resource_templates(&self.board, client).await)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.startup.wait().await;
        catalog::read_resource(&self.board, request, &context, &self.caller(&context)).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.stateless {
            return Err(no_session("a resource subscription"));
        }
        self.startup.wait().await;
        let target = catalog::resource_target(&self.board, self.client_of(&context), &request.uri)
            .map_err(catalog::to_error)?;
        self.relay
            .subscriptions()
            .subscribe(self.session.id(), target)
            .await
            .map_err(|e| match e {
                rmcp::ServiceError::McpError(upstream) => upstream,
                other => ErrorData::internal_error(other.to_string(), None),
            })?;
        #[cfg(feature = "store")]
        if let Some((stored, id)) = self.stored_session(&context) {
            stored.subscription(id, &request.uri, true);
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[cfg(feature = "store")]
        if let Some((stored, id)) = self.stored_session(&context) {
            stored.subscription(id, &request.uri, false);
        }
        #[cfg(not(feature = "store"))]
        let _ = context;
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
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.startup.wait().await;
        catalog::complete(&self.board, request, &context, &self.caller(&context)).await
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.stateless {
            return Err(no_session("a log level"));
        }
        #[cfg(feature = "store")]
        if let Some((stored, id)) = self.stored_session(&context) {
            stored.level_set(id, request.level);
        }
        #[cfg(not(feature = "store"))]
        let _ = context;
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
            .and_then(|parts| parts.headers.get(SESSION_HEADER))
            .and_then(|id| id.to_str().ok())
            .map(str::to_string);
        // What it is answered of its lists is kept for a replica that takes it over: from
        // before the express lane may answer it.
        #[cfg(feature = "store")]
        if let (Some(stored), Some(id)) = (&self.stored, &http_session) {
            self.told.keep_in(stored, id);
        }
        let peer = context.peer;
        let client = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<Client>>())
            .map_or_else(|| Arc::clone(&self.client), Arc::clone);
        let offers = self.session.offers(&self.board, !self.startup.is_settled());
        self.told.start(&client, offers);
        if let Some(id) = &http_session {
            self.relay.express_sessions().add(
                id,
                peer.clone(),
                Arc::clone(&client),
                self.session.ended().clone(),
                self.lists(),
            );
        }
        let telemetry = self.hooks.telemetry.as_deref();
        self.session
            .start(&self.board, peer.clone(), self.lists(), telemetry);
        #[cfg(feature = "store")]
        if let (Some(stored), Some(id)) = (&self.stored, &http_session) {
            // A session taken over from the store gets back what it had set on its first
            // replica, and is told what its lists look like here.
            if let Some(adopted) = stored.take_adopted(id) {
                self.readopt(id, adopted, &client, &peer).await;
            }
        }
        feed::follow(
            &self.board,
            &self.relay,
            peer,
            Arc::clone(&self.told),
            http_session,
        );
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
        let client = Arc::clone(self.client_of(context.request_context()));
        let offers = self.session.offers(&self.board, !self.startup.is_settled());
        feed::listen(&self.board, &self.relay, context, &client, offers).await
    }
}
