//! A 2026-07-28 client calling a server connected with an older protocol that asks for sampling
//! or elicitation mid-call (PASSTHROUGH.md §7, "Phase 2"), in process: the gateway parks the
//! server's call and answers the client's with `input_required`; the client's retry brings the
//! answers. A real rmcp upstream connected as `pegboard serve` connects it (`initialize`), real
//! rmcp clients downstream.
#![allow(deprecated)] // sampling is deprecated by SEP-2577 but live in 2025-11-25

mod common;

use std::{sync::Arc, time::Duration};

use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, RoleServer,
    ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ClientResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
        ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
        ElicitationSchema, InputResponses, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, SamplingCapability, SamplingMessage, ServerCapabilities, ServerConfig,
        ServerRequest, Tool,
    },
    service::{RequestContext, RunningService},
};
use serde_json::json;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(20);

/// The upstream (legacy session): `sample` asks the client's model `times` times (default 1),
/// `elicit` asks the user once, `plain` asks nothing. What the client answered, or why it did
/// not, is the tool's text; failures are also reported on `failed`.
#[derive(Clone)]
struct Upstream {
    failed: mpsc::UnboundedSender<String>,
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(serde_json::Map::from_iter([(
            "type".to_string(),
            json!("object"),
        )]));
        let tool = |name: &str| Tool::new(name.to_string(), name.to_string(), schema.clone());
        Ok(ListToolsResult::with_all_items(vec![
            tool("sample"),
            tool("elicit"),
            tool("plain"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let mut said = Vec::new();
        let asked = match request.name.as_ref() {
            "sample" => {
                let times = args.get("times").and_then(|v| v.as_u64()).unwrap_or(1);
                let mut outcome = Ok(());
                for i in 0..times {
                    let params = CreateMessageRequestParams::new(
                        vec![SamplingMessage::user_text(format!("question {i}"))],
                        10,
                    );
                    match context.peer.create_message(params).await {
                        Ok(answer) => said.push(
                            answer
                                .message
                                .content
                                .first()
                                .and_then(|c| c.as_text().map(|t| t.text.clone()))
                                .unwrap_or_default(),
                        ),
                        Err(e) => {
                            outcome = Err(e);
                            break;
                        }
                    }
                }
                outcome
            }
            "elicit" => {
                let schema = ElicitationSchema::builder()
                    .required_string("answer")
                    .build()
                    .expect("schema");
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "sure?".into(),
                    requested_schema: schema,
                };
                // Generic: `Peer::create_elicitation` needs rmcp's `elicitation` feature.
                let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
                match context.peer.send_request(request).await {
                    Ok(ClientResult::ElicitResult(answer)) => {
                        said.push(answer.content.map(|c| c.to_string()).unwrap_or_default());
                        Ok(())
                    }
                    Ok(_) => Err(rmcp::ServiceError::UnexpectedResponse),
                    Err(e) => Err(e),
                }
            }
            _ => {
                said.push("plain".into());
                Ok(())
            }
        };
        if let Err(e) = asked {
            let _ = self.failed.send(e.to_string());
            return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into());
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(said.join(" | "))]).into())
    }
}

/// A 2026-07-28 client that answers sampling with its name and elicitation with
/// `{"answer": name}`; `sampling`: whether it declares sampling.
#[derive(Clone)]
struct Modern {
    name: &'static str,
    sampling: bool,
}

impl ClientHandler for Modern {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.sampling {
            caps.sampling = Some(SamplingCapability::default());
        }
        caps.elicitation = Some(ElicitationCapability::new());
        ClientConfig::new(caps, rmcp::model::Implementation::new(self.name, "1"))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
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
}

struct Rig {
    server: BoardServer,
    failed: mpsc::UnboundedReceiver<String>,
}

/// The upstream on a board (namespace `up`), connected with `initialize` as the gateway does;
/// the gateway asks it `server/discover` as it does, so it offers 2026-07-28 downstream.
async fn rig(timeout: Duration) -> Rig {
    let (failed_tx, failed) = mpsc::unbounded_channel();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let upstream = Upstream { failed: failed_tx };
    tokio::spawn(async move {
        if let Ok(running) = upstream.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (service, options, hub) = common::connect_as_gateway(client_io, "up").await;
    hub.learn_versions(service.peer()).await;
    let board = PegBoard::builder().call_timeout(timeout).build();
    board
        .add_service_with(Some("up".into()), service, options)
        .await
        .expect("registered");
    Rig {
        server: BoardServer::new(board),
        failed,
    }
}

async fn modern(server: &BoardServer, client: Modern) -> RunningService<RoleClient, Modern> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    client
        .serve_with_lifecycle(client_io, discover)
        .await
        .expect("downstream handshake")
}

fn params(tool: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().cloned().unwrap())
}

