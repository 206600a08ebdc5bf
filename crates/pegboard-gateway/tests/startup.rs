//! A board served while its servers still start (`BoardServer::with_startup`): `initialize` is
//! answered at once, `tools/list` or a call of a tool not on the board yet waits until the startup
//! is over, and joins after the client's answer reach it as `tools/list_changed` (joins already
//! in its answer do not).

mod common;

use std::time::Duration;

use common::text;
use demo_servers::{NotesServer, UnitsServer};
use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use pegboard_gateway::testing::Startup;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, CompleteResult, CompletionInfo,
    ErrorData, GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    ListResourcesResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourcesCapability, Role, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc;

/// Longer than any answer that does not wait takes (a few ms in-process).
const STILL_WAITING: Duration = Duration::from_millis(300);
const STEP: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

/// `board` served with `startup`, and a connected client; the handshake must not wait.
async fn serve(
    board: &PegBoard,
    startup: Startup,
) -> (
    RunningService<RoleClient, Listener>,
    mpsc::UnboundedReceiver<()>,
) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let server = pegboard_gateway::testing::with_startup(BoardServer::new(board.clone()), startup);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, changes) = mpsc::unbounded_channel();
    let client = tokio::time::timeout(STEP, Listener(tx).serve(client_io))
        .await
        .expect("initialize must be answered while servers start")
        .expect("handshake");
    (client, changes)
}

#[tokio::test]
async fn the_first_list_waits_for_the_startup_and_only_joins_after_it_are_announced() {
    let board = PegBoard::new();
    let (startup, starting) = Startup::begin(Duration::from_secs(3600));
    let (client, mut changes) = serve(&board, startup).await;
    // Servers may still come that log or bring prompts and resources: the capabilities cannot wait
    // for them.
    let info = client.peer_info().expect("peer info");
    let caps = &info.capabilities;
    assert!(caps.logging.is_some() && caps.prompts.is_some() && caps.resources.is_some());

    let peer = client.peer().clone();
    let mut listing = tokio::spawn(async move { peer.list_all_tools().await });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut listing)
            .await
            .is_err(),
        "tools/list answered before the startup was over"
    );

    // A server joins before the answer: it is in the answer, so the client is not told.
    common::add(&board, "units", UnitsServer::new()).await;
    starting.finish();
    let tools = tokio::time::timeout(STEP, listing)
        .await
        .expect("tools/list after the startup")
        .expect("task")
        .expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "units-convert"), "{tools:?}");
    // One after the answer is told about.
    common::add(&board, "notes", NotesServer::new()).await;
    tokio::time::timeout(STEP, changes.recv())
        .await
        .expect("tools/list_changed")
        .expect("session open");
    // Both joins went through the session's one feed, in order: a notification of the first
    // would have come before this one. Once the session is closed, none is left.
    client.cancel().await.expect("cancel");
    let mut more = 0;
    while changes.try_recv().is_ok() {
        more += 1;
    }
    assert_eq!(more, 0, "a join already in the answer was announced");
}

#[tokio::test]
async fn a_call_of_a_tool_not_on_the_board_yet_waits_for_its_server() {
    let board = PegBoard::new();
    let (startup, starting) = Startup::begin(Duration::from_secs(3600));
    let (client, _changes) = serve(&board, startup).await;
    let peer = client.peer().clone();
    let args = json!({"value": 1, "from": "km", "to": "m"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut calling = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("units-convert").with_arguments(args))
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut calling)
            .await
            .is_err(),
        "the call was answered before its server started"
    );
    common::add(&board, "units", UnitsServer::new()).await;
    starting.finish();
    let result = tokio::time::timeout(STEP, calling)
        .await
        .expect("the call after the startup")
        .expect("task")
        .expect("tools/call");
    assert!(text(&result).contains("1000"), "{result:?}");
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn after_the_startup_nothing_waits_and_unknown_tools_are_errors() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let (startup, starting) = Startup::begin(Duration::from_secs(3600));
    let (client, _changes) = serve(&board, startup).await;
    // A tool already on the board is called at once, startup or not.
    let args = json!({"value": 0, "from": "C", "to": "F"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let result = tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new("units-convert").with_arguments(args)),
    )
    .await
    .expect("a known tool must not wait")
    .expect("tools/call");
    assert!(text(&result).contains("32"), "{result:?}");

    starting.finish();
    let err = tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new("nope-nothing")),
    )
    .await
    .expect("after the startup an unknown tool must not wait")
    .expect_err("unknown tool");
    assert!(err.to_string().contains("nope-nothing"), "{err}");
    client.cancel().await.expect("cancel");
}

