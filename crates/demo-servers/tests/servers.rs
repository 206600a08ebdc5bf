//! In-process (duplex), child-process (stdio) and HTTP tests of the demo servers.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use demo_servers::{DocsServer, NotesServer, TestServer, TestServerOptions, UnitsServer};
use rmcp::{
    ClientHandler, RoleClient, ServerHandler, ServiceError, ServiceExt,
    model::{CallToolRequestParams, CallToolResult, JsonObject},
    service::{DynService, NotificationContext, RunningService},
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

type DynClient = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

/// Serves `server` over a duplex pipe and connects `handler` as the client.
async fn connect<S: ServerHandler, C: ClientHandler>(server: S, handler: C) -> DynClient {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_io).await?;
        anyhow::Ok(running.waiting().await?)
    });
    handler.into_dyn().serve(client_io).await.unwrap()
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

async fn call(client: &DynClient, name: &str, a: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args(a)))
        .await
        .unwrap()
}

fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ok_text(r: &CallToolResult) -> String {
    assert_ne!(
        r.is_error,
        Some(true),
        "unexpected tool error: {}",
        text_of(r)
    );
    text_of(r)
}

fn err_text(r: &CallToolResult) -> String {
    assert_eq!(
        r.is_error,
        Some(true),
        "expected a tool error: {}",
        text_of(r)
    );
    text_of(r)
}

