//! Multi round-trip requests (SEP-2322) through the gateway, in process (issue 9,
//! PASSTHROUGH.md §7): the test server of the 2026-07-28 generation (`--only-2026`) with its
//! `ask` tool, connected as `pegboard serve` connects it (`server/discover`), and real rmcp
//! clients downstream. A client of an older protocol gets its input requests as ordinary
//! server-to-client requests and the gateway retries for it; a 2026-07-28 client gets
//! `input_required` as the server sent it.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but live in 2025-11-25

mod common;

use std::time::Duration;

use demo_servers::{TestServer, TestServerOptions};
use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationCapability, GetPromptRequestParams, InputRequest,
        ListRootsResult, ProtocolVersion, ReadResourceRequestParams, Root, RootsCapabilities,
        SamplingCapability, SamplingMessage,
    },
    service::{RequestContext, RunningService},
};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

/// A downstream client: answers sampling with its name, elicitation with `{"answer": name}`,
/// roots with `file:///name`, each only if `can` says it declared that capability. `hang`:
/// sampling never answers; `fail`: sampling answers an error.
#[derive(Clone, Default)]
struct Downstream {
    name: &'static str,
    can: &'static [&'static str],
    hang: bool,
    fail: bool,
}

impl Downstream {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            can: &["sampling", "elicitation", "roots"],
            ..Self::default()
        }
    }
}

impl ClientHandler for Downstream {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.can.contains(&"sampling") {
            caps.sampling = Some(SamplingCapability::default());
        }
        if self.can.contains(&"elicitation") {
            caps.elicitation = Some(ElicitationCapability::new());
        }
        if self.can.contains(&"roots") {
            caps.roots = Some(RootsCapabilities::default());
        }
        ClientConfig::new(caps, rmcp::model::Implementation::new(self.name, "1"))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        if self.hang {
            std::future::pending::<()>().await;
        }
        if self.fail {
            return Err(ErrorData::invalid_request("the user said no", None));
        }
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(self.name),
            "test".into(),
        ))
    }

    async fn create_elicitation(
        &self,
        _params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": self.name})))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(format!(
            "file:///{}",
            self.name
        ))]))
    }
}

/// The 2026-07-28 test server with `ask`, on a board as `pegboard serve` connects it
/// (namespace `t`), with the given call timeout.
async fn board(timeout: Duration) -> PegBoard {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = TestServer::new(TestServerOptions::default().only_2026(true).ask_tool(true));
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let (service, options, _hub) = common::connect_as_gateway_with(client_io, "t", discover).await;
    let board = PegBoard::builder().call_timeout(timeout).build();
    board
        .add_service_with(Some("t".into()), service, options)
        .await
        .expect("registered");
    board
}

type Client = RunningService<RoleClient, Downstream>;

/// A downstream session of `server`, connected with `lifecycle`.
async fn session(
    server: &BoardServer,
    client: Downstream,
    lifecycle: ClientLifecycleMode,
) -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .expect("downstream handshake")
}

async fn legacy(server: &BoardServer, client: Downstream) -> Client {
    session(server, client, ClientLifecycleMode::Initialize).await
}

fn ask(arguments: serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new("t-ask").with_arguments(arguments.as_object().cloned().unwrap())
}

fn text(result: &CallToolResult) -> String {
    common::text(result)
}