fn text(result: &CallToolResult) -> String {
    common::text(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_answers_a_legacy_server_s_requests_as_input_required() {
    let rig = rig(WAIT).await;
    let client = modern(
        &rig.server,
        Modern {
            name: "carol",
            sampling: true,
        },
    )
    .await;
    // rmcp's client drives the rounds through its own handler.
    for (tool, arguments, want) in [
        ("up-plain", json!({}), "plain"),
        ("up-sample", json!({"times": 3}), "carol | carol | carol"),
        ("up-elicit", json!({}), r#"{"answer":"carol"}"#),
    ] {
        let result = tokio::time::timeout(WAIT, client.call_tool(params(tool, arguments)))
            .await
            .expect("answered")
            .expect("a tool result");
        assert_eq!(text(&result), want, "{tool}: {result:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_is_single_use_and_bound_to_the_tool() {
    let rig = rig(WAIT).await;
    let client = modern(
        &rig.server,
        Modern {
            name: "dan",
            sampling: true,
        },
    )
    .await;
    let once = |p| async { tokio::time::timeout(WAIT, client.call_tool_once(p)).await };
    let first = once(params("up-sample", json!({}))).await.unwrap().unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let token = asked.request_state.expect("a token");
    assert!(token.starts_with("pegboard-bridge:"), "{token}");
    let requests = asked.input_requests.expect("the server's request");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["pb-0"]);
    let answer = serde_json::to_value(CreateMessageResult::new(
        SamplingMessage::assistant_text("by hand"),
        "test".into(),
    ))
    .unwrap();
    let retry = |tool: &str| {
        let mut p = params(tool, json!({})).with_request_state(token.clone());
        p.input_responses = Some(InputResponses::from([("pb-0".to_string(), answer.clone())]));
        p
    };

    // Another tool cannot use it; the right one can, once.
    let wrong = once(retry("up-plain")).await.unwrap().unwrap();
    let CallToolResponse::Complete(wrong) = wrong else {
        panic!("expected an error result")
    };
    assert!(
        text(&wrong).contains("was asked for 'up-sample', not 'up-plain'"),
        "{wrong:?}"
    );
    // The wrong tool took the token: the parked call is gone, and its server request failed.
    let again = once(retry("up-sample")).await.unwrap().unwrap();
    let CallToolResponse::Complete(again) = again else {
        panic!("expected an error result")
    };
    assert!(
        text(&again).contains("has no call of 'up-sample' waiting"),
        "{again:?}"
    );

    let first = once(params("up-sample", json!({}))).await.unwrap().unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let token2 = asked.request_state.expect("a token");
    assert_ne!(token, token2);
    let mut p = params("up-sample", json!({})).with_request_state(token2);
    p.input_responses = Some(InputResponses::from([("pb-0".to_string(), answer)]));
    let CallToolResponse::Complete(done) = once(p.clone()).await.unwrap().unwrap() else {
        panic!("expected the result")
    };
    assert_eq!(text(&done), "by hand");
    let CallToolResponse::Complete(replayed) = once(p).await.unwrap().unwrap() else {
        panic!("expected an error result")
    };
    assert!(text(&replayed).contains("has no call of 'up-sample' waiting"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_request_fails_upstream_within_the_call_timeout() {
    let mut rig = rig(Duration::from_millis(300)).await;
    let client = modern(
        &rig.server,
        Modern {
            name: "erin",
            sampling: true,
        },
    )
    .await;
    let first = tokio::time::timeout(WAIT, client.call_tool_once(params("up-sample", json!({}))))
        .await
        .expect("answered")
        .expect("a response");
    assert!(
        matches!(first, CallToolResponse::InputRequired(_)),
        "{first:?}"
    );
    // The client never comes back: the server's request fails when the call times out.
    let failed = tokio::time::timeout(WAIT, rig.failed.recv())
        .await
        .expect("the server's request failed")
        .expect("upstream alive");
    assert!(
        failed.contains("did not answer sampling/createMessage"),
        "{failed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_without_the_capability_is_not_asked() {
    let rig = rig(WAIT).await;
    let client = modern(
        &rig.server,
        Modern {
            name: "frank",
            sampling: false,
        },
    )
    .await;
    let result = tokio::time::timeout(WAIT, client.call_tool(params("up-sample", json!({}))))
        .await
        .expect("answered")
        .expect("a tool result");
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("did not declare support for sampling/createMessage"),
        "{result:?}"
    );
}
