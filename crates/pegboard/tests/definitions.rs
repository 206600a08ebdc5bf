//! Definitions kept whole: members of a tool definition that rmcp's `Tool` does not model
//! (`execution` of MCP 2025-11-25, a vendor's own) reach the board through a `ToolListTap`, are
//! part of the tool (refresh sees a change of them), and are listed to clients with `execution`
//! as `execution_for_clients` says.
//!
//! The server is a real rmcp server whose `tools/list` answer is written as JSON (its handler
//! answers it with `ServerResult::CustomResult`, since rmcp's typed `list_tools` cannot carry
//! such members either); the client is rmcp's, over a duplex pipe.

mod common;

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use pegboard::{
    Listing, ListingFilter, PegBoard, PegBoardError, ServiceOptions, ToolListTap,
    export::NAMESPACE_META_KEY,
};
use rmcp::{
    ErrorData, RoleServer, Service, ServiceExt,
    model::{
        ClientNotification, ClientRequest, CustomResult, Implementation, ServerCapabilities,
        ServerConfig, ServerResult,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A real rmcp server whose `tools/list` pages are JSON written by the test; a page's
/// `nextCursor` is the index of the next page. Other requests are answered by `FixedTools`.
#[derive(Clone)]
struct RawTools {
    pages: Arc<Mutex<Vec<Vec<Value>>>>,
    hang: Arc<AtomicBool>,
    cancelled: Arc<Notify>,
    calls: common::FixedTools,
}

impl RawTools {
    fn new(pages: Vec<Vec<Value>>) -> Self {
        Self {
            pages: Arc::new(Mutex::new(pages)),
            hang: Arc::new(AtomicBool::new(false)),
            cancelled: Arc::new(Notify::new()),
            calls: common::FixedTools::named(&["read", "run"]),
        }
    }

    fn set(&self, pages: Vec<Vec<Value>>) {
        *self.pages.lock().unwrap() = pages;
    }

    fn page(&self, cursor: Option<&str>) -> Value {
        let pages = self.pages.lock().unwrap();
        let at: usize = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        let mut page = json!({ "tools": pages.get(at).cloned().unwrap_or_default() });
        if at + 1 < pages.len() {
            page["nextCursor"] = json!((at + 1).to_string());
        }
        page
    }
}

impl Service<RoleServer> for RawTools {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        match request {
            ClientRequest::ListToolsRequest(list) => {
                if self.hang.load(Ordering::SeqCst) {
                    context.ct.cancelled().await;
                    self.cancelled.notify_one();
                    return Err(ErrorData::internal_error("tools/list cancelled", None));
                }
                let cursor = list.params.as_ref().and_then(|p| p.cursor.as_deref());
                Ok(ServerResult::CustomResult(CustomResult(self.page(cursor))))
            }
            other => self.calls.handle_request(other, context).await,
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.calls.handle_notification(notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("raw-tools", "0.0.0"))
    }
}

/// Connect `server` over a duplex pipe, the client's reads shown to a tap.
async fn connect_tapped(server: RawTools) -> (pegboard::BoxedService, ToolListTap) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let tap = ToolListTap::new();
    let (read, write) = tokio::io::split(client_io);
    let service = ().into_dyn().serve((tap.reader(read), write)).await.unwrap();
    (service, tap)
}

async fn board_with(server: RawTools) -> (PegBoard, usize) {
    let (service, tap) = connect_tapped(server).await;
    let board = PegBoard::new();
    let added = board
        .add_service_with(
            Some("files".into()),
            service,
            ServiceOptions::new().tool_list_tap(tap),
        )
        .await
        .unwrap();
    (board, added.index)
}

fn read_tool(task_support: &str) -> Value {
    json!({
        "name": "read",
        "description": "Read a file",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": true},
        "execution": {"taskSupport": task_support},
        "x-vendor": {"cost": 3}
    })
}

fn run_tool(task_support: &str) -> Value {
    json!({
        "name": "run",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"resourceUri": "ui://run/view"}},
        "execution": {"taskSupport": task_support}
    })
}