async fn tool_names(client: &DynClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

fn server_name(client: &DynClient) -> String {
    client
        .peer_info()
        .unwrap()
        .server_info
        .as_ref()
        .unwrap()
        .name
        .clone()
}

#[tokio::test]
async fn notes_server_tools() {
    let server = NotesServer::new();
    let client = connect(server.clone(), ()).await;
    assert_eq!(server_name(&client), "pegboard-demo-notes");
    assert_eq!(
        tool_names(&client).await,
        ["add_note", "list_notes", "search"]
    );
    let tools = client.list_all_tools().await.unwrap();
    for t in &tools {
        assert!(t.description.as_deref().unwrap_or("").len() > 10, "{t:?}");
        assert_eq!(t.input_schema.get("type"), Some(&json!("object")));
    }
    let add = tools.iter().find(|t| t.name == "add_note").unwrap();
    assert_eq!(add.input_schema["required"], json!(["title", "body"]));

    let seeded = server.notes().len();
    assert!((3..=4).contains(&seeded));
    let listed = ok_text(&call(&client, "list_notes", json!({})).await);
    assert!(listed.starts_with(&format!("{seeded} note(s)")), "{listed}");

    let id = ok_text(
        &call(
            &client,
            "add_note",
            json!({"title": "Zebra facts", "body": "Stripes are UNIQUE."}),
        )
        .await,
    );
    assert_eq!(id, (seeded + 1).to_string());
    assert_eq!(server.notes().len(), seeded + 1);

    // case-insensitive substring on the body
    let hits = ok_text(&call(&client, "search", json!({"query": "unique"})).await);
    assert!(hits.starts_with("1 note(s)"), "{hits}");
    assert!(hits.contains(&format!("#{id} Zebra facts")), "{hits}");
    // on the title
    let hits = ok_text(&call(&client, "search", json!({"query": "GATEWAY"})).await);
    assert!(hits.contains("Gateway idea"), "{hits}");
    let none = ok_text(&call(&client, "search", json!({"query": "no-such-thing"})).await);
    assert!(none.starts_with("no notes match"), "{none}");

    let listed = ok_text(&call(&client, "list_notes", json!({})).await);
    assert!(listed.contains("Zebra facts"), "{listed}");
    // bad arguments surface as a tool error
    let bad = call(&client, "add_note", json!({"title": "x"})).await;
    assert_eq!(bad.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn units_server_tools() {
    let client = connect(UnitsServer::new(), ()).await;
    assert_eq!(server_name(&client), "pegboard-demo-units");
    assert_eq!(tool_names(&client).await, ["convert", "list_units"]);

    let conv = |v: f64, f: &str, t: &str| json!({"value": v, "from": f, "to": t});
    assert_eq!(
        ok_text(&call(&client, "convert", conv(10.0, "km", "mi")).await),
        "10 km = 6.213712 mi"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(1.0, "mi", "ft")).await),
        "1 mi = 5280 ft"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(12.0, "in", "ft")).await),
        "12 in = 1 ft"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(1.0, "lb", "g")).await),
        "1 lb = 453.59237 g"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(16.0, "oz", "lb")).await),
        "16 oz = 1 lb"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(100.0, "C", "F")).await),
        "100 C = 212 F"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(-40.0, "F", "C")).await),
        "-40 F = -40 C"
    );
    assert_eq!(
        ok_text(&call(&client, "convert", conv(0.0, "K", "C")).await),
        "0 K = -273.15 C"
    );

    let e = err_text(&call(&client, "convert", conv(1.0, "kg", "km")).await);
    assert!(e.contains("different dimensions"), "{e}");
    let e = err_text(&call(&client, "convert", conv(1.0, "parsec", "m")).await);
    assert!(e.contains("unknown unit \"parsec\""), "{e}");
    let e = err_text(&call(&client, "convert", conv(-500.0, "C", "K")).await);
    assert!(e.contains("absolute zero"), "{e}");

    let units = ok_text(&call(&client, "list_units", json!({})).await);
    for u in ["km", "mi", "oz", "lb", "K"] {
        assert!(units.contains(u), "{units}");
    }
    assert_eq!(units.lines().count(), 3, "{units}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn docs_server_tools() {
    let client = connect(DocsServer::new(), ()).await;
    assert_eq!(server_name(&client), "pegboard-demo-docs");
    assert_eq!(tool_names(&client).await, ["read", "search"]);

    let hits = ok_text(&call(&client, "search", json!({"query": "tokio"})).await);
    assert!(hits.contains("rust-async"), "{hits}");
    let hits = ok_text(&call(&client, "search", json!({"query": "MCP transports stdio"})).await);
    let first = hits.lines().nth(1).unwrap();
    assert!(first.starts_with("- mcp-transports"), "{hits}");
    let none = ok_text(&call(&client, "search", json!({"query": "xylophone"})).await);
    assert!(none.starts_with("no passages match"), "{none}");

    let doc = ok_text(&call(&client, "read", json!({"id": "rust-ownership"})).await);
    assert!(doc.starts_with("Ownership in Rust"), "{doc}");
    assert!(doc.contains("borrow checker"), "{doc}");
    let e = err_text(&call(&client, "read", json!({"id": "nope"})).await);
    assert!(e.contains("known ids"), "{e}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn test_server_basic_tools() {
    let server = TestServer::default();
    let client = connect(server.clone(), ()).await;
    assert_eq!(server_name(&client), "pegboard-test-server");
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert_eq!(caps.tools.unwrap().list_changed, Some(true));
    assert_eq!(
        tool_names(&client).await,
        ["add_tool", "crash", "echo", "pid", "remove_tool", "sleep"]
    );
    assert_eq!(
        ok_text(&call(&client, "echo", json!({"text": "héllo"})).await),
        "héllo"
    );
    assert_eq!(
        ok_text(&call(&client, "sleep", json!({"ms": 10})).await),
        "slept 10 ms"
    );
    assert_eq!(
        ok_text(&call(&client, "pid", json!({})).await),
        std::process::id().to_string()
    );
    // in-process: crash is a tool error, not an exit
    let e = err_text(&call(&client, "crash", json!({})).await);
    assert!(e.contains("exit_on_crash"), "{e}");
    // unknown tool: protocol error
    let r = client.call_tool(CallToolRequestParams::new("nope")).await;
    assert!(matches!(r, Err(ServiceError::McpError(_))), "{r:?}");
    assert_eq!(server.tool_calls(), 5);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn test_server_pagination() {
    let server = TestServer::new(TestServerOptions {
        extra_tools: 25,
        page_size: 10,
        ..Default::default()
    });
    let client = connect(server.clone(), ()).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 10);
    assert_eq!(first.next_cursor.as_deref(), Some("10"));
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 25 + demo_servers::testing::BASE_TOOLS.len());
    assert!(all.iter().any(|t| t.name == "tool_0000"));
    assert!(all.iter().any(|t| t.name == "tool_0024"));
    assert_eq!(
        ok_text(&call(&client, "tool_0013", json!({})).await),
        "tool_0013"
    );
    // 1 + ceil(31 / 10) = 5 list requests
    assert_eq!(server.list_calls(), 5);

    // page_size 0 = one page
    let one = connect(
        TestServer::new(TestServerOptions::default().extra_tools(25)),
        (),
    )
    .await;
    let page = one.list_tools(None).await.unwrap();
    assert_eq!(page.tools.len(), 31);
    assert!(page.next_cursor.is_none());
    client.cancel().await.unwrap();
    one.cancel().await.unwrap();
}

#[derive(Clone)]
struct ListChangedForwarder(mpsc::UnboundedSender<()>);

impl ClientHandler for ListChangedForwarder {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn test_server_add_remove_tool_notifies() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = TestServer::default();
    let client = connect(server.clone(), ListChangedForwarder(tx)).await;

    let r = ok_text(&call(&client, "add_tool", json!({"name": "weather"})).await);
    assert!(r.starts_with("added tool weather"), "{r}");
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("no list_changed after add_tool")
        .unwrap();
    assert!(tool_names(&client).await.contains(&"weather".to_string()));
    assert_eq!(
        ok_text(&call(&client, "weather", json!({"city": "Oslo"})).await),
        r#"weather called with {"city":"Oslo"}"#
    );
    // duplicate is a tool error
    err_text(&call(&client, "add_tool", json!({"name": "weather"})).await);

