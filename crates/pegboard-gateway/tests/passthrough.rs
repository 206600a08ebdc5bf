//! Passthrough through the gateway's handler, in process (issue 9): an rmcp upstream connected
//! as the gateway connects servers ([`UpstreamClient`] over a [`ProgressTap`]), a [`BoardServer`]
//! session per downstream client, all over tokio duplex pipes.
#![allow(deprecated)] // sampling is deprecated by SEP-2577 but live in 2025-11-25

mod common;

use std::{sync::Arc, time::Duration};

use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ContentBlock, CreateMessageRequestParams, CreateMessageResult, ListToolsResult,
        PaginatedRequestParams, ProgressNotificationParam, SamplingCapability, SamplingMessage,
        ServerCapabilities, ServerConfig, Tool,
    },
    service::{NotificationContext, RequestContext, RunningService},
};
use serde_json::json;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(20);

/// The upstream: `slow` sends `steps` progress notifications (then, with `hold`, waits to be
/// cancelled and reports it); `ask` samples the client and returns its answer.
#[derive(Clone)]
struct Upstream {
    cancelled: mpsc::UnboundedSender<()>,
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join(" ")
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
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("slow", "progress, then maybe wait", schema.clone()),
            Tool::new("ask", "sample the client", schema),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "slow" => {
                let steps = args.get("steps").and_then(|v| v.as_u64()).unwrap_or(1);
                if let Some(token) = context.meta.get_progress_token() {
                    for i in 1..=steps {
                        let mut p = ProgressNotificationParam::new(token.clone(), i as f64);
                        p.total = Some(steps as f64);
                        let _ = context.peer.notify_progress(p).await;
                    }
                }
                if args.get("hold").is_some() {
                    context.ct.cancelled().await;
                    let _ = self.cancelled.send(());
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("done")]).into())
            }
            "ask" => {
                let params = CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("who are you?")],
                    10,
                );
                let answer = context
                    .peer
                    .create_message(params)
                    .await
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let said = answer
                    .message
                    .content
                    .first()
                    .and_then(|c| c.as_text().map(|t| t.text.clone()))
                    .unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(said)]).into())
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// A downstream client that answers sampling with its own name and records progress.
#[derive(Clone)]
struct Downstream {
    name: &'static str,
    progress: mpsc::UnboundedSender<(f64, Option<f64>)>,
}

impl ClientHandler for Downstream {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(SamplingCapability::default());
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

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send((params.progress, params.total));
    }
}

struct Rig {
    server: BoardServer,
    cancelled: mpsc::UnboundedReceiver<()>,
}

