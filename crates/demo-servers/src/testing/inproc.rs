//! Real rmcp servers in-process over `tokio::io::duplex`, connected as a board's clients: the
//! helpers the integration tests of `pegboard` and `pegboard-gateway` share (their
//! `tests/common` modules re-export them), and [`FixedTools`], a server with a fixed tool list.
// Test helpers: a failed handshake or a board that refuses a test's server is the test's
// failure, said where it happens.
#![allow(clippy::expect_used)]

use std::sync::Arc;

use pegboard::{BoxedService, ServiceOptions};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
};

/// Serve `server` on one end of a duplex pipe and connect an rmcp client (`()`) to the other.
pub async fn connect<S: ServerHandler>(server: S) -> BoxedService {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().into_dyn()
        .serve(client_io)
        .await
        .expect("client handshake")
}

/// Connect `server` and add it to `board` under `namespace`; returns the tool count.
pub async fn add<S: ServerHandler>(
    board: &pegboard::PegBoard,
    namespace: &str,
    server: S,
) -> usize {
    board
        .add_service(Some(namespace.into()), connect(server).await)
        .await
        .expect("add_service")
}

/// Like [`connect`], with pegboard's watching client, and the options to follow list_changed.
pub async fn connect_watched<S: ServerHandler>(server: S) -> (BoxedService, ServiceOptions) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (handler, watch) = pegboard::client::watch_tools();
    let service = handler
        .into_dyn()
        .serve(client_io)
        .await
        .expect("client handshake");
    (service, ServiceOptions::new().watch(watch))
}

/// A server with a fixed list of tools; every call answers `NAME: ARGS` (the name it was called by).
#[derive(Clone)]
pub struct FixedTools {
    /// The tools it lists.
    pub tools: Arc<Vec<Tool>>,
}

impl FixedTools {
    /// A server with these tools (each described `the NAME tool`, with an empty schema).
    pub fn named(names: &[&str]) -> Self {
        let tools = names
            .iter()
            .map(|n| {
                Tool::new(
                    n.to_string(),
                    format!("the {n} tool"),
                    Arc::new(Default::default()),
                )
            })
            .collect();
        Self {
            tools: Arc::new(tools),
        }
    }
}

impl ServerHandler for FixedTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("fixed-tools", "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", request.name),
                None,
            ));
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "{}: {args}",
            request.name
        ))])
        .into())
    }
}

/// The text of a result's first content block.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// Everything observable about a board, to check that a failed write changed nothing.
pub fn fingerprint(board: &pegboard::PegBoard) -> String {
    let routes: Vec<_> = board
        .list_all_tools()
        .iter()
        .map(|n| (n.clone(), board.get_tool_route(n)))
        .collect();
    let namespaces: Vec<_> = board
        .list_namespaces()
        .iter()
        .map(|ns| (ns.clone(), board.list_tools_in_namespace(ns)))
        .collect();
    format!(
        "{routes:?} {namespaces:?} tools={} services={} namespaces={} {:?}",
        board.tool_count(),
        board.service_count(),
        board.namespace_count(),
        board.services()
    )
}

/// A server whose end can be closed from the test, as if its process died, and which reports
/// when its side of the connection has ended.
pub struct Killable {
    /// The client's end, connected.
    pub service: BoxedService,
    /// Cancel to close the server's end.
    pub kill: tokio_util::sync::CancellationToken,
    /// Sent once the server's end has ended.
    pub ended: tokio::sync::oneshot::Receiver<()>,
}

/// Serve `server` as [`connect`] does, closable from the test (see [`Killable`]).
pub async fn connect_killable<S: ServerHandler>(server: S) -> Killable {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let kill = tokio_util::sync::CancellationToken::new();
    let (ended_tx, ended) = tokio::sync::oneshot::channel();
    let ct = kill.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve_with_ct(server_io, ct).await {
            let _ = running.waiting().await;
        }
        let _ = ended_tx.send(());
    });
    let service = ().into_dyn().serve(client_io).await.expect("client handshake");
    Killable {
        service,
        kill,
        ended,
    }
}
