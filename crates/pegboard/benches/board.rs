//! Benchmarks of the hot paths: routing, listing, and the cost of a call through the board.
//!
//! Targets: `get_tool_route` with 10k tools <= 50 ns; `get_all_tools` with 1k tools <= 20 us;
//! `mcp_tools` (the gateway's `tools/list`, built once per board generation) is measured, no target;
//! `board.call_tool` / direct `peer.call_tool` over the same in-process server <= 1.02.

use std::{hint::black_box, time::Duration};

use criterion::{Criterion, criterion_group, criterion_main};
use demo_servers::{TestServer, TestServerOptions};
use pegboard::{BoxedService, PegBoard};
use rmcp::{ServiceExt, model::CallToolRequestParams};
use serde_json::json;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn connect(server: TestServer) -> BoxedService {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().into_dyn().serve(client_io).await.expect("handshake")
}

/// A board with one test server offering `extra` tools besides its six own.
fn board_with(rt: &tokio::runtime::Runtime, extra: usize) -> PegBoard {
    rt.block_on(async {
        let board = PegBoard::builder()
            .max_tools_per_service(100_000, 1_000)
            .build();
        let server = TestServer::new(
            TestServerOptions::default()
                .extra_tools(extra)
                .page_size(1_000),
        );
        board
            .add_service(Some("bench".into()), connect(server).await)
            .await
            .expect("add_service");
        board
    })
}

/// A board of `n` hand-registered tools (routed to a test server) whose definitions carry
/// `execution`, as the official servers' do.
fn board_with_execution(rt: &tokio::runtime::Runtime, n: usize) -> PegBoard {
    let board = board_with(rt, 0);
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let schema = std::sync::Arc::new(schema.as_object().cloned().expect("object"));
    for i in 0..n {
        let support = ["forbidden", "optional", "required"][i % 3];
        let extra = json!({"execution": {"taskSupport": support}});
        let tool = pegboard::Tool::new(format!("task_{i:04}"), "A tool with tasks", schema.clone())
            .with_extra(extra.as_object().cloned().expect("object"));
        board
            .register_tool(Some("x"), tool, 0)
            .expect("register_tool");
    }
    board
}

fn routing(c: &mut Criterion) {
    let rt = runtime();
    let board = board_with(&rt, 10_000);
    assert!(board.tool_count() > 10_000);
    c.bench_function("get_tool_route/10k_tools", |b| {
        b.iter(|| black_box(board.get_tool_route(black_box("bench-tool_5000"))))
    });
    c.bench_function("tool_count/10k_tools", |b| {
        b.iter(|| black_box(board.tool_count()))
    });
    c.bench_function("route/10k_tools", |b| {
        b.iter(|| black_box(board.route(black_box("bench-tool_5000"))))
    });
    c.bench_function("get_tool/10k_tools", |b| {
        b.iter(|| black_box(board.get_tool(black_box("bench-tool_5000"))))
    });
    c.bench_function("select_tools/3_of_10k_tools", |b| {
        b.iter(|| {
            black_box(board.select_tools(black_box(&[
                "bench-tool_0001",
                "bench-tool_5000",
                "bench-echo",
            ])))
        })
    });
}

fn listing(c: &mut Criterion) {
    let rt = runtime();
    let board = board_with(&rt, 1_000 - 6);
    assert_eq!(board.tool_count(), 1_000);
    c.bench_function("get_all_tools/1k_tools", |b| {
        b.iter(|| black_box(board.get_all_tools()))
    });
    c.bench_function("list_all_tools/1k_tools", |b| {
        b.iter(|| black_box(board.list_all_tools()))
    });
    // What the gateway's `tools/list` builds once per board generation.
    c.bench_function("mcp_tools/1k_tools", |b| {
        b.iter(|| black_box(board.mcp_tools()))
    });
    c.bench_function("tools_list_json/1k_tools", |b| {
        b.iter(|| black_box(serde_json::to_vec(&board.mcp_tools()).expect("JSON")))
    });
    // The same, every member kept (what the gateway's tools/list is to send).
    c.bench_function("listed_tools/1k_tools", |b| {
        b.iter(|| black_box(board.listed_tools()))
    });
    c.bench_function("listed_tools_json/1k_tools", |b| {
        b.iter(|| black_box(serde_json::to_vec(&board.listed_tools()).expect("JSON")))
    });
    // 1k tools that each carry `execution` (a third of them `required`, which is rewritten).
    let board = board_with_execution(&rt, 1_000);
    c.bench_function("listed_tools_json/1k_tools_with_execution", |b| {
        b.iter(|| black_box(serde_json::to_vec(&board.listed_tools()).expect("JSON")))
    });
}

fn calls(c: &mut Criterion) {
    let rt = runtime();
    let (board, peer) = rt.block_on(async {
        let service = connect(TestServer::default()).await;
        let peer = service.peer().clone();
        let board = PegBoard::new();
        board
            .add_service(Some("t".into()), service)
            .await
            .expect("add_service");
        (board, peer)
    });
    let arguments = json!({"text": "hello"});
    let object = arguments.as_object().cloned().expect("object");
    let mut group = c.benchmark_group("call_tool");
    group
        .measurement_time(Duration::from_secs(15))
        .sample_size(200);
    group.bench_function("direct_peer", |b| {
        b.to_async(&rt).iter(|| {
            let params = CallToolRequestParams::new("echo").with_arguments(object.clone());
            let peer = &peer;
            async move { black_box(peer.call_tool(params).await.expect("direct call")) }
        })
    });
    group.bench_function("through_board", |b| {
        b.to_async(&rt).iter(|| {
            let arguments = arguments.clone();
            let board = &board;
            async move {
                black_box(
                    board
                        .call_tool("t-echo", arguments)
                        .await
                        .expect("board call"),
                )
            }
        })
    });
    group.finish();
}

/// What a `ToolListTap` costs the transport that shows it every message: a call's answer (most
/// of what a server sends), and a `tools/list` answer of 1k tools (once per listing).
fn tap(c: &mut Criterion) {
    let tap = pegboard::ToolListTap::new();
    let text = "x".repeat(1_000);
    let answer =
        json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}]}});
    let answer = serde_json::to_vec(&answer).expect("JSON");
    c.bench_function("tap_observe/call_answer_1kB", |b| {
        b.iter(|| tap.observe(black_box(&answer)))
    });
    let tools: Vec<_> = (0..1_000)
        .map(|i| {
            json!({"name": format!("tool_{i}"), "description": "Read a file from the disk",
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
                "execution": {"taskSupport": "forbidden"}})
        })
        .collect();
    let list = json!({"jsonrpc": "2.0", "id": 8, "result": {"tools": tools}});
    let list = serde_json::to_vec(&list).expect("JSON");
    // For scale: what rmcp's transport already spends decoding that answer into its types.
    c.bench_function("rmcp_decode/tools_list_1k_tools", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(black_box(&list))
                    .expect("a tools/list answer"),
            )
        })
    });
    c.bench_function("tap_observe/tools_list_1k_tools", |b| {
        b.iter(|| {
            tap.observe(black_box(&list));
            black_box(tap.pending())
        })
    });
}

criterion_group!(benches, routing, listing, calls, tap);
criterion_main!(benches);