fn plain_tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// The listed tool of that board name, as JSON.
fn listed(board: &PegBoard, name: &str) -> Value {
    board
        .listed_tools()
        .into_iter()
        .find(|t| t.tool().name == name)
        .map(|t| Value::Object(t.to_json()))
        .unwrap_or_else(|| panic!("{name} is listed"))
}

#[tokio::test]
async fn members_rmcp_does_not_model_reach_the_board_as_the_server_sent_them() {
    let server = RawTools::new(vec![vec![
        read_tool("forbidden"),
        run_tool("required"),
        plain_tool("stat"),
    ]]);
    let (board, _) = board_with(server).await;
    assert_eq!(
        board.list_all_tools(),
        ["files-read", "files-run", "files-stat"]
    );

    let read = board.get_tool("files-read").unwrap();
    assert_eq!(
        Value::Object(read.extra().unwrap().clone()),
        json!({"execution": {"taskSupport": "forbidden"}, "x-vendor": {"cost": 3}})
    );
    // The board keeps the server's word, `required` included; only what is listed differs.
    let run = board.get_tool("files-run").unwrap();
    assert_eq!(run.extra().unwrap()["execution"]["taskSupport"], "required");
    assert_eq!(board.get_tool("files-stat").unwrap().extra(), None);
    // The tool's own JSON is the server's definition under the board name.
    let mut expected = read_tool("forbidden");
    expected["name"] = json!("files-read");
    assert_eq!(Value::Object(read.to_json()), expected);
}