    ok_text(&call(&client, "remove_tool", json!({"name": "weather"})).await);
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("no list_changed after remove_tool")
        .unwrap();
    assert!(!tool_names(&client).await.contains(&"weather".to_string()));
    assert!(
        client
            .call_tool(CallToolRequestParams::new("weather"))
            .await
            .is_err()
    );
    err_text(&call(&client, "remove_tool", json!({"name": "weather"})).await);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn test_server_sleep_cancellation_is_counted() {
    let server = TestServer::default();
    let client = connect(server.clone(), ()).await;
    let fut = client
        .call_tool(CallToolRequestParams::new("sleep").with_arguments(args(json!({"ms": 10_000}))));
    let started = std::time::Instant::now();
    assert!(
        tokio::time::timeout(Duration::from_millis(200), fut)
            .await
            .is_err()
    );
    // the drop sends notifications/cancelled; wait (on the server's own event) for it to arrive
    tokio::time::timeout(
        Duration::from_secs(5),
        server.wait_until(|s| s.cancelled_count() > 0),
    )
    .await
    .expect("cancellation never reached the server");
    assert_eq!(server.cancelled_count(), 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    // the session still works afterwards
    assert_eq!(
        ok_text(&call(&client, "echo", json!({"text": "still here"})).await),
        "still here"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn test_server_hang_list_never_answers() {
    let server = TestServer::new(TestServerOptions::default().hang_list(true));
    let client = connect(server.clone(), ()).await;
    let r = tokio::time::timeout(Duration::from_millis(300), client.list_tools(None)).await;
    assert!(r.is_err(), "list_tools answered");
    assert_eq!(server.list_calls(), 1);
    // tool calls still work
    assert_eq!(
        ok_text(&call(&client, "echo", json!({"text": "x"})).await),
        "x"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn binaries_over_stdio() {
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    for (bin, name, n_tools) in [
        (
            env!("CARGO_BIN_EXE_pegboard-demo-notes"),
            "pegboard-demo-notes",
            3,
        ),
        (
            env!("CARGO_BIN_EXE_pegboard-demo-units"),
            "pegboard-demo-units",
            2,
        ),
        (
            env!("CARGO_BIN_EXE_pegboard-demo-docs"),
            "pegboard-demo-docs",
            2,
        ),
    ] {
        let transport = TokioChildProcess::new(tokio::process::Command::new(bin)).unwrap();
        let client: DynClient = ().into_dyn().serve(transport).await.unwrap();
        assert_eq!(server_name(&client), name);
        assert_eq!(client.list_all_tools().await.unwrap().len(), n_tools);
        client.cancel().await.unwrap();
    }

    // test server: flags, pid and crash
    let cmd =
        tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard-test-server")).configure(|c| {
            c.args(["--extra-tools", "7", "--page-size", "3"]);
        });
    let transport = TokioChildProcess::new(cmd).unwrap();
    let child_pid = transport.id().unwrap();
    let client: DynClient = ().into_dyn().serve(transport).await.unwrap();
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 3);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 13);
    assert_eq!(
        ok_text(&call(&client, "pid", json!({})).await),
        child_pid.to_string()
    );
    let r = client.call_tool(CallToolRequestParams::new("crash")).await;
    assert!(matches!(r, Err(ServiceError::TransportClosed)), "{r:?}");
    assert!(client.peer().is_transport_closed());
}

#[tokio::test]
async fn test_server_binary_exit_after_env() {
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let cmd =
        tokio::process::Command::new(env!("CARGO_BIN_EXE_pegboard-test-server")).configure(|c| {
            c.env("PEGBOARD_TEST_EXIT_AFTER_MS", "300");
        });
    let client: DynClient =
        ().into_dyn()
            .serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap();
    assert_eq!(
        ok_text(&call(&client, "echo", json!({"text": "alive"})).await),
        "alive"
    );
    let reason = tokio::time::timeout(Duration::from_secs(5), client.waiting())
        .await
        .expect("server did not exit on its own")
        .unwrap();
    assert!(
        matches!(reason, rmcp::service::QuitReason::Closed),
        "{reason:?}"
    );
}

#[tokio::test]
async fn streamable_http_serving() {
    use rmcp::transport::StreamableHttpClientTransport;
    tls();
    let server = TestServer::default();
    let handle = demo_servers::serve::spawn_http(server.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client: DynClient = ListChangedForwarder(tx)
        .into_dyn()
        .serve(StreamableHttpClientTransport::from_uri(handle.url()))
        .await
        .unwrap();
    assert_eq!(server_name(&client), "pegboard-test-server");
    assert_eq!(
        ok_text(&call(&client, "echo", json!({"text": "over http"})).await),
        "over http"
    );
    ok_text(&call(&client, "add_tool", json!({"name": "late"})).await);
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(tool_names(&client).await.contains(&"late".to_string()));

    let docs = demo_servers::serve::spawn_http(DocsServer::new(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dc: DynClient =
        ().into_dyn()
            .serve(StreamableHttpClientTransport::from_uri(docs.url()))
            .await
            .unwrap();
    let doc = ok_text(&call(&dc, "read", json!({"id": "mcp-overview"})).await);
    assert!(doc.contains("JSON-RPC"), "{doc}");

    client.cancel().await.unwrap();
    dc.cancel().await.unwrap();
    handle.shutdown.cancel();
    docs.shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), handle.task).await;
}

/// rmcp's default HTTP client uses reqwest's rustls without a built-in crypto provider here (the
/// workspace builds rustls with ring, not aws-lc): install ring's before making a client.
fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
