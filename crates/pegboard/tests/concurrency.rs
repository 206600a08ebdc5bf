//! Readers and writers at once: no panic, no torn view, every listed name routes.

mod common;

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use demo_servers::UnitsServer;
use pegboard::{PegBoard, PegBoardError, Tool};

/// Rounds each writer runs; readers check until every writer is done.
const ROUNDS: usize = 60;
const WRITERS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_writers_and_readers_at_once_keep_every_listed_name_routable() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let schema = Arc::clone(board.get_tool("units-convert").unwrap().input_schema());
    let writers_done = Arc::new(AtomicUsize::new(0));

    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let board = board.clone();
        let schema = Arc::clone(&schema);
        let done = Arc::clone(&writers_done);
        writers.push(tokio::task::spawn_blocking(move || {
            for round in 0..ROUNDS {
                // Each writer owns its namespaces: w<writer>x<round % 3>.
                let ns = format!("w{writer}x{}", round % 3);
                for i in 0..20 {
                    let tool = Tool::new(format!("tool{i}"), "generated", Arc::clone(&schema));
                    board.register_tool(Some(&ns), tool, 0).unwrap();
                }
                assert_eq!(board.unregister_namespace(&ns).unwrap(), 20);
            }
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }

    let mut readers = Vec::new();
    for _ in 0..3 {
        let board = board.clone();
        let done = Arc::clone(&writers_done);
        readers.push(tokio::task::spawn_blocking(move || {
            let mut checks = 0usize;
            while done.load(Ordering::SeqCst) < WRITERS {
                let names = board.list_all_tools();
                // One read is one snapshot: each writer registers tool0, tool1, ... in turn, so
                // each namespace being filled shows exactly tool0..toolK, in order, never a gap.
                let mut per_namespace: HashMap<&str, Vec<&str>> = HashMap::new();
                for name in names.iter().filter(|n| n.starts_with('w')) {
                    let (ns, tool) = name.split_once('-').unwrap();
                    per_namespace.entry(ns).or_default().push(tool);
                }
                for (ns, tools) in &per_namespace {
                    for (i, tool) in tools.iter().enumerate() {
                        assert_eq!(*tool, format!("tool{i}"), "torn view of {ns}: {tools:?}");
                    }
                }
                let tools = board.get_all_tools();
                assert!(tools.iter().any(|t| t.name == "units-convert"));
                for name in &names {
                    // A name may be gone by now, but never half-there: listed, then routed or gone.
                    if let Some((service, _)) = board.get_tool_route(name) {
                        assert_eq!(service, 0);
                    }
                }
                checks += 1;
            }
            checks
        }));
    }

    for writer in writers {
        writer.await.unwrap();
    }
    let mut checks = 0;
    for reader in readers {
        checks += reader.await.unwrap();
    }
    assert!(checks > 0);
    assert_eq!(board.list_all_tools().len(), 2);
    assert_eq!(board.list_namespaces(), ["units"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_add_service_calls_racing_for_one_name_exactly_one_wins() {
    for _ in 0..20 {
        let board = PegBoard::new();
        let (a, b) = (
            common::connect(common::FixedTools::named(&["search", "a_only"])).await,
            common::connect(common::FixedTools::named(&["search", "b_only"])).await,
        );
        let (ra, rb) = tokio::join!(
            tokio::spawn({
                let board = board.clone();
                async move { board.add_service(Some("web".into()), a).await }
            }),
            tokio::spawn({
                let board = board.clone();
                async move { board.add_service(Some("web".into()), b).await }
            }),
        );
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        assert!(ra.is_ok() != rb.is_ok(), "exactly one wins: {ra:?} {rb:?}");
        let loser = if ra.is_ok() { rb } else { ra }.unwrap_err();
        assert!(
            matches!(loser, PegBoardError::DuplicateTool { ref name, .. } if name == "web-search"),
            "{loser}"
        );
        // The board holds the winner whole and nothing of the loser.
        assert_eq!(board.service_count(), 1);
        assert_eq!(board.tool_count(), 2);
        let winner_only = if board.get_tool("web-a_only").is_some() {
            "web-a_only"
        } else {
            "web-b_only"
        };
        assert_eq!(board.list_all_tools(), ["web-search", winner_only]);
        let index = board.services()[0].index;
        assert_eq!(board.get_tool_route("web-search").unwrap().0, index);
        assert!(
            board
                .call_tool("web-search", serde_json::json!({}))
                .await
                .is_ok()
        );
    }
}