#[tokio::test]
async fn clients_are_told_execution_only_where_it_is_true_of_the_gateway() {
    let server = RawTools::new(vec![vec![
        read_tool("forbidden"),
        run_tool("required"),
        plain_tool("stat"),
    ]]);
    let (board, _) = board_with(server).await;

    let read = listed(&board, "files-read");
    assert_eq!(read["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(read["x-vendor"], json!({"cost": 3}));
    assert_eq!(read["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(read["_meta"][NAMESPACE_META_KEY], "files");

    let run = listed(&board, "files-run");
    assert!(run.get("execution").is_none(), "{run}");
    // The board's `_meta`: the namespace, and the MCP Apps UI read through the board.
    assert_eq!(run["_meta"][NAMESPACE_META_KEY], "files");
    let ui = run["_meta"]["ui"]["resourceUri"].as_str().unwrap();
    assert_ne!(ui, "ui://run/view", "namespaced as the board's resources");

    // Everything but the extra members is what `mcp_tools` gives, field for field.
    for (ours, theirs) in board.listed_tools().iter().zip(board.mcp_tools()) {
        let mut ours = ours.to_json();
        ours.remove("execution");
        ours.remove("x-vendor");
        assert_eq!(Value::Object(ours), serde_json::to_value(theirs).unwrap());
    }

    // Serialised as a list, it is the same JSON (no copy of the schemas needed to write it).
    let written = serde_json::to_value(board.listed_tools()).unwrap();
    let built: Vec<Value> = board
        .listed_tools()
        .iter()
        .map(|t| Value::Object(t.to_json()))
        .collect();
    assert_eq!(written, Value::Array(built));
}

#[tokio::test]
async fn every_page_keeps_its_members() {
    let server = RawTools::new(vec![
        vec![read_tool("forbidden"), plain_tool("a")],
        vec![plain_tool("b"), run_tool("optional")],
    ]);
    let (board, _) = board_with(server).await;
    assert_eq!(board.tool_count(), 4);
    assert_eq!(
        board.get_tool("files-read").unwrap().extra().unwrap()["execution"]["taskSupport"],
        "forbidden"
    );
    assert_eq!(
        board.get_tool("files-run").unwrap().extra().unwrap()["execution"]["taskSupport"],
        "optional"
    );
}

#[tokio::test]
async fn a_change_of_execution_is_a_change_of_the_tool_on_refresh() {
    let server = RawTools::new(vec![vec![read_tool("forbidden"), plain_tool("stat")]]);
    let (board, index) = board_with(server.clone()).await;

    // The same listing again: nothing changed, extra members included.
    let report = board.refresh_service(index).await.unwrap();
    assert!(report.is_unchanged(), "{report:?}");

    server.set(vec![vec![read_tool("optional"), plain_tool("stat")]]);
    let report = board.refresh_service(index).await.unwrap();
    assert_eq!(report.changed, ["files-read"]);
    let read = board.get_tool("files-read").unwrap();
    assert_eq!(
        read.extra().unwrap()["execution"]["taskSupport"],
        "optional"
    );
    assert!(listed(&board, "files-read").get("execution").is_none());

    // Members gone at the server are gone from the board.
    server.set(vec![vec![plain_tool("read"), plain_tool("stat")]]);
    let report = board.refresh_service(index).await.unwrap();
    assert_eq!(report.changed, ["files-read"]);
    assert_eq!(board.get_tool("files-read").unwrap().extra(), None);
}

#[tokio::test]
async fn without_a_tap_rmcp_drops_the_members_and_the_board_lists_what_it_got() {
    // Why the tap exists: rmcp's client decodes the answer into its `Tool`, which has no
    // `execution`. If an rmcp upgrade models it, this test says so.
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let server = RawTools::new(vec![vec![read_tool("forbidden")]]);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let service = ().into_dyn().serve(client_io).await.unwrap();
    let typed = service.peer().list_tools(None).await.unwrap();
    assert!(
        serde_json::to_value(&typed.tools[0])
            .unwrap()
            .get("execution")
            .is_none()
    );
    let board = PegBoard::new();
    board
        .add_service(Some("files".into()), service)
        .await
        .unwrap();
    assert_eq!(board.get_tool("files-read").unwrap().extra(), None);
    assert!(listed(&board, "files-read").get("execution").is_none());
}

/// Withholds tools that need a task, by the member rmcp does not model.
struct NoTasks;

impl ListingFilter for NoTasks {
    fn tools(&self, listing: &mut Listing<'_, rmcp::model::Tool>) {
        let needs_task: Vec<String> = listing
            .items
            .iter()
            .filter(|t| {
                listing
                    .extra(&t.name)
                    .and_then(|e| e.get("execution"))
                    .is_some_and(|e| e["taskSupport"] == "required")
            })
            .map(|t| t.name.to_string())
            .collect();
        for name in needs_task {
            listing.withhold(&name, format!("`{name}` needs a task"));
        }
        for tool in &mut listing.items {
            tool.description = Some("edited by the filter".into());
        }
    }
}

#[tokio::test]
async fn a_listing_filter_sees_the_members_and_its_edits_keep_them() {
    let server = RawTools::new(vec![vec![read_tool("forbidden"), run_tool("required")]]);
    let (service, tap) = connect_tapped(server).await;
    let board = PegBoard::new();
    let options = ServiceOptions::new()
        .tool_list_tap(tap)
        .filter(Arc::new(NoTasks));
    board
        .add_service_with(Some("files".into()), service, options)
        .await
        .unwrap();
    assert_eq!(board.list_all_tools(), ["files-read"]);
    assert!(board.withheld("files-run").is_some());
    let read = board.get_tool("files-read").unwrap();
    assert_eq!(read.description(), Some("edited by the filter"));
    assert_eq!(read.extra().unwrap()["x-vendor"]["cost"], 3);
}

#[tokio::test]
async fn a_listing_that_times_out_is_cancelled_at_the_server_and_changes_nothing() {
    let server = RawTools::new(vec![vec![read_tool("forbidden")]]);
    let (service, tap) = connect_tapped(server.clone()).await;
    let board = PegBoard::builder()
        .discovery_timeout(Duration::from_millis(200))
        .build();
    let added = board
        .add_service_with(
            Some("files".into()),
            service,
            ServiceOptions::new().tool_list_tap(tap),
        )
        .await
        .unwrap();
    let before = board.get_tool("files-read").unwrap();

    // The connection stays open (the service is on the board): what ends the server's wait is
    // the `notifications/cancelled` sent for the page it never answered.
    server.hang.store(true, Ordering::SeqCst);
    let err = board.refresh_service(added.index).await.unwrap_err();
    assert!(matches!(err, PegBoardError::Timeout { .. }), "{err}");
    tokio::time::timeout(Duration::from_secs(20), server.cancelled.notified())
        .await
        .expect("the server saw the listing cancelled");
    assert_eq!(board.get_tool("files-read"), Some(before));
}