/// One `tools/call` as a client of an older protocol sends it (no MRTR of its own).
async fn call(client: &Client, arguments: serde_json::Value) -> CallToolResult {
    tokio::time::timeout(WAIT, client.peer().call_tool(ask(arguments)))
        .await
        .expect("answered, not hung")
        .expect("a tool result")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_client_answers_a_2026_server_s_sampling_through_the_gateway() {
    let server = BoardServer::new(board(WAIT).await);
    let client = legacy(&server, Downstream::new("alice")).await;
    let result = call(&client, json!({"via": "sampling"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_and_roots_over_several_rounds_reach_the_calling_session() {
    let server = BoardServer::new(board(WAIT).await);
    let alice = legacy(&server, Downstream::new("alice")).await;
    let bob = legacy(&server, Downstream::new("bob")).await;
    let (a, b) = tokio::join!(
        call(&alice, json!({"via": "elicitation", "rounds": 3})),
        call(&bob, json!({"via": "roots", "rounds": 2})),
    );
    let accepted = r#"accept {"answer":"alice"}"#;
    assert_eq!(text(&a), [accepted; 3].join(" | "), "{a:?}");
    assert_eq!(text(&b), "file:///bob | file:///bob", "{b:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_cannot_or_will_not_answer_gets_a_tool_error_saying_why() {
    let server = BoardServer::new(board(WAIT).await);
    let mute = Downstream {
        can: &["roots"],
        ..Downstream::new("mute")
    };
    let client = legacy(&server, mute).await;
    let result = call(&client, json!({"via": "sampling"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "pegboard could not finish 't-ask': the server asked the client for \
         sampling/createMessage, but the client did not declare support for it"
    );

    let refusing = Downstream {
        fail: true,
        ..Downstream::new("refusing")
    };
    let client = legacy(&server, refusing).await;
    let result = call(&client, json!({"via": "sampling"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).ends_with(
            "the client answered sampling/createMessage with an error: the user said no"
        ),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rounds_and_the_wait_are_bounded() {
    let server = BoardServer::new(board(Duration::from_millis(500)).await);
    let client = legacy(&server, Downstream::new("alice")).await;
    let result = call(&client, json!({"via": "roots", "rounds": 11})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).ends_with("the server still asked for input after 10 rounds"),
        "{result:?}"
    );

    let hanging = Downstream {
        hang: true,
        ..Downstream::new("hanging")
    };
    let client = legacy(&server, hanging).await;
    let result = call(&client, json!({"via": "sampling"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).ends_with(
            "the client did not answer sampling/createMessage within the call timeout (500ms)"
        ),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_gateway_says_it_has_no_session_to_ask() {
    let server = BoardServer::new(board(WAIT).await).stateless(true);
    let client = legacy(&server, Downstream::new("alice")).await;
    let result = call(&client, json!({"via": "elicitation"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result)
            .contains("asked for elicitation/create, and pegboard --stateless has no session"),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_gets_input_required_as_the_server_sent_it() {
    let server = BoardServer::new(board(WAIT).await);
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = session(&server, Downstream::new("carol"), discover).await;

    // One round by hand: the server's request and state, verbatim.
    let first = tokio::time::timeout(
        WAIT,
        client.call_tool_once(ask(json!({"via": "sampling", "rounds": 2}))),
    )
    .await
    .expect("answered")
    .expect("a response");
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected input_required, got {first:?}");
    };
    assert_eq!(asked.request_state.as_deref(), Some("[]"));
    let requests = asked.input_requests.expect("requests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["q0"]);
    assert!(matches!(requests["q0"], InputRequest::CreateMessage(_)));

    // rmcp's client drives the rounds itself, through its own handler.
    let result = tokio::time::timeout(
        WAIT,
        client.call_tool(ask(json!({"via": "sampling", "rounds": 2}))),
    )
    .await
    .expect("answered")
    .expect("a tool result");
    assert_eq!(text(&result), "carol | carol", "{result:?}");
}

fn prompt_text(result: &rmcp::model::GetPromptResult) -> String {
    let text = result.messages[0].content.as_text();
    text.map(|t| t.text.clone()).unwrap_or_default()
}

fn resource_text(result: &rmcp::model::ReadResourceResult) -> String {
    match &result.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn prompt(via: &str, rounds: &str) -> GetPromptRequestParams {
    let arguments = json!({"via": via, "rounds": rounds});
    GetPromptRequestParams::new("t-ask").with_arguments(arguments.as_object().cloned().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_resources_that_need_input_work_for_both_generations() {
    let server = BoardServer::new(board(WAIT).await);

    let client = legacy(&server, Downstream::new("dave")).await;
    let got = tokio::time::timeout(WAIT, client.peer().get_prompt(prompt("sampling", "2")))
        .await
        .expect("answered")
        .expect("a prompt");
    assert_eq!(prompt_text(&got), "dave | dave");
    let read = ReadResourceRequestParams::new("t+test://ask/roots");
    let got = tokio::time::timeout(WAIT, client.peer().read_resource(read))
        .await
        .expect("answered")
        .expect("contents");
    assert_eq!(resource_text(&got), "file:///dave");
    // Nothing to ask with: a clear error, not a hang.
    let mute = Downstream {
        can: &[],
        ..Downstream::new("mute")
    };
    let client = legacy(&server, mute).await;
    let read = ReadResourceRequestParams::new("t+test://ask/elicitation");
    let error = tokio::time::timeout(WAIT, client.peer().read_resource(read))
        .await
        .expect("answered")
        .expect_err("no elicitation");
    assert!(
        error.to_string().contains(
            "the server asked the client for elicitation/create, but the client did not \
             declare support for it"
        ),
        "{error}"
    );

    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = session(&server, Downstream::new("erin"), discover).await;
    let got = tokio::time::timeout(WAIT, client.get_prompt(prompt("elicitation", "1")))
        .await
        .expect("answered")
        .expect("a prompt");
    assert_eq!(prompt_text(&got), r#"accept {"answer":"erin"}"#);
    let read = ReadResourceRequestParams::new("t+test://ask/sampling");
    let got = tokio::time::timeout(WAIT, client.read_resource(read))
        .await
        .expect("answered")
        .expect("contents");
    assert_eq!(resource_text(&got), "erin");
}
