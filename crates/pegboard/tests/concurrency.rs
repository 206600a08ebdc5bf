//! Readers and writers at once: no panic, no torn view, every listed name routes.

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use demo_servers::UnitsServer;
use pegboard::{PegBoard, Tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_and_unregister_while_reading_keeps_every_listed_name_routable() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let schema = Arc::clone(board.get_tool("units-convert").unwrap().input_schema());
    let stop = Arc::new(AtomicBool::new(false));

    let writer = {
        let board = board.clone();
        let stop = Arc::clone(&stop);
        tokio::task::spawn_blocking(move || {
            let mut rounds = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let ns = format!("w{}", rounds % 7);
                for i in 0..20 {
                    let tool = Tool::new(format!("tool{i}"), "generated", Arc::clone(&schema));
                    board.register_tool(Some(&ns), tool, 0).unwrap();
                }
                assert_eq!(board.unregister_namespace(&ns).unwrap(), 20);
                rounds += 1;
            }
            rounds
        })
    };

    let mut readers = Vec::new();
    for _ in 0..4 {
        let board = board.clone();
        let stop = Arc::clone(&stop);
        readers.push(tokio::task::spawn_blocking(move || {
            let mut checks = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let names = board.list_all_tools();
                // One read is one snapshot: the writer registers tool0, tool1, ... in turn, so a
                // namespace being filled shows exactly tool0..toolK, in order, never a gap.
                let generated: Vec<&String> = names.iter().filter(|n| n.starts_with('w')).collect();
                for (i, name) in generated.iter().enumerate() {
                    assert!(
                        name.ends_with(&format!("-tool{i}")),
                        "torn view: {generated:?}"
                    );
                }
                let tools = board.get_all_tools();
                assert!(tools.iter().any(|t| t.name() == "units-convert"));
                for name in names.iter().filter(|n| !n.starts_with('w')) {
                    assert!(
                        board.get_tool_route(name).is_some(),
                        "{name} listed but not routable"
                    );
                }
                checks += 1;
            }
            checks
        }));
    }

    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.await.unwrap();
    let mut checks = 0;
    for reader in readers {
        checks += reader.await.unwrap();
    }
    assert!(rounds > 0 && checks > 0, "rounds={rounds} checks={checks}");
    assert_eq!(board.list_all_tools().len(), 2);
}
