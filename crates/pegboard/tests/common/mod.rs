//! Real rmcp servers, in-process over `tokio::io::duplex`, for the integration tests.
// Each test binary uses some of these helpers (and of the re-exports below).
#![allow(dead_code, unused_imports)]

pub mod catalog;

// The shared in-process helpers live once, in `demo-servers` (`testing::inproc`).
pub use demo_servers::testing::inproc::{
    FixedTools, Killable, add, connect, connect_killable, connect_watched, fingerprint, text,
};

/// Wait for the board's change notifications until `check` holds. The deadline only turns a
/// hang into a failure; nothing waits on it.
pub async fn until(
    board: &pegboard::PegBoard,
    what: &str,
    check: impl Fn(&pegboard::PegBoard) -> bool,
) {
    let mut changes = board.subscribe();
    let waiting = async {
        while !check(board) {
            changes.changed().await.expect("the board is alive");
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), waiting)
        .await
        .unwrap_or_else(|_| panic!("never happened: {what}"));
}

/// Wait for a test server's events until `check` holds (deadline as in [`until`]).
pub async fn server_until(
    server: &demo_servers::testing::TestServer,
    what: &str,
    check: impl Fn(&demo_servers::testing::TestServer) -> bool,
) {
    tokio::time::timeout(std::time::Duration::from_secs(20), server.wait_until(check))
        .await
        .unwrap_or_else(|_| panic!("never happened: {what}"));
}
