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

use std::sync::Arc;

use rmcp::{
    ErrorData,
    model::{CallToolResponse, CallToolResult, ContentBlock, Implementation},
};
use serde_json::json;

use pegboard::{PegBoard, PegBoardError};

use crate::{downstream::Session, relay::Relay};

mod feed;
mod handler;

pub use pegboard::export::NAMESPACE_META_KEY;

/// A [`PegBoard`] as an rmcp [`ServerHandler`](rmcp::ServerHandler). Clones are cheap and share the board.
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

/// What `--stateless` cannot do: it keeps no session to hold `what`.
fn no_session(what: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("pegboard --stateless keeps no session to hold {what}"),
        None,
    )
}
