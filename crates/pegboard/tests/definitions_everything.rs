//! Definitions kept whole with a real third-party server: `@modelcontextprotocol/server-everything`
//! (installed by `scripts/setup-test-deps.sh`; the test fails, never skips, without it) over
//! stdio, its stdout read through a `ToolListTap`. Every tool on the board is the server's
//! definition member for member, as a raw JSON-RPC client reads it from a second copy of the
//! server, `execution` included.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
};

use pegboard::{PegBoard, ServiceOptions, ToolListTap};
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, Command},
};

/// `$PEGBOARD_TEST_DEPS`, else `<workspace>/target/test-deps`.
fn everything() -> PathBuf {
    let deps = std::env::var_os("PEGBOARD_TEST_DEPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"),
        PathBuf::from,
    );
    let path = deps.join("node/node_modules/.bin/mcp-server-everything");
    assert!(
        path.exists(),
        "missing third-party test dependency {}: run `scripts/setup-test-deps.sh`",
        path.display()
    );
    path
}

fn spawn_everything() -> Child {
    Command::new(everything())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("server-everything starts")
}

/// Every tool server-everything lists, as JSON, read by a plain JSON-RPC client speaking
/// `version`.
async fn raw_tools(version: &str) -> Vec<Value> {
    let mut child = spawn_everything();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        let mut line = message.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let mut answer = async |id: u64| loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server answers");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    };
    answer(1).await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let mut tools = Vec::new();
    let mut cursor = Value::Null;
    for id in 2.. {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({ "cursor": cursor })
        };
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})).await;
        let page = answer(id).await;
        tools.extend(page["result"]["tools"].as_array().unwrap().iter().cloned());
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    tools
}

#[tokio::test]
async fn server_everything_tools_are_on_the_board_member_for_member() {
    let mut child = spawn_everything();
    let tap = ToolListTap::new();
    let transport = (
        tap.reader(child.stdout.take().unwrap()),
        child.stdin.take().unwrap(),
    );
    let service = ().into_dyn().serve(transport).await.unwrap();
    let version = service
        .peer()
        .peer_info()
        .unwrap()
        .protocol_version
        .to_string();
    let board = PegBoard::new();
    board
        .add_service_with(
            Some("everything".into()),
            service,
            ServiceOptions::new().tool_list_tap(tap),
        )
        .await
        .unwrap();

    let raw = raw_tools(&version).await;
    assert!(raw.len() > 5, "{} tools", raw.len());
    let mut with_execution = 0;
    for mut definition in raw {
        let name = definition["name"].as_str().unwrap().to_string();
        let tool = board
            .get_tool(&format!("everything-{name}"))
            .unwrap_or_else(|| panic!("{name} is on the board"));
        definition["name"] = json!(tool.name.as_str());
        with_execution += usize::from(definition.get("execution").is_some());
        assert_eq!(Value::Object(tool.to_json()), definition, "{name}");
    }
    // The member that was lost before: `simulate-research-query` requires a task.
    assert!(with_execution > 0);
    let research = board
        .get_tool("everything-simulate-research-query")
        .expect("server-everything lists simulate-research-query");
    assert_eq!(
        research.extra().unwrap()["execution"]["taskSupport"],
        "required"
    );
    // ... which a client of the board is not told, as the gateway runs it as a plain call.
    let listed = board
        .listed_tools()
        .into_iter()
        .find(|t| t.tool().name == "everything-simulate-research-query")
        .unwrap();
    assert!(listed.to_json().get("execution").is_none());
    board.shutdown().await;
}
