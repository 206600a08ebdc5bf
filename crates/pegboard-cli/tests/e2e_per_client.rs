//! `"session": "per-client"`: each downstream session gets its own upstream process of the server.
//! The notes demo server keeps its notes in memory per process, so a note one session adds is
//! seen by another only when they share the process. Two downstream sessions of one in-process
//! gateway (two stdio gateways could not share anything), the upstream a real `pegboard
//! demo-server notes` child.
// Sampling is deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25, which servers still ask.
#![allow(deprecated)]

mod common;

use std::time::Duration;

use pegboard::PegBoard;
use pegboard_gateway::{
    BoardServer, Progress,
    config::parse,
    testing::{per_client_open, start_all},
};
use rmcp::{
    ClientHandler, ErrorData, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
        CreateMessageRequestParams, CreateMessageResult, Implementation, SamplingCapability,
        SamplingMessage,
    },
    service::{RequestContext, RoleClient, RunningService},
};
use std::sync::Arc;

const WAIT: Duration = Duration::from_secs(20);

type Client = RunningService<RoleClient, ()>;

/// A gateway whose one server, `notes`, is the demo notes server with `"session": session`;
/// also its board and the server's index there.
async fn gateway(session: &str) -> (BoardServer, PegBoard, usize) {
    let mut entry = common::demo_server("notes", &[]);
    entry["session"] = session.into();
    gateway_of("notes", entry).await
}

/// A gateway whose one server is the config entry `entry` under the key `name`.
async fn gateway_of(name: &str, entry: serde_json::Value) -> (BoardServer, PegBoard, usize) {
    let text = serde_json::json!({ "mcpServers": { name: entry } }).to_string();
    let config = parse(&text, std::path::Path::new("test.json"), &|_| None).expect("config");
    assert!(config.skipped().is_empty(), "{:?}", config.skipped());
    let board = PegBoard::new();
    let started = start_all(&board, &config, WAIT, Progress::Quiet).await;
    assert_eq!(started.ready(), 1, "notes did not start");
    let index = started.outcomes[0].index.expect("on the board");
    (BoardServer::new(board.clone()), board, index)
}

/// One more downstream session of `gateway`, served in-process; the gateway's side ends (and
/// drops its session) when the client is dropped.
async fn session(gateway: &BoardServer, stateless: bool) -> Client {
    session_of(gateway, stateless, ()).await
}

/// [`session`] with the client handler `client`.
async fn session_of<C: ClientHandler>(
    gateway: &BoardServer,
    stateless: bool,
    client: C,
) -> RunningService<RoleClient, C> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let handler = gateway.session().stateless(stateless);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("client handshake")
}

async fn call<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    tool: &str,
    args: serde_json::Value,
) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = args.as_object().cloned();
    let result = tokio::time::timeout(WAIT, client.peer().call_tool(params))
        .await
        .expect("answered in time")
        .expect("call");
    assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
    result
}

async fn add(client: &Client, title: &str) {
    call(
        client,
        "notes-add_note",
        serde_json::json!({ "title": title, "body": "only here" }),
    )
    .await;
}

async fn sees(client: &Client, title: &str) -> bool {
    let listed = call(client, "notes-list_notes", serde_json::json!({})).await;
    serde_json::to_string(&listed)
        .expect("serializes")
        .contains(title)
}

/// How many sessions have their own connection to the notes server open.
fn open_connections(board: &PegBoard) -> tokio::sync::watch::Receiver<usize> {
    per_client_open(board, "notes-list_notes").expect("a per-client server")
}

async fn wait_open(board: &PegBoard, n: usize) {
    let mut open = open_connections(board);
    tokio::time::timeout(WAIT, open.wait_for(|now| *now == n))
        .await
        .unwrap_or_else(|_| panic!("never {n} open connections"))
        .expect("sender alive");
}

#[tokio::test]
async fn per_client_sessions_do_not_see_each_others_notes() {
    let (gateway, board, _) = gateway("per-client").await;
    let (a, b) = (
        session(&gateway, false).await,
        session(&gateway, false).await,
    );
    add(&a, "secret-of-a").await;
    assert!(!sees(&b, "secret-of-a").await, "B shares A's process");
    assert!(
        sees(&a, "secret-of-a").await,
        "A's own process lost its note"
    );
    // Two sessions that called: two processes, no more (A called twice).
    wait_open(&board, 2).await;

    // A session that ends closes its connection: its process exits.
    drop(a);
    wait_open(&board, 1).await;
    assert!(!sees(&b, "secret-of-a").await);
    drop(b);
    wait_open(&board, 0).await;
}

#[tokio::test]
async fn shared_sessions_see_each_others_notes() {
    let (gateway, board, _) = gateway("shared").await;
    let (a, b) = (
        session(&gateway, false).await,
        session(&gateway, false).await,
    );
    add(&a, "note-for-all").await;
    assert!(sees(&b, "note-for-all").await, "B has its own process");
    assert!(per_client_open(&board, "notes-list_notes").is_none());
}

/// A downstream client that answers sampling with its own name, once the other session's
/// sampling request has arrived too (so both upstream calls are in flight at once).
struct Sampler {
    name: &'static str,
    both: Arc<tokio::sync::Barrier>,
}

impl ClientHandler for Sampler {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(SamplingCapability::default());
        ClientConfig::new(caps, Implementation::new(self.name, "1"))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.both.wait().await;
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(self.name),
            "test".into(),
        ))
    }
}