/// The upstream on a board, as `pegboard serve` connects it (namespace `up`).
async fn rig() -> Rig {
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let upstream = Upstream {
        cancelled: cancelled_tx,
    };
    tokio::spawn(async move {
        if let Ok(running) = upstream.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (service, options, _hub) = common::connect_as_gateway(client_io, "up").await;
    let board = PegBoard::new();
    board
        .add_service_with(Some("up".into()), service, options)
        .await
        .expect("registered");
    Rig {
        server: BoardServer::new(board),
        cancelled,
    }
}

type Client = RunningService<RoleClient, Downstream>;

/// A downstream session on its own [`BoardServer::session`]; its progress values arrive on the receiver.
async fn session(
    server: &BoardServer,
    name: &'static str,
) -> (Client, mpsc::UnboundedReceiver<(f64, Option<f64>)>) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (progress, seen) = mpsc::unbounded_channel();
    let client = Downstream { name, progress }
        .serve(client_io)
        .await
        .expect("downstream handshake");
    (client, seen)
}

/// Call `tool`. rmcp numbers progress tokens per connection, so every fresh client's first
/// call carries token 0: two sessions' first calls share a token.
async fn call_with_token(
    client: &Client,
    tool: &str,
    arguments: serde_json::Value,
    _token: &str,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = arguments.as_object().cloned();
    let request = rmcp::model::CallToolRequest::new(params);
    match client
        .send_request(rmcp::model::ClientRequest::CallToolRequest(request))
        .await?
    {
        rmcp::model::ServerResult::CallToolResult(result) => Ok(result),
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// The next `n` progress notifications, sorted: the client runs its notification handlers on
/// tasks of their own, so arrival order at the handler is not the wire order.
async fn take(
    rx: &mut mpsc::UnboundedReceiver<(f64, Option<f64>)>,
    n: usize,
) -> Vec<(f64, Option<f64>)> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let next = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("progress arrives");
        seen.push(next.expect("client still there"));
    }
    seen.sort_by(|a, b| a.0.total_cmp(&b.0));
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_with_the_same_progress_token_each_get_their_own() {
    let rig = rig().await;
    let (a, mut a_seen) = session(&rig.server, "a").await;
    let (b, mut b_seen) = session(&rig.server, "b").await;
    let (ra, rb) = tokio::time::timeout(WAIT, async {
        tokio::join!(
            call_with_token(&a, "up-slow", json!({"steps": 3}), "shared"),
            call_with_token(&b, "up-slow", json!({"steps": 5}), "shared"),
        )
    })
    .await
    .expect("both calls answered");
    assert_eq!(text(&ra.unwrap()), "done");
    assert_eq!(text(&rb.unwrap()), "done");
    // Each session sees only its own call's progress: totals tell the two calls apart.
    let want = |n: u32| {
        (1..=n)
            .map(|i| (f64::from(i), Some(f64::from(n))))
            .collect::<Vec<_>>()
    };
    assert_eq!(take(&mut a_seen, 3).await, want(3));
    assert_eq!(take(&mut b_seen, 5).await, want(5));
    assert!(
        a_seen.try_recv().is_err() && b_seen.try_recv().is_err(),
        "no stray progress"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_reaches_the_session_whose_call_caused_it() {
    let rig = rig().await;
    let (a, _) = session(&rig.server, "alice").await;
    let (b, _) = session(&rig.server, "bob").await;
    for (client, name) in [(&b, "bob"), (&a, "alice"), (&b, "bob")] {
        let result = tokio::time::timeout(WAIT, call_with_token(client, "up-ask", json!({}), "t"))
            .await
            .expect("answered")
            .expect("call ok");
        assert_eq!(text(&result), name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_with_two_calls_in_flight_on_a_stdio_like_upstream_is_a_clear_error() {
    let mut rig = rig().await;
    let (a, mut a_seen) = session(&rig.server, "alice").await;
    let (b, _) = session(&rig.server, "bob").await;
    // A holds a call open (progress 1 says it is running), then B's call samples.
    let a_call = tokio::spawn(async move {
        let r = call_with_token(&a, "up-slow", json!({"steps": 1, "hold": true}), "t").await;
        (a, r)
    });
    tokio::time::timeout(WAIT, a_seen.recv())
        .await
        .expect("a's call is running");
    let result = tokio::time::timeout(WAIT, call_with_token(&b, "up-ask", json!({}), "t"))
        .await
        .expect("answered, not hung");
    let message = match result {
        Ok(r) => text(&r),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains("2 client calls are in flight on 'up'"),
        "{message}"
    );
    a_call.abort();
    // Aborting drops A's client: its session ends and the upstream call is cancelled.
    tokio::time::timeout(WAIT, rig.cancelled.recv())
        .await
        .expect("upstream saw the cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downstream_cancel_or_disconnect_cancels_the_upstream_call() {
    let mut rig = rig().await;
    // notifications/cancelled from the client.
    let (a, mut a_seen) = session(&rig.server, "a").await;
    let peer = a.peer().clone();
    let call = tokio::spawn(async move {
        let mut params = CallToolRequestParams::new("up-slow");
        params.arguments = json!({"steps": 1, "hold": true}).as_object().cloned();
        let request = rmcp::model::CallToolRequest::new(params);
        let handle = peer
            .send_request_with_option(
                rmcp::model::ClientRequest::CallToolRequest(request),
                rmcp::service::PeerRequestOptions::no_options(),
            )
            .await
            .expect("sent");
        handle.id
    });
    tokio::time::timeout(WAIT, a_seen.recv())
        .await
        .expect("running");
    let id = call.await.expect("sent");
    a.peer()
        .notify_cancelled(rmcp::model::CancelledNotificationParam::new(Some(id), None))
        .await
        .expect("cancel sent");
    tokio::time::timeout(WAIT, rig.cancelled.recv())
        .await
        .expect("upstream saw notifications/cancelled");

    // The client goes away mid-call.
    let (b, mut b_seen) = session(&rig.server, "b").await;
    let b_call = tokio::spawn(async move {
        let _ = call_with_token(&b, "up-slow", json!({"steps": 1, "hold": true}), "t").await;
    });
    tokio::time::timeout(WAIT, b_seen.recv())
        .await
        .expect("running");
    b_call.abort();
    tokio::time::timeout(WAIT, rig.cancelled.recv())
        .await
        .expect("upstream saw the disconnect as a cancel");
}
