//! The express lane: `tools/call` to a stdio server as bytes, past rmcp (from a stdio client,
//! [`serve`], or an HTTP session, `http.rs`).
//!
//! On rmcp's way a call is parsed into typed messages twice (request and result, through
//! generic untagged deserializers), serialised twice, and handed between five tasks; that is
//! most of what the gateway adds to a call (`crates/pegboard-load/README.md`). The lane reads
//! only the few members it routes by (`request.rs`), splices in the upstream's id and the tool's
//! original name, writes the line to the server between rmcp's own messages ([`writer`]), takes
//! the answer out of the server's output by its id before rmcp reads it ([`lane`]) and writes it
//! to the client with the client's id back (`front.rs`): one task per call, nothing rebuilt.
//!
//! It carries the common case and leaves everything else to rmcp, which serves it as before:
//! a call takes the lane only when the session and the server both speak a legacy protocol
//! generation (up to 2025-11-25: no `resultType` to add), the request's `_meta` holds at most a
//! progress token (the lane maps it: over stdio on the client's output, over HTTP as an event
//! stream) and it has no `task`, the tool answered a plain call before (the
//! first call learns whether it needs a task), and its server is a stdio one on its shared
//! connection (not `"session": "per-client"`). What rmcp's way does for a call, the lane does
//! too: call timeouts, `notifications/cancelled` both ways, server-to-client requests tied to
//! the call (sampling, elicitation, roots), errors worded the same, resource URIs in results
//! namespaced (then the result is rebuilt as on rmcp's way).

mod call;
mod cancels;
mod chunks;
mod events;
pub(crate) mod front;
pub(crate) mod http;
pub mod lane;
pub mod pipe;
mod request;
pub mod sessions;
mod tools_list;
pub mod writer;

use std::sync::Arc;

use rmcp::service::{RunningService, ServerInitializeError};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::server::BoardServer;
use crate::upstream::limit::LimitedLines;

/// Serve `server` to one client over `reader`/`writer` (newline-delimited JSON-RPC, as stdio),
/// with the express lane in front of rmcp (see the module docs).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let board = pegboard::PegBoard::new();
/// // ... add services ...
/// let server = pegboard_gateway::BoardServer::new(board);
/// let (reader, writer) = rmcp::transport::stdio_pipes();
/// let running = pegboard_gateway::express::serve(server, reader, writer).await?;
/// running.waiting().await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// The client did not complete the MCP handshake.
pub async fn serve<R, W>(
    server: BoardServer,
    reader: R,
    writer: W,
) -> Result<RunningService<RoleServer, BoardServer>, ServerInitializeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (shared, sink) = writer::share(writer);
    let front = front::Front::new(server.board().clone(), sink, server.startup().clone());
    // No size limit on what the client sends (as before): only the line splitting is used.
    let reader = LimitedLines::new(reader, usize::MAX, "the client")
        .with_divert(Arc::clone(&front) as Arc<dyn crate::upstream::limit::Divert>);
    let express = server.express();
    let running = server
        .serve(AsyncRwTransport::new_server(reader, shared))
        .await?;
    // Off in search mode, where the board's tools are called through the search tools.
    if express {
        front.start(running.peer().clone());
    }
    Ok(running)
}
