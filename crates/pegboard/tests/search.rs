//! `PegBoard::search_tools`: ranking on a real board, the index kept with the board, bad input.

mod common;

use std::{sync::Arc, time::Instant};

use common::FixedTools;
use demo_servers::UnitsServer;
use pegboard::{
    PegBoard, Tool,
    export::{ExportOptions, Provider},
};

fn names(found: &[pegboard::ToolMatch]) -> Vec<&str> {
    found.iter().map(|m| m.tool.name.as_str()).collect()
}

#[tokio::test]
async fn exact_names_prefixed_or_original_come_first() {
    let board = PegBoard::new();
    common::add(
        &board,
        "fs",
        FixedTools::named(&["read_file", "write_file", "search"]),
    )
    .await;
    common::add(&board, "web", FixedTools::named(&["search", "fetch_url"])).await;

    assert_eq!(names(&board.search_tools("web-search", 5))[0], "web-search");
    assert_eq!(names(&board.search_tools("fs-search", 5))[0], "fs-search");
    let original = board.search_tools("read_file", 5);
    assert_eq!(original[0].tool.name, "fs-read_file");
    assert!(original[0].exact);
    // Both servers have `search`: both come first, ahead of any lexical hit.
    let both = board.search_tools("search", 5);
    assert!(both[0].exact && both[1].exact);
    assert!(!both.get(2).is_some_and(|m| m.exact));
}

#[tokio::test]
async fn lexical_ranking_finds_the_tool_by_its_description() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    common::add(
        &board,
        "fs",
        FixedTools::named(&["read_file", "list_directory"]),
    )
    .await;
    let found = board.search_tools("convert miles to kilometres", 3);
    assert!(!found.is_empty());
    assert_eq!(found[0].namespace.as_deref(), Some("units"));
    let scores: Vec<f32> = found.iter().map(|m| m.score).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
}

#[tokio::test]
async fn the_index_follows_the_board_and_reuses_unchanged_services() {
    let board = PegBoard::new();
    common::add(&board, "a", FixedTools::named(&["alpha_one", "alpha_two"])).await;
    let before = board.search_index();
    assert_eq!(before.len(), 2);
    assert!(!board.search_tools("zeta_tool", 5).iter().any(|m| m.exact));

    common::add(&board, "z", FixedTools::named(&["zeta_tool"])).await;
    assert_eq!(
        board.search_tools("zeta_tool", 5)[0].tool.name,
        "z-zeta_tool"
    );
    let after = board.search_index();
    assert_eq!(after.len(), 3);
    // Service 0 did not change: its segment is the very same one.
    assert!(after.shares_segment(&before, 0));

    board.unregister_namespace("z").unwrap();
    assert!(
        board
            .search_tools("zeta_tool", 5)
            .iter()
            .all(|m| m.tool.name != "z-zeta_tool")
    );
    // Removing a tool of service 0 rebuilds its segment.
    board.unregister_tool("a-alpha_two").unwrap();
    let last = board.search_index();
    assert_eq!(last.len(), 1);
    assert!(!last.shares_segment(&before, 0));
    // Reads between writes do not rebuild: the same snapshot gives the same segments.
    assert!(board.search_index().shares_segment(&last, 0));
}

#[tokio::test]
async fn bad_input_is_clamped_or_finds_nothing_quickly() {
    let board = PegBoard::new();
    let many: Vec<String> = (0..150).map(|i| format!("tool_{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    common::add(&board, "m", FixedTools::named(&many)).await;

    assert!(board.search_tools("", 5).is_empty());
    assert!(board.search_tools(" \t\n ", 5).is_empty());
    // A limit of 0 is clamped to 1, 10,000 to 100.
    assert_eq!(board.search_tools("tool", 0).len(), 1);
    assert_eq!(board.search_tools("tool", 10_000).len(), 100);
    // A 1 MB query reads its first 4 KiB only: no panic, no slow path (even mid-character).
    let huge = "é tool ".repeat(1 << 17);
    let started = Instant::now();
    let found = board.search_tools(&huge, 5);
    assert_eq!(found.len(), 5);
    assert!(
        started.elapsed().as_secs() < 2,
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn exports_can_defer_loading() {
    let board = PegBoard::new();
    common::add(&board, "fs", FixedTools::named(&["read_file"])).await;
    let on = ExportOptions::default().defer_loading(true);
    for provider in [Provider::Anthropic, Provider::OpenAi] {
        let json = board.export_with(provider, on).unwrap();
        assert_eq!(json[0]["defer_loading"], true, "{provider:?}");
        let plain = board
            .export_with(provider, ExportOptions::default())
            .unwrap();
        assert!(plain[0].get("defer_loading").is_none());
        assert_eq!(plain, board.export(provider).unwrap());
    }
    // Gemini has no such field.
    let gemini = board.export_with(Provider::Gemini, on).unwrap();
    assert!(!gemini.to_string().contains("defer_loading"));
}

#[tokio::test]
async fn a_manual_tool_is_searchable() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let schema = Arc::clone(board.get_tool("units-convert").unwrap().input_schema());
    let tool = Tool::new("translate_text", "Translate text between languages", schema);
    board.register_tool(Some("lang"), tool, 0).unwrap();
    assert_eq!(
        board.search_tools("translate this sentence", 1)[0]
            .tool
            .name,
        "lang-translate_text"
    );
}

#[tokio::test]
async fn services_say_what_they_are_in_one_line() {
    let board = PegBoard::new();
    common::add(&board, "fs", FixedTools::named(&["read_file"])).await;
    // FixedTools sends no instructions: its serverInfo stands in.
    assert_eq!(
        board.services()[0].summary.as_deref(),
        Some("fixed-tools 0.0.0")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_beside_writers_always_see_one_whole_board() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let schema = Arc::clone(board.get_tool("units-convert").unwrap().input_schema());
    let writer = {
        let board = board.clone();
        tokio::task::spawn_blocking(move || {
            for round in 0..40 {
                let ns = format!("w{}", round % 3);
                for i in 0..10 {
                    let tool = Tool::new(
                        format!("lookup{i}"),
                        "look up a record",
                        Arc::clone(&schema),
                    );
                    board.register_tool(Some(&ns), tool, 0).unwrap();
                }
                assert_eq!(board.unregister_namespace(&ns).unwrap(), 10);
            }
        })
    };
    let mut searches = 0;
    while !writer.is_finished() {
        // Tools are added one at a time, lookup0 first, and a namespace is removed whole: one
        // board's view holds lookup0..lookupN-1 of a namespace, never a gap.
        let found = board.search_tools("look up a record", 100);
        for ns in ["w0", "w1", "w2"] {
            let mut held: Vec<usize> = found
                .iter()
                .filter(|m| m.namespace.as_deref() == Some(ns))
                .map(|m| m.original.trim_start_matches("lookup").parse().unwrap())
                .collect();
            held.sort_unstable();
            assert!(held.iter().copied().eq(0..held.len()), "{ns}: {held:?}");
        }
        searches += 1;
        tokio::task::yield_now().await;
    }
    writer.await.unwrap();
    assert!(searches > 0);
}
