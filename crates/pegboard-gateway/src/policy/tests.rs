//! The view against a real board: demo servers in-process, tools removed to move the generation.

use std::sync::Arc;

use bytes::Bytes;
use rmcp::ServiceExt;

use super::{ClientView, ToolPatterns, ViewCache};

async fn add<S: rmcp::ServerHandler>(board: &pegboard::PegBoard, namespace: &str, server: S) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let service = ().into_dyn().serve(client_io).await.unwrap();
    board
        .add_service(Some(namespace.into()), service)
        .await
        .unwrap();
}

async fn board() -> pegboard::PegBoard {
    let board = pegboard::PegBoard::new();
    add(&board, "units", demo_servers::UnitsServer::default()).await;
    add(&board, "docs", demo_servers::DocsServer::default()).await;
    add(&board, "notes", demo_servers::NotesServer::default()).await;
    board
}

fn names(view: &ClientView) -> Vec<&str> {
    view.tools().iter().map(|t| t.name()).collect()
}

#[tokio::test]
async fn view_holds_the_visible_tools_in_board_order() {
    let board = board().await;
    let patterns = ToolPatterns::new(["units-*", "!units-list_units", "notes-search"]).unwrap();
    let view = ClientView::build(&patterns, true, &board);
    assert_eq!(names(&view), ["units-convert", "notes-search"]);
    assert!(view.may_see_tool("units-convert"));
    assert!(!view.may_see_tool("units-list_units"));
    assert!(!view.may_see_tool("docs-search"));
    assert!(!view.may_see_tool("no-such-tool"));
    let mut listed = board.mcp_tools();
    view.retain_tools(&mut listed, |t| &t.name);
    let listed: Vec<&str> = listed.iter().map(|t| &*t.name).collect();
    assert_eq!(listed, ["units-convert", "notes-search"]);
}

#[tokio::test]
async fn resources_follow_visible_tools_or_prompts_unless_off() {
    let board = board().await;
    let patterns = ToolPatterns::new(["units-*", "docs-greeting"]).unwrap();
    let view = ClientView::build(&patterns, true, &board);
    assert!(view.may_see_resources_of("units"));
    assert!(!view.may_see_resources_of("docs"));
    assert!(!view.may_see_resources_of("notes"));
    // A visible prompt of `docs` opens its resources too.
    assert!(view.may_see_resources_with_prompts("docs", &patterns, ["docs-greeting"]));
    assert!(!view.may_see_resources_with_prompts("notes", &patterns, ["notes-hello"]));
    let off = ClientView::build(&patterns, false, &board);
    assert!(!off.may_see_resources_of("units"));
    assert!(!off.may_see_resources_with_prompts("docs", &patterns, ["docs-greeting"]));
    let all = ClientView::build(&ToolPatterns::all(), true, &board);
    assert!(all.may_see_resources_of("anything"));
}

#[tokio::test]
async fn cache_reuses_the_view_until_the_board_changes() {
    let board = board().await;
    let patterns = ToolPatterns::new(["units-*"]).unwrap();
    let cache = ViewCache::new();
    let first = cache.view(&patterns, true, &board);
    let again = cache.view(&patterns, true, &board);
    assert!(Arc::ptr_eq(&first, &again));
    let mut renders = 0;
    let bytes = first.rendered(|v| {
        renders += 1;
        Bytes::from(names(v).join(","))
    });
    assert_eq!(bytes, "units-convert,units-list_units");
    let _ = again.rendered(|_| {
        renders += 1;
        Bytes::new()
    });
    assert_eq!(renders, 1, "rendered once per view");

    board.unregister_tool("units-list_units").unwrap();
    let after = cache.view(&patterns, true, &board);
    assert!(!Arc::ptr_eq(&first, &after));
    assert!(after.generation() > first.generation());
    assert_eq!(names(&after), ["units-convert"]);
    // A change elsewhere on the board also moves the generation: a new view, same contents.
    board.unregister_namespace("docs").unwrap();
    let later = cache.view(&patterns, true, &board);
    assert!(!Arc::ptr_eq(&after, &later));
    assert_eq!(names(&later), ["units-convert"]);
}

#[tokio::test]
async fn a_change_is_news_only_to_clients_that_see_it() {
    let board = board().await;
    let units_only = ToolPatterns::new(["units-*"]).unwrap();
    let docs_only = ToolPatterns::new(["docs-*"]).unwrap();
    let units_before = ClientView::build(&units_only, true, &board);
    let docs_before = ClientView::build(&docs_only, true, &board);
    board.unregister_tool("docs-read").unwrap();
    let units_after = ClientView::build(&units_only, true, &board);
    let docs_after = ClientView::build(&docs_only, true, &board);
    assert!(!units_after.tools_differ_from(&units_before));
    assert!(docs_after.tools_differ_from(&docs_before));
    // The fingerprint a stored session keeps says the same, and names no process: a view built
    // apart (as on another replica) of the same tools has the same one.
    assert_eq!(units_after.fingerprint(), units_before.fingerprint());
    assert_ne!(docs_after.fingerprint(), docs_before.fingerprint());
    let again = ClientView::build(&docs_only, true, &board);
    assert_eq!(again.fingerprint(), docs_after.fingerprint());
    assert_eq!(docs_after.fingerprint().len(), 32);
}

#[tokio::test]
async fn a_client_with_no_tools_list_sees_everything_without_filtering() {
    let board = board().await;
    let view = ClientView::build(&ToolPatterns::all(), true, &board);
    assert_eq!(view.tools().len(), board.tool_count());
    assert!(view.may_see_tool("anything-at-all"));
}
