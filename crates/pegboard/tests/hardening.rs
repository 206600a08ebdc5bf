//! Issue 10's board items: each pinned by a test that failed before the fix.

mod common;

use std::sync::Arc;

use common::{FixedTools, connect, connect_watched};
use demo_servers::testing::{BASE_TOOLS, TestServer, TestServerOptions};
use pegboard::{PegBoard, PegBoardError, ServiceOptions, Tool};
use serde_json::json;

#[tokio::test]
async fn a_tool_redefined_on_the_server_stays_routable_after_refresh_and_leaves_with_its_service() {
    let server = TestServer::default();
    let board = PegBoard::new();
    let added = board
        .add_service_with(
            Some("t".into()),
            connect(server.clone()).await,
            ServiceOptions::new(),
        )
        .await
        .unwrap();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}, "loud": {"type": "boolean"}}});
    assert!(server.redefine_tool_silently(
        "echo",
        "Echo, redefined",
        schema.as_object().unwrap().clone()
    ));

    let report = board.refresh_service(added.index).await.unwrap();
    assert_eq!(report.changed, ["t-echo"]);
    let tool = board.get_tool("t-echo").unwrap();
    assert_eq!(tool.description.as_deref(), Some("Echo, redefined"));
    assert_eq!(tool.input_schema["properties"]["loud"]["type"], "boolean");
    assert_eq!(
        board.get_tool_route("t-echo"),
        Some((added.index, "echo".to_string()))
    );
    let result = board
        .call_tool("t-echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(common::text(&result), "hi");
    assert_eq!(board.services()[0].tools, BASE_TOOLS.len());

    // The server restarts: its old service goes with every tool, the new one takes the names.
    assert_eq!(board.remove_service(added.index).unwrap(), BASE_TOOLS.len());
    assert_eq!(board.tool_count(), 0);
    board
        .add_service(Some("t".into()), connect(server.clone()).await)
        .await
        .unwrap();
    let result = board
        .call_tool("t-echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(common::text(&result), "again");
}

#[tokio::test]
async fn a_newer_refresh_that_fails_does_not_throw_away_an_older_good_one() {
    let server = TestServer::default();
    let board = PegBoard::new();
    common::add(&board, "t", server.clone()).await;
    assert!(server.add_tool_silently("fresh"));

    server.pause_lists(true);
    let older = tokio::spawn({
        let board = board.clone();
        async move { board.refresh_service(0).await }
    });
    server.wait_for_list_calls(2).await; // discovery, then the older refresh (held)
    server.fail_next_lists(1);
    let newer = board.refresh_service(0).await;
    assert!(
        matches!(newer, Err(PegBoardError::Discovery { .. })),
        "{newer:?}"
    );
    assert_eq!(
        board.tool_count(),
        BASE_TOOLS.len(),
        "a failed refresh changes nothing"
    );

    server.pause_lists(false);
    let report = older.await.unwrap().unwrap();
    assert!(!report.superseded, "{report:?}");
    assert_eq!(report.added, ["t-fresh"]);
    assert!(board.get_tool("t-fresh").is_some());
}

#[tokio::test]
async fn a_failed_refresh_after_list_changed_keeps_the_tools_and_is_retried() {
    let server = TestServer::default();
    let board = PegBoard::new();
    let (service, options) = connect_watched(server.clone()).await;
    board
        .add_service_with(Some("t".into()), service, options)
        .await
        .unwrap();
    server.fail_next_lists(1);
    // add_tool sends notifications/tools/list_changed; the board's re-listing fails once.
    board
        .call_tool("t-add_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    common::until(&board, "t-fresh after a retry", |b| {
        b.get_tool("t-fresh").is_some()
    })
    .await;
    assert_eq!(board.tool_count(), BASE_TOOLS.len() + 1);
    assert!(
        server.list_calls() >= 3,
        "discovery, the failed listing, the retry"
    );
}

