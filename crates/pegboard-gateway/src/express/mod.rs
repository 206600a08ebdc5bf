//! The express lane: `tools/call` to a stdio server as bytes, past rmcp, from a stdio client
//! (`stdio.rs`, [`serve`]) or an HTTP session (`http.rs`); and `tools/list` from one kept
//! serialisation per board generation and client view (`tools_list.rs`).
//!
//! On rmcp's way a call is parsed into typed messages twice (request and result, through
//! generic untagged deserializers), serialised twice, and handed between five tasks; that is
//! most of what the gateway adds to a call (`crates/pegboard-load/README.md`). The lane reads
//! only the members it routes by (`request.rs`), splices in the upstream's id, the tool's
//! original name and the trace context, writes the line to the server between rmcp's own
//! messages (`io/writer.rs`), takes the answer out of the server's output by its id before rmcp
//! reads it (`upstream/lane.rs`) and writes it to the client with the client's id back: one
//! task per call over stdio; over HTTP the call runs in its request's own task while the
//! request waits for it (`detach.rs`).
//!
//! The lane is a transport, not a second set of decisions: a call on it goes through the same
//! steps as on rmcp's way (`crate::call`: the route and the client's view of it, one deadline,
//! the watch with limits, metrics, spans and the audit line, the flight that ties the server's
//! requests to the call, one wording of failures, the result as rmcp's type reads it, namespaced
//! and capped; a result of text blocks alone, the common one, is told apart as the lane reads
//! the answer and passes as it is: `crate::protocol::result_shape`). It takes a call only when the session and the server both speak a legacy
//! protocol generation (up to 2025-11-25: no `resultType` to add), the params hold only `name`,
//! `arguments` (an object, or none) and `_meta` (whose members pass verbatim but the progress
//! token, which it maps, and the client's own session keys, which send the call rmcp's way),
//! the tool answered a plain call before (the first call learns whether it needs a task), and
//! its server is a stdio one on its shared connection (not `"session": "per-client"`); anything
//! else goes to rmcp, which judges it.

mod asks;
mod call;
mod cancels;
mod chunks;
mod detach;
mod events;
mod headers;
pub(crate) mod http;
mod request;
mod stdio;
mod tools_list;

use std::sync::Arc;

use rmcp::service::{RunningService, ServerInitializeError};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::definitions::WholeTools;
use crate::io::{limit::LimitedLines, writer};
use crate::server::BoardServer;

/// Serve `server` to one client over `reader`/`writer` (newline-delimited JSON-RPC, as stdio),
/// with the express lane in front of rmcp (see the module docs): what
/// [`Gateway::serve_stdio`](crate::Gateway::serve_stdio) runs on stdin and stdout.
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
    let lane = stdio::StdioLane::new(
        server.board().clone(),
        sink,
        server.startup().clone(),
        server.session_ended().clone(),
        (
            Arc::clone(server.client()),
            server.hooks().clone(),
            server.lists(),
        ),
        // Off in search mode, where the board's tools are called through the search tools.
        server.express(),
    );
    // No size limit on what the client sends (as before): only the line splitting is used.
    let reader = LimitedLines::new(reader, usize::MAX, "the client")
        .with_divert(Arc::clone(&lane) as Arc<dyn crate::io::limit::Divert>);
    // rmcp's typed `tools/list` answers (2026-07-28 sessions, `--no-express`, search mode)
    // go out whole, as the lane's do (see `crate::definitions`).
    let transport = WholeTools::new(
        AsyncRwTransport::new_server(reader, shared),
        server.board().clone(),
    );
    let running = server.serve(transport).await?;
    lane.start(running.peer().clone());
    Ok(running)
}
