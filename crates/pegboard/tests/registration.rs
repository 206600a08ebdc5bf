//! Registering services and tools: naming, all-or-nothing writes, reads, removal, order.

mod common;

use std::sync::Arc;

use common::{FixedTools, connect, fingerprint};
use demo_servers::{DocsServer, NotesServer, TestServer, TestServerOptions, UnitsServer};
use pegboard::{NamingPolicy, PegBoard, PegBoardError, ServiceOptions, Tool};

#[tokio::test]
async fn add_service_prefixes_every_tool_with_the_namespace() {
    let board = PegBoard::new();
    let count = common::add(&board, "notes", NotesServer::new()).await;
    assert_eq!(count, 3);
    let mut names = board.list_all_tools();
    names.sort();
    assert_eq!(
        names,
        ["notes-add_note", "notes-list_notes", "notes-search"]
    );
    assert_eq!(
        board.get_tool_route("notes-search"),
        Some((0, "search".to_string()))
    );
    assert_eq!(
        board.get_tool("notes-search").unwrap().name(),
        "notes-search"
    );
    assert_eq!(board.namespace_of("notes-search").as_deref(), Some("notes"));
}

#[tokio::test]
async fn seed_example_two_search_tools_stay_apart() {
    let board = PegBoard::new();
    common::add(&board, "web_search", NotesServer::new()).await;
    common::add(&board, "file_search", DocsServer::new()).await;
    assert_eq!(
        board.get_tool_route("web_search-search"),
        Some((0, "search".to_string()))
    );
    assert_eq!(
        board.get_tool_route("file_search-search"),
        Some((1, "search".to_string()))
    );
    assert_eq!(board.service_count(), 2);
    assert_eq!(board.namespace_count(), 2);
    assert_eq!(board.list_namespaces(), ["web_search", "file_search"]);
}

#[tokio::test]
async fn none_or_empty_namespace_keeps_names() {
    let board = PegBoard::new();
    board
        .add_service(None, connect(UnitsServer::new()).await)
        .await
        .unwrap();
    board
        .add_service(Some(String::new()), connect(DocsServer::new()).await)
        .await
        .unwrap();
    let mut names = board.list_all_tools();
    names.sort();
    assert_eq!(names, ["convert", "list_units", "read", "search"]);
    assert_eq!(board.namespace_count(), 0);
    assert!(board.list_namespaces().is_empty());
}

#[tokio::test]
async fn add_service_follows_every_page() {
    let board = PegBoard::new();
    let server = TestServer::new(TestServerOptions::default().extra_tools(45).page_size(10));
    let count = common::add(&board, "t", server.clone()).await;
    assert_eq!(count, 45 + demo_servers::testing::BASE_TOOLS.len());
    assert!(
        server.list_calls() >= 6,
        "expected several pages, got {} list calls",
        server.list_calls()
    );
    assert!(board.get_tool("t-tool_0044").is_some());
}

#[tokio::test]
async fn add_service_with_clash_changes_nothing() {
    let board = PegBoard::new();
    common::add(&board, "web", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    let before = fingerprint(&board);

    // Same namespace, a server that also has `search`: `web-search` is taken.
    let err = board
        .add_service(Some("web".into()), connect(DocsServer::new()).await)
        .await
        .unwrap_err();
    match &err {
        PegBoardError::DuplicateTool { name, namespace } => {
            assert_eq!(name, "web-search");
            assert_eq!(namespace.as_deref(), Some("web"));
        }
        other => panic!("expected DuplicateTool, got {other:?}"),
    }
    assert!(err.to_string().contains("`web-search`") && err.to_string().contains("`web`"));
    assert_eq!(fingerprint(&board), before);
}

#[tokio::test]
async fn namespaces_containing_the_separator_cannot_shadow_each_other() {
    // `a-b` + `c` and `a` + `b-c` both want `a-b-c`: the second is refused, never routed by a split.
    let board = PegBoard::new();
    common::add(&board, "a-b", FixedTools::named(&["c"])).await;
    let before = fingerprint(&board);
    let err = board
        .add_service(
            Some("a".into()),
            connect(FixedTools::named(&["b-c", "x"])).await,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::DuplicateTool { ref name, ref namespace } if name == "a-b-c" && namespace.as_deref() == Some("a-b"))
    );
    assert_eq!(fingerprint(&board), before);
    assert_eq!(board.get_tool_route("a-b-c"), Some((0, "c".to_string())));
    assert!(
        board.get_tool("a-x").is_none(),
        "nothing of the failed service may land"
    );
}

#[tokio::test]
async fn two_tools_of_one_server_mapping_to_one_name_are_refused() {
    let board = PegBoard::with_naming(NamingPolicy::verbatim());
    let err = board
        .add_service(
            Some("s".into()),
            connect(FixedTools::named(&["dup", "dup"])).await,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, PegBoardError::DuplicateTool { ref name, .. } if name == "s-dup"));
    assert_eq!(board.service_count(), 0);
    assert_eq!(board.tool_count(), 0);
}

