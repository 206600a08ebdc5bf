//! What one server may send while it is listed: tools, pages, cursors.

mod common;

use common::{connect, fingerprint};
use demo_servers::testing::{BASE_TOOLS, TestServer, TestServerOptions};
use pegboard::{PegBoard, PegBoardError};

#[tokio::test]
async fn more_tools_than_the_limit_is_too_many_tools_and_changes_nothing() {
    let board = PegBoard::builder().max_tools_per_service(5, 100).build();
    common::add(&board, "ok", common::FixedTools::named(&["a"])).await;
    let before = fingerprint(&board);
    let err = board
        .add_service(Some("t".into()), connect(TestServer::default()).await)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::TooManyTools { ref namespace, ref what } if namespace.as_deref() == Some("t") && what.contains("more than 5 tools")),
        "{err}"
    );
    assert!(err.to_string().contains("allow list"), "{err}");
    assert_eq!(fingerprint(&board), before);
}

#[tokio::test]
async fn exactly_the_limit_is_accepted() {
    let board = PegBoard::builder()
        .max_tools_per_service(BASE_TOOLS.len(), 100)
        .build();
    let count = board
        .add_service(Some("t".into()), connect(TestServer::default()).await)
        .await
        .unwrap();
    assert_eq!(count, BASE_TOOLS.len());
}

#[tokio::test]
async fn more_pages_than_the_cap_is_too_many_tools() {
    let board = PegBoard::builder().max_tools_per_service(1_000, 3).build();
    // Eight tools, two a page: four pages, one past the cap.
    let server = TestServer::new(TestServerOptions::default().extra_tools(2).page_size(2));
    let err = board
        .add_service(Some("t".into()), connect(server.clone()).await)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::TooManyTools { ref what, .. } if what.contains("more than 3 pages")),
        "{err}"
    );
    assert_eq!(server.list_calls(), 3, "asked for no page past the cap");
    assert_eq!(board.tool_count(), 0);
}

#[tokio::test]
async fn a_repeated_cursor_stops_the_listing_without_an_error() {
    let server = TestServer::new(
        TestServerOptions::default()
            .extra_tools(10)
            .page_size(4)
            .stuck_cursor(true),
    );
    let board = PegBoard::new();
    let count = board
        .add_service(Some("t".into()), connect(server.clone()).await)
        .await
        .unwrap();
    assert_eq!(count, 4, "the first page, once");
    assert_eq!(server.list_calls(), 2);
}