/// A server with one prompt (`greet`) and one resource (`note://a`), and no tools.
#[derive(Clone)]
struct Notes;

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        caps.prompts = Some(PromptsCapability::default());
        caps.resources = Some(ResourcesCapability::default());
        caps.completions = Some(Default::default());
        ServerConfig::new(caps)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let greet = Prompt::new(
            "greet",
            Some("says hello"),
            Some(vec![PromptArgument::new("name")]),
        );
        Ok(ListPromptsResult::with_all_items(vec![greet]))
    }

    async fn get_prompt(
        &self,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let hello = PromptMessage::new_text(Role::User, "hello");
        Ok(GetPromptResult::new(vec![hello]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let note = Resource::new("note://a", "a");
        Ok(ListResourcesResult::with_all_items(vec![note]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = ResourceContents::text("note a", request.uri);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values = vec![format!("{}!", request.argument.value)];
        Ok(CompleteResult::new(
            CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }
}

/// A session's first request can be a `prompts/get`, `resources/read` or `completion/complete`
/// (the MCP Inspector's CLI makes one request per session): while servers start, each waits for
/// the server that brings its prompt or resource, as `tools/list` does.
#[tokio::test]
async fn prompts_resources_and_completions_asked_during_the_startup_wait_for_their_server() {
    let board = PegBoard::new();
    let (startup, starting) = Startup::begin(Duration::from_secs(3600));
    let (client, _changes) = serve(&board, startup).await;
    let peer = client.peer().clone();
    let mut prompt = tokio::spawn(async move {
        peer.get_prompt(GetPromptRequestParams::new("notes-greet"))
            .await
    });
    let peer = client.peer().clone();
    let mut read = tokio::spawn(async move {
        peer.read_resource(ReadResourceRequestParams::new("notes+note://a"))
            .await
    });
    let peer = client.peer().clone();
    let mut complete = tokio::spawn(async move {
        peer.complete(CompleteRequestParams::new(
            Reference::for_prompt("notes-greet"),
            ArgumentInfo::new("name", "Ad"),
        ))
        .await
    });
    for (what, waiting) in [
        (
            "prompts/get",
            tokio::time::timeout(STILL_WAITING, &mut prompt)
                .await
                .is_err(),
        ),
        (
            "resources/read",
            tokio::time::timeout(STILL_WAITING, &mut read)
                .await
                .is_err(),
        ),
        (
            "completion/complete",
            tokio::time::timeout(STILL_WAITING, &mut complete)
                .await
                .is_err(),
        ),
    ] {
        assert!(waiting, "{what} was answered before its server started");
    }
    common::add(&board, "notes", Notes).await;
    starting.finish();
    let prompt = tokio::time::timeout(STEP, prompt)
        .await
        .expect("prompts/get after the startup")
        .expect("task")
        .expect("prompts/get");
    assert_eq!(prompt.messages.len(), 1, "{prompt:?}");
    let read = tokio::time::timeout(STEP, read)
        .await
        .expect("resources/read after the startup")
        .expect("task")
        .expect("resources/read");
    assert!(format!("{read:?}").contains("note a"), "{read:?}");
    let complete = tokio::time::timeout(STEP, complete)
        .await
        .expect("completion/complete after the startup")
        .expect("task")
        .expect("completion/complete");
    assert_eq!(complete.completion.values, ["Ad!"]);
    client.cancel().await.expect("cancel");
}
