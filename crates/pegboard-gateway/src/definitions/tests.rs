//! [`Whole`] against a real board: a demo server in-process, and a tool with members rmcp does
//! not model registered beside its tools.

use std::sync::Arc;

use pegboard::{PegBoard, Tool};
use rmcp::ServiceExt;
use rmcp::model::{ListToolsResult, ServerJsonRpcMessage};
use serde_json::{Value, json};

use super::Whole;

/// A board with the units demo server (namespace `units`) and `units-vendor`, whose definition
/// has `execution` and a vendor's member.
async fn board() -> PegBoard {
    let board = PegBoard::new();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = demo_servers::UnitsServer::default().serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let service = ().into_dyn().serve(client_io).await.unwrap();
    board
        .add_service(Some("units".into()), service)
        .await
        .unwrap();
    let extra = json!({"execution": {"taskSupport": "forbidden"}, "x-vendor": {"tier": 2}});
    let tool = Tool::new("vendor", "A vendor's tool", Arc::new(Default::default()))
        .with_extra(extra.as_object().unwrap().clone());
    board.register_tool(Some("units"), tool, 0).unwrap();
    board
}

fn by_name<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
}

#[tokio::test]
async fn a_typed_list_gets_back_what_its_type_dropped() {
    let board = board().await;
    let typed = ListToolsResult::with_all_items(board.mcp_tools());
    let whole = Whole::of(&board).result(&typed).unwrap();
    let vendor = by_name(&whole["tools"], "units-vendor");
    assert_eq!(vendor["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(vendor["x-vendor"], json!({"tier": 2}));
    assert_eq!(vendor["_meta"]["pegboard/namespace"], "units");
    // The board's listing, to the byte: the one listing.
    let listed: Vec<Value> = board
        .listed_tools()
        .iter()
        .map(|t| Value::Object(t.to_json()))
        .collect();
    assert_eq!(whole["tools"], Value::Array(listed));
}

#[tokio::test]
async fn a_tool_not_made_from_the_board_is_left_as_it_is() {
    let board = board().await;
    let mut stale = board
        .mcp_tools()
        .into_iter()
        .find(|t| t.name == "units-vendor")
        .unwrap();
    // A tool of that name that the board's is not (changed since, or a tool of the gateway's).
    stale.description = Some("another tool".into());
    let typed = ListToolsResult::with_all_items(vec![stale.clone()]);
    assert_eq!(Whole::of(&board).result(&typed), None);
    // Nothing to put back on a board whose tools rmcp's type holds whole.
    let plain = PegBoard::new();
    let typed = ListToolsResult::with_all_items(board.mcp_tools());
    assert_eq!(Whole::of(&plain).result(&typed), None);
}

#[tokio::test]
async fn a_message_as_text_keeps_its_other_members() {
    let board = board().await;
    let typed = ListToolsResult::with_all_items(board.mcp_tools());
    let message = json!({"jsonrpc": "2.0", "id": 7, "result": {
        "tools": serde_json::to_value(&typed.tools).unwrap(),
        "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}});
    let text = serde_json::to_vec(&message).unwrap();
    let whole: Value = serde_json::from_slice(&Whole::of(&board).message(&text).unwrap()).unwrap();
    assert_eq!(whole["id"], 7);
    assert_eq!(whole["result"]["resultType"], "complete");
    assert_eq!(whole["result"]["ttlMs"], 0);
    let vendor = by_name(&whole["result"]["tools"], "units-vendor");
    assert_eq!(vendor["x-vendor"], json!({"tier": 2}));
    // Not a tools/list answer, or not JSON: nothing to do.
    let call = br#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#;
    assert_eq!(Whole::of(&board).message(call), None);
    assert_eq!(Whole::of(&board).message(b"{\"tools\""), None);
}

#[tokio::test]
async fn the_transport_sends_a_typed_answer_whole_and_the_rest_as_it_is() {
    let board = board().await;
    let typed = ListToolsResult::with_all_items(board.mcp_tools());
    let answer = ServerJsonRpcMessage::response(
        rmcp::model::ServerResult::ListToolsResult(typed),
        rmcp::model::RequestId::Number(3),
    );
    let sent = serde_json::to_value(super::transport::made_whole(&board, answer)).unwrap();
    assert_eq!(
        by_name(&sent["result"]["tools"], "units-vendor")["x-vendor"],
        json!({"tier": 2})
    );
    assert_eq!(sent["id"], 3);
    let other = ServerJsonRpcMessage::response(
        rmcp::model::ServerResult::empty(()),
        rmcp::model::RequestId::Number(4),
    );
    let before = serde_json::to_value(&other).unwrap();
    let after = serde_json::to_value(super::transport::made_whole(&board, other)).unwrap();
    assert_eq!(before, after);
}