#[tokio::test]
async fn unregister_namespace_removes_only_that_namespaces_tools() {
    let board = PegBoard::new();
    common::add(&board, "web", FixedTools::named(&["search"])).await;
    common::add(&board, "docs", FixedTools::named(&["read"])).await;
    // Another namespace routes to web's server.
    let alias = Tool::new(
        "search",
        "web search, by another name",
        Arc::new(Default::default()),
    );
    board.register_tool(Some("alias"), alias, 0).unwrap();

    assert_eq!(board.unregister_namespace("web").unwrap(), 1);
    assert_eq!(board.list_all_tools(), ["docs-read", "alias-search"]);
    assert_eq!(board.list_namespaces(), ["docs", "alias"]);
    assert_eq!(
        board.service_count(),
        2,
        "web's server stays: alias-search routes to it"
    );
    let result = board.call_tool("alias-search", json!({})).await.unwrap();
    assert_eq!(common::text(&result), "search: {}");
    assert!(matches!(
        board.refresh_namespace("web").await,
        Err(PegBoardError::UnknownNamespace { .. })
    ));

    // Once nothing routes to it, it goes.
    assert_eq!(board.unregister_namespace("alias").unwrap(), 1);
    assert_eq!(board.service_count(), 1);
    assert_eq!(board.list_all_tools(), ["docs-read"]);
}

#[tokio::test]
async fn after_shutdown_the_board_refuses_new_services() {
    let board = PegBoard::new();
    common::add(&board, "a", FixedTools::named(&["x"])).await;
    board.shutdown().await;
    let err = board
        .add_service(Some("b".into()), connect(FixedTools::named(&["y"])).await)
        .await
        .unwrap_err();
    assert!(matches!(err, PegBoardError::ShutDown), "{err}");
    assert_eq!(
        err.to_string(),
        "the board has been shut down and takes no new servers"
    );
    assert_eq!((board.tool_count(), board.service_count()), (0, 0));
}

#[tokio::test]
async fn a_new_service_index_is_never_reused_and_not_service_count_minus_one() {
    let board = PegBoard::new();
    let add = |names: &'static [&'static str], ns: &'static str| {
        let board = board.clone();
        async move {
            board
                .add_service_with(
                    Some(ns.into()),
                    connect(FixedTools::named(names)).await,
                    ServiceOptions::new(),
                )
                .await
                .unwrap()
        }
    };
    assert_eq!(add(&["x"], "a").await.index, 0);
    assert_eq!(add(&["y"], "b").await.index, 1);
    board.remove_service(0).unwrap();
    let third = add(&["z"], "c").await;
    assert_eq!(board.service_count(), 2);
    assert_eq!(third.index, 2);
    assert_eq!(board.get_tool_route("c-z"), Some((2, "z".to_string())));
    let indices: Vec<usize> = board.services().iter().map(|s| s.index).collect();
    assert_eq!(indices, [1, 2]);
}

#[tokio::test]
async fn a_server_whose_cursor_never_advances_keeps_the_tools_seen_once() {
    let server = TestServer::new(TestServerOptions::default().page_size(3).stuck_cursor(true));
    let board = PegBoard::new();
    let count = board
        .add_service(Some("t".into()), connect(server.clone()).await)
        .await
        .unwrap();
    assert_eq!(count, 3);
    assert_eq!(board.list_all_tools(), ["t-echo", "t-sleep", "t-crash"]);
    assert_eq!(server.list_calls(), 2, "stopped at the repeated cursor");
}

#[tokio::test]
async fn an_unknown_huge_name_gives_a_short_error() {
    let board = PegBoard::new();
    common::add(&board, "units", FixedTools::named(&["convert"])).await;
    let huge = format!("{}units-convert", "x".repeat(1 << 20));
    let err = board.call_tool(&huge, json!({})).await.unwrap_err();
    let message = err.to_string();
    assert!(message.len() < 300, "{} bytes", message.len());
    assert!(message.contains("1048589 bytes"), "{message}");
    assert!(
        message.ends_with("did you mean `units-convert`?"),
        "{message}"
    );
}
