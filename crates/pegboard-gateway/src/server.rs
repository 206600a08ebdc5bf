//! [`BoardServer`]: a [`PegBoard`] served as one MCP server (feature `server`).
//!
//! `tools/list` answers from the board's snapshot, `tools/call` routes through the board, and
//! every downstream client is sent `notifications/tools/list_changed` when the board changes.
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

use std::time::Duration;

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        ListToolsResult, PaginatedRequestParams, ResultType, ServerCapabilities, ServerConfig,
        SubscriptionFilter, Tool,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use serde_json::json;

use pegboard::{CallOptions, PegBoard, PegBoardError};

pub use pegboard::export::NAMESPACE_META_KEY;

/// How often a downstream session's notifier checks that its client is still there.
const PRUNE_INTERVAL: Duration = Duration::from_secs(30);

/// A [`PegBoard`] as an rmcp [`ServerHandler`]. Clones are cheap and share the board.
#[derive(Clone)]
pub struct BoardServer {
    board: PegBoard,
    info: Implementation,
    instructions: Option<String>,
    search: Option<crate::search_mode::SearchMode>,
}

impl BoardServer {
    /// Serve this board (it stays shared: changes to it show downstream at once).
    pub fn new(board: PegBoard) -> Self {
        Self {
            board,
            info: Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
            instructions: None,
            search: None,
        }
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

    /// The board served.
    pub fn board(&self) -> &PegBoard {
        &self.board
    }
}

/// Board errors as MCP answers: a bad request is a protocol error; a tool that could not be
/// reached is a tool result with `isError`, so the LLM reads why and can carry on.
fn to_response(tool: &str, error: PegBoardError) -> Result<CallToolResponse, ErrorData> {
    match error {
        PegBoardError::ToolNotFound { .. } | PegBoardError::InvalidArguments { .. } => Err(
            ErrorData::invalid_params(error.to_string(), Some(json!({ "tool": tool }))),
        ),
        PegBoardError::ServiceError {
            source: rmcp::ServiceError::McpError(upstream),
            ..
        } => Err(upstream),
        other => Ok(CallToolResult::error(vec![ContentBlock::text(other.to_string())]).into()),
    }
}

impl ServerHandler for BoardServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        if let Some(instructions) = &self.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
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
        let request = match crate::search_mode::intercept(self.search.as_ref(), request) {
            crate::search_mode::Intercept::Answer(answer) => return answer.map(Into::into),
            crate::search_mode::Intercept::Call(request) => request,
        };
        let arguments = request
            .arguments
            .map_or(serde_json::Value::Null, serde_json::Value::Object);
        let call = self
            .board
            .call_tool_with(&request.name, arguments, CallOptions::default());
        tokio::select! {
            outcome = call => match outcome {
                Ok(mut result) => {
                    // The upstream answered on its own connection, maybe of an older protocol
                    // generation (no `resultType`); a 2026-07-28 client requires the field. rmcp
                    // strips it again for legacy clients.
                    result.result_type = Some(ResultType::COMPLETE);
                    Ok(result.into())
                }
                Err(error) => to_response(&request.name, error),
            },
            // The client cancelled: dropping the board's call cancels it upstream too.
            () = context.ct.cancelled() => Err(ErrorData::internal_error("request cancelled by the client", None)),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let peer = context.peer;
        let mut changes = self.board.subscribe();
        changes.mark_unchanged();
        tokio::spawn(async move {
            let mut prune = tokio::time::interval(PRUNE_INTERVAL);
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
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
        Some(requested.supported_by(&ServerHandler::get_info(self).capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.board.subscribe();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let _ = context.sink().notify_tool_list_changed().await;
                }
            }
        }
    }
}