/// A stdio server that samples, under two concurrent calls: shared, nothing on the wire says
/// which session must answer (PASSTHROUGH.md §6); per-client, each session's own process asks
/// that session.
#[tokio::test]
async fn per_client_sampling_under_concurrent_calls_reaches_each_caller() {
    let everything = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/test-deps/node/node_modules/.bin/mcp-server-everything");
    assert!(
        everything.exists(),
        "missing {}: run scripts/setup-test-deps.sh",
        everything.display()
    );
    let entry = serde_json::json!({
        "command": everything, "args": ["stdio"], "session": "per-client"
    });
    let (gateway, _board, _) = gateway_of("everything", entry).await;
    let both = Arc::new(tokio::sync::Barrier::new(2));
    let sampler = |name| Sampler {
        name,
        both: both.clone(),
    };
    let a = session_of(&gateway, false, sampler("answer-of-A")).await;
    let b = session_of(&gateway, false, sampler("answer-of-B")).await;
    let ask = serde_json::json!({ "prompt": "who are you?" });
    let tool = "everything-trigger-sampling-request";
    let (from_a, from_b) = tokio::join!(call(&a, tool, ask.clone()), call(&b, tool, ask.clone()));
    let (from_a, from_b) = (common::first_text(&from_a), common::first_text(&from_b));
    assert!(
        from_a.contains("answer-of-A") && !from_a.contains("answer-of-B"),
        "{from_a}"
    );
    assert!(
        from_b.contains("answer-of-B") && !from_b.contains("answer-of-A"),
        "{from_b}"
    );
}

/// A session whose own connection cannot be opened gets a tool error saying so (the shared
/// connection started; later starts of the server fail).
#[tokio::test]
async fn a_session_connection_that_cannot_open_is_a_tool_error_saying_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("started");
    let script = format!(
        "if [ -e '{m}' ]; then echo 'second start refused' >&2; exit 3; fi; touch '{m}'; exec '{p}' demo-server notes",
        m = marker.display(),
        p = common::pegboard().display()
    );
    let entry =
        serde_json::json!({ "command": "sh", "args": ["-c", script], "session": "per-client" });
    let (gateway, _board, _) = gateway_of("notes", entry).await;
    let a = session(&gateway, false).await;
    let mut params = CallToolRequestParams::new("notes-list_notes");
    params.arguments = Some(serde_json::Map::new());
    let result = tokio::time::timeout(WAIT, a.peer().call_tool(params))
        .await
        .expect("answered in time")
        .expect("a tool result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    let text = common::first_text(&result);
    assert!(
        text.contains("could not open this session's own connection to server `notes`"),
        "{text}"
    );
    assert!(text.contains("second start refused"), "{text}");
}

/// A server that leaves the board (as a reload that removes or changes it does) closes the
/// sessions' own connections to it, though the sessions go on.
#[tokio::test]
async fn a_removed_server_closes_the_sessions_connections() {
    let (gateway, board, index) = gateway("per-client").await;
    let a = session(&gateway, false).await;
    add(&a, "soon-gone").await;
    let mut open = open_connections(&board);
    assert_eq!(*open.borrow_and_update(), 1);
    board.remove_service(index).expect("removed");
    tokio::time::timeout(WAIT, open.wait_for(|n| *n == 0))
        .await
        .expect("the session's notes process never exited")
        .expect("counted until the end");
    assert!(!a.is_closed(), "the session itself goes on");
}

/// `--stateless` keeps no session: a per-client server serves it on its shared connection.
#[tokio::test]
async fn stateless_callers_use_the_shared_connection() {
    let (gateway, board, _) = gateway("per-client").await;
    let (a, b) = (session(&gateway, true).await, session(&gateway, true).await);
    add(&a, "stateless-note").await;
    assert!(sees(&b, "stateless-note").await);
    assert_eq!(*open_connections(&board).borrow(), 0);
}

/// Through `pegboard serve --http`: two HTTP sessions get two notes processes, and the one whose
/// client ends (rmcp sends `DELETE`) has its process shut down, as the gateway's log says.
#[tokio::test]
async fn over_http_each_session_has_its_own_process_until_it_ends() {
    use tokio::io::AsyncBufReadExt;
    // rmcp's HTTP client needs a rustls crypto provider; the workspace builds ring's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut entry = common::demo_server("notes", &[]);
    entry["session"] = "per-client".into();
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        serde_json::json!({ "mcpServers": { "notes": entry } }).to_string(),
    )
    .expect("write config");
    let mut gateway = tokio::process::Command::new(common::pegboard())
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env("RUST_LOG", "pegboard_gateway::connect::per_client=info")
        .env_remove("PEGBOARD_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("pegboard starts");
    let mut log = tokio::io::BufReader::new(gateway.stderr.take().expect("stderr")).lines();
    // The next log line containing `what` (the gateway's stderr is the event stream).
    let mut next = async |what: &str| -> String {
        let found = tokio::time::timeout(WAIT, async {
            while let Some(line) = log.next_line().await.expect("stderr readable") {
                if line.contains(what) {
                    return line;
                }
            }
            panic!("pegboard exited before logging `{what}`")
        });
        found.await.unwrap_or_else(|_| panic!("no `{what}` logged"))
    };
    let line = next(" at http://").await;
    let url = common::serving_url(&line).expect("a serving URL");
    let connect = || {
        ().serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url.as_str(),
        ))
    };
    let (a, b) = (
        connect().await.expect("session A"),
        connect().await.expect("session B"),
    );
    add(&a, "http-secret-of-a").await;
    next("opened a per-client connection").await;
    assert!(!sees(&b, "http-secret-of-a").await, "B shares A's process");
    next("opened a per-client connection").await;
    assert!(sees(&a, "http-secret-of-a").await);

    a.cancel().await.expect("A ends");
    let closed = next("closed a per-client connection").await;
    assert!(closed.contains("notes"), "{closed}");
    assert!(!sees(&b, "http-secret-of-a").await);
}
