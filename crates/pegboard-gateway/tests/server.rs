//! The board served as one MCP server (feature `server`), driven by a real rmcp client.

mod common;

use std::time::Duration;

use common::text;
use demo_servers::{NotesServer, UnitsServer};
use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, RoleClient, ServiceExt, model::CallToolRequestParams,
    service::NotificationContext,
};
use serde_json::json;
use tokio::sync::mpsc;

#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

async fn gateway(board: PegBoard) -> (pegboard::BoxedService, mpsc::UnboundedReceiver<()>) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = BoardServer::new(board).serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let client = Listener(tx).into_dyn().serve(client_io).await.unwrap();
    (client, rx)
}

fn args(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn a_client_sees_the_merged_board_and_calls_route_through_it() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    let (client, _changes) = gateway(board.clone()).await;

    let info = client.peer_info().unwrap();
    assert!(
        info.capabilities
            .tools
            .as_ref()
            .unwrap()
            .list_changed
            .unwrap_or(false)
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, board.list_all_tools());
    let convert = tools.iter().find(|t| t.name == "units-convert").unwrap();
    assert_eq!(
        convert.meta.as_ref().unwrap().0["pegboard/namespace"],
        "units"
    );

    let result = client
        .call_tool(
            CallToolRequestParams::new("units-convert")
                .with_arguments(args(json!({"value": 2.0, "from": "kg", "to": "g"}))),
        )
        .await
        .unwrap();
    assert!(text(&result).contains("2000"), "{result:?}");
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_naming_close_matches() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    let (client, _changes) = gateway(board).await;
    let err = client
        .call_tool(CallToolRequestParams::new("search"))
        .await
        .unwrap_err();
    match err {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(
                e.message.contains("did you mean `notes-search`"),
                "{}",
                e.message
            );
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn board_changes_reach_the_client_as_list_changed() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    let (client, mut changes) = gateway(board.clone()).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);

    common::add(&board, "units", UnitsServer::new()).await;
    tokio::time::timeout(Duration::from_secs(2), changes.recv())
        .await
        .expect("list_changed")
        .unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 5);

    board.unregister_namespace("notes").unwrap();
    tokio::time::timeout(Duration::from_secs(2), changes.recv())
        .await
        .expect("list_changed")
        .unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
}