#[tokio::test]
async fn llm_safe_names_never_merge_distinct_tools() {
    let board = PegBoard::new();
    let count = board
        .add_service(
            Some("gh".into()),
            connect(FixedTools::named(&["repo.list", "repo_list"])).await,
        )
        .await
        .unwrap();
    assert_eq!(count, 2);
    let names = board.list_all_tools();
    assert_eq!(names[1], "gh-repo_list");
    assert!(names[0].starts_with("gh-repo_list_") && pegboard::naming::is_llm_safe(&names[0]));
    assert_eq!(
        board.get_tool_route(&names[0]),
        Some((0, "repo.list".to_string()))
    );
}

#[tokio::test]
async fn invalid_namespaces_are_refused_with_the_board_unchanged() {
    let board = PegBoard::new();
    for bad in ["   ", "--", "has space", "dot.ted"] {
        let err = board
            .add_service(Some(bad.into()), connect(UnitsServer::new()).await)
            .await
            .unwrap_err();
        assert!(
            matches!(err, PegBoardError::InvalidNamespace { .. }),
            "{bad:?}: {err:?}"
        );
    }
    assert_eq!(fingerprint(&board), fingerprint(&PegBoard::new()));
}

#[tokio::test]
async fn select_tools_is_all_or_nothing_in_the_order_asked() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    let picked = board
        .select_tools(&["units-convert", "notes-search"])
        .unwrap();
    let names: Vec<&str> = picked.iter().map(Tool::name).collect();
    assert_eq!(names, ["units-convert", "notes-search"]);
    assert!(board.select_tools(&["units-convert", "nope"]).is_none());
}

#[tokio::test]
async fn namespace_reads_list_only_that_namespace() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    let mut units = board.list_tools_in_namespace("units");
    units.sort();
    assert_eq!(units, ["units-convert", "units-list_units"]);
    let tools = board.get_tools_in_namespace("units");
    assert_eq!(tools.len(), 2);
    assert!(tools.iter().all(|t| t.name().starts_with("units-")));
    assert!(board.list_tools_in_namespace("nope").is_empty());
    assert_eq!(board.get_all_tools().len(), 5);
}

#[tokio::test]
async fn register_tool_routes_to_the_given_service_under_the_original_name() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let convert = board.get_tool("units-convert").unwrap();
    let tool = Tool::new(
        "convert",
        "Convert units",
        Arc::clone(convert.input_schema()),
    );
    board.register_tool(Some("alias"), tool.clone(), 0).unwrap();
    assert_eq!(
        board.get_tool_route("alias-convert"),
        Some((0, "convert".to_string()))
    );
    let result = board
        .call_tool(
            "alias-convert",
            serde_json::json!({"value": 1.0, "from": "km", "to": "m"}),
        )
        .await
        .unwrap();
    assert!(common::text(&result).contains("1000"), "{result:?}");

    let before = fingerprint(&board);
    assert!(matches!(
        board.register_tool(Some("alias"), tool.clone(), 0),
        Err(PegBoardError::DuplicateTool { .. })
    ));
    assert!(matches!(
        board.register_tool(Some("x"), tool.clone(), 7),
        Err(PegBoardError::UnknownService { index: 7 })
    ));
    assert!(matches!(
        board.register_tool(Some(" "), tool, 0),
        Err(PegBoardError::InvalidNamespace { .. })
    ));
    assert_eq!(fingerprint(&board), before);
}

#[tokio::test]
async fn unregister_tool_and_namespace_remove_exactly_what_they_name() {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    common::add(&board, "docs", DocsServer::new()).await;
    let order_before: Vec<String> = board.list_all_tools();

    board.unregister_tool("notes-search").unwrap();
    assert!(board.get_tool("notes-search").is_none());
    assert!(matches!(
        board.unregister_tool("notes-search"),
        Err(PegBoardError::ToolNotFound { .. })
    ));
    assert_eq!(board.service_count(), 3);

    assert_eq!(board.unregister_namespace("units").unwrap(), 2);
    assert_eq!(board.service_count(), 2);
    assert_eq!(board.list_namespaces(), ["notes", "docs"]);
    assert!(matches!(
        board.unregister_namespace("units"),
        Err(PegBoardError::UnknownNamespace { .. })
    ));

    // Order of what is left is the registration order, untouched by the removals.
    let expected: Vec<String> = order_before
        .into_iter()
        .filter(|n| n != "notes-search" && !n.starts_with("units-"))
        .collect();
    assert_eq!(board.list_all_tools(), expected);
    // Indices are stable: docs stays at 2 although units (1) is gone.
    assert_eq!(
        board.get_tool_route("docs-read"),
        Some((2, "read".to_string()))
    );
    common::add(&board, "units", UnitsServer::new()).await;
    assert_eq!(
        board.get_tool_route("units-convert"),
        Some((3, "convert".to_string()))
    );
}

#[tokio::test]
async fn allow_and_deny_lists_filter_by_original_name() {
    let board = PegBoard::new();
    let options = ServiceOptions::new()
        .allow(["search", "add_note"])
        .deny(["add_note"]);
    let count = board
        .add_service_with(
            Some("notes".into()),
            connect(NotesServer::new()).await,
            options,
        )
        .await
        .unwrap();
    assert_eq!((count.index, count.tools), (0, 1));
    assert_eq!(board.list_all_tools(), ["notes-search"]);
}
