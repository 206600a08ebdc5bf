//! Calling tools through the board: routing, argument checks, errors, concurrency.

mod common;

use std::sync::Arc;

use common::{FixedTools, connect, text};
use demo_servers::{NotesServer, TestServer, UnitsServer};
use pegboard::{PegBoard, PegBoardError, Tool};
use serde_json::json;

async fn demo_board() -> PegBoard {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    common::add(&board, "t", TestServer::default()).await;
    board
}

#[tokio::test]
async fn call_tool_reaches_the_right_server_under_the_original_name() {
    let board = PegBoard::new();
    common::add(&board, "a-b", FixedTools::named(&["c"])).await;
    common::add(&board, "a", FixedTools::named(&["b"])).await;
    let result = board.call_tool("a-b-c", json!({"k": 1})).await.unwrap();
    assert_eq!(text(&result), r#"c: {"k":1}"#);
    let result = board.call_tool("a-b", json!(null)).await.unwrap();
    assert_eq!(text(&result), "b: {}");
}

#[tokio::test]
async fn call_tool_returns_the_servers_real_answer() {
    let board = demo_board().await;
    let result = board
        .call_tool(
            "units-convert",
            json!({"value": 100.0, "from": "C", "to": "F"}),
        )
        .await
        .unwrap();
    assert!(text(&result).contains("212"), "{result:?}");
    let result = board
        .call_tool("t-echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "hello");
}

#[tokio::test]
async fn non_object_arguments_are_refused_before_any_call() {
    let board = demo_board().await;
    for bad in [json!([1, 2]), json!("text"), json!(3), json!(true)] {
        let err = board.call_tool("t-echo", bad.clone()).await.unwrap_err();
        assert!(
            matches!(err, PegBoardError::InvalidArguments { .. }),
            "{bad}: {err:?}"
        );
    }
}

#[tokio::test]
async fn unknown_tool_is_tool_not_found_with_close_matches() {
    let board = demo_board().await;
    let err = board.call_tool("search", json!({})).await.unwrap_err();
    match err {
        PegBoardError::ToolNotFound { name, suggestions } => {
            assert_eq!(name, "search");
            assert_eq!(suggestions, ["notes-search"]);
        }
        other => panic!("expected ToolNotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn a_failed_service_call_is_service_error_carrying_the_servers_error() {
    let board = PegBoard::new();
    board
        .add_service(
            Some("f".into()),
            connect(FixedTools::named(&["real"])).await,
        )
        .await
        .unwrap();
    // A hand-registered tool the server does not have: the server answers with a JSON-RPC error.
    board
        .register_tool(
            Some("f"),
            Tool::new("ghost", "not there", Arc::new(Default::default())),
            0,
        )
        .unwrap();
    let err = board.call_tool("f-ghost", json!({})).await.unwrap_err();
    match err {
        PegBoardError::ServiceError {
            tool,
            namespace,
            source: rmcp::ServiceError::McpError(e),
        } => {
            assert_eq!(tool, "f-ghost");
            assert_eq!(namespace.as_deref(), Some("f"));
            assert_eq!(e.message, "no tool ghost");
        }
        other => panic!("expected ServiceError(McpError), got {other:?}"),
    }
}

#[tokio::test]
async fn a_tool_level_error_is_an_ok_result_with_is_error() {
    let board = demo_board().await;
    let result = board
        .call_tool(
            "units-convert",
            json!({"value": 1.0, "from": "kg", "to": "km"}),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
}

#[test]
fn board_calls_can_be_spawned_on_a_multi_thread_runtime() {
    // The rmcp 3.x trap: this must compile (Send futures) and run.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let board = Arc::new(demo_board().await);
        let task = {
            let board = Arc::clone(&board);
            tokio::spawn(async move { board.call_tool("t-echo", json!({"text": "spawned"})).await })
        };
        assert_eq!(text(&task.await.unwrap().unwrap()), "spawned");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_from_eight_tasks_each_get_their_own_answer() {
    let board = demo_board().await;
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..8 {
        let board = board.clone();
        tasks.spawn(async move {
            let mut calls = tokio::task::JoinSet::new();
            for i in 0..125 {
                let board = board.clone();
                calls.spawn(async move {
                    let token = format!("task{task}-call{i}");
                    let result = board
                        .call_tool("t-echo", json!({ "text": token }))
                        .await
                        .unwrap();
                    assert_eq!(text(&result), token);
                });
            }
            let mut answered = 0;
            while let Some(joined) = calls.join_next().await {
                joined.unwrap();
                answered += 1;
            }
            answered
        });
    }
    let mut total = 0;
    while let Some(joined) = tasks.join_next().await {
        total += joined.unwrap();
    }
    assert_eq!(total, 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_survives_unregistering_its_namespace() {
    let board = PegBoard::new();
    let server = TestServer::default();
    common::add(&board, "t", server.clone()).await;
    // "In flight" is checked: the namespace must be gone sooner after the call was sent than its
    // sleep lasts on the server (which started after that). If not (a slow machine), the same
    // again with a sleep four times as long, under a namespace of its own.
    let mut ms = 300;
    for attempt in 0.. {
        let namespace = match attempt {
            0 => "t".to_string(),
            n => format!("t{n}"),
        };
        if attempt > 0 {
            common::add(&board, &namespace, server.clone()).await;
        }
        let calls = server.tool_calls();
        let sent = std::time::Instant::now();
        let call = {
            let board = board.clone();
            let tool = format!("{namespace}-sleep");
            tokio::spawn(async move { board.call_tool(&tool, json!({"ms": ms})).await })
        };
        common::server_until(&server, "the call reached the server", |s| {
            s.tool_calls() == calls + 1
        })
        .await;
        assert_eq!(
            board.unregister_namespace(&namespace).unwrap(),
            demo_servers::testing::BASE_TOOLS.len()
        );
        let in_flight = sent.elapsed() < std::time::Duration::from_millis(ms);
        let result = call.await.unwrap().unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        if in_flight {
            break;
        }
        ms *= 4;
        assert!(ms <= 19_200, "the namespace never went while the call ran");
    }
    assert!(matches!(
        board.call_tool("t-sleep", json!({"ms": 1})).await,
        Err(PegBoardError::ToolNotFound { .. })
    ));
}
