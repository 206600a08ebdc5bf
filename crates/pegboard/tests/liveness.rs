//! Timeouts, closed services, live tool lists, clean shutdown.

mod common;

use std::time::{Duration, Instant};

use common::{connect, connect_killable, connect_watched, fingerprint, text};
use demo_servers::{TestServer, TestServerOptions, UnitsServer};
use pegboard::{CallOptions, PegBoard, PegBoardError, ServiceState};
use serde_json::json;

#[tokio::test]
async fn a_slow_call_times_out_and_is_cancelled_at_the_server() {
    let board = PegBoard::builder()
        .call_timeout(Duration::from_millis(100))
        .build();
    let server = TestServer::default();
    common::add(&board, "t", server.clone()).await;
    let started = Instant::now();
    let err = board
        .call_tool("t-sleep", json!({"ms": 5_000}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::Timeout { ref operation, after, .. } if operation == "t-sleep" && after == Duration::from_millis(100)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    common::server_until(&server, "the server saw notifications/cancelled", |s| {
        s.cancelled_count() == 1
    })
    .await;
    // The service is still usable.
    assert_eq!(
        text(
            &board
                .call_tool("t-echo", json!({"text": "still here"}))
                .await
                .unwrap()
        ),
        "still here"
    );
}

#[tokio::test]
async fn call_options_override_the_board_timeout() {
    let board = PegBoard::builder()
        .call_timeout(Duration::from_secs(30))
        .build();
    common::add(&board, "t", TestServer::default()).await;
    let options = CallOptions::new().timeout(Duration::from_millis(50));
    let err = board
        .call_tool_with("t-sleep", json!({"ms": 2_000}), options)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::Timeout { after, .. } if after == Duration::from_millis(50))
    );
    let ok = board
        .call_tool_with(
            "t-sleep",
            json!({"ms": 10}),
            CallOptions::new().timeout(Duration::from_secs(5)),
        )
        .await;
    assert!(ok.is_ok());
}

#[tokio::test]
async fn a_server_that_never_lists_fails_add_service_with_timeout_and_changes_nothing() {
    let board = PegBoard::builder()
        .discovery_timeout(Duration::from_millis(200))
        .build();
    common::add(&board, "units", UnitsServer::new()).await;
    let before = fingerprint(&board);
    let hanging = TestServer::new(TestServerOptions::default().hang_list(true));
    let started = Instant::now();
    let err = board
        .add_service(Some("hang".into()), connect(hanging.clone()).await)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::Timeout { ref operation, .. } if operation == "tools/list"),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(fingerprint(&board), before);
}

#[tokio::test]
async fn calls_to_a_dead_service_fail_at_once_with_service_closed() {
    let board = PegBoard::new();
    common::add(&board, "units", UnitsServer::new()).await;
    let server = connect_killable(TestServer::default()).await;
    board
        .add_service(Some("t".into()), server.service)
        .await
        .unwrap();
    assert_eq!(board.services()[1].state, ServiceState::Running);

    server.kill.cancel();
    board.wait_closed(1).await.unwrap();
    assert_eq!(board.services()[1].state, ServiceState::Closed);
    let started = Instant::now();
    let err = board
        .call_tool("t-echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::ServiceClosed { namespace: Some(ref ns) } if ns == "t"),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(err.to_string().contains("`t`"));

    // Other namespaces keep answering; the dead one can be dropped with its tools.
    assert!(board.call_tool("units-list_units", json!({})).await.is_ok());
    assert_eq!(board.remove_closed_services(), [1]);
    assert_eq!(board.list_namespaces(), ["units"]);
}

#[tokio::test]
async fn a_call_in_flight_when_the_service_dies_returns_an_error_quickly() {
    let board = PegBoard::new();
    let test_server = TestServer::default();
    let server = connect_killable(test_server.clone()).await;
    board
        .add_service(Some("t".into()), server.service)
        .await
        .unwrap();
    let call = {
        let board = board.clone();
        tokio::spawn(async move { board.call_tool("t-sleep", json!({"ms": 10_000})).await })
    };
    common::server_until(&test_server, "the call reached the server", |s| {
        s.tool_calls() == 1
    })
    .await;
    let started = Instant::now();
    server.kill.cancel();
    let outcome = call.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        matches!(
            outcome,
            Err(PegBoardError::ServiceClosed { .. } | PegBoardError::ServiceError { .. })
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_tool_added_at_run_time_becomes_callable_without_a_restart() {
    let board = PegBoard::new();
    let (service, options) = connect_watched(TestServer::default()).await;
    board
        .add_service_with(Some("t".into()), service, options)
        .await
        .unwrap();
    let order_before = board.list_all_tools();

    let added = board
        .call_tool("t-add_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    assert_ne!(added.is_error, Some(true), "{added:?}");
    common::until(&board, "t-fresh is on the board", |b| {
        b.get_tool("t-fresh").is_some()
    })
    .await;
    let result = board.call_tool("t-fresh", json!({"k": "v"})).await.unwrap();
    assert!(text(&result).starts_with("fresh called with"), "{result:?}");
    // Unchanged tools keep their names and order; the new one comes last.
    let mut expected = order_before.clone();
    expected.push("t-fresh".to_string());
    assert_eq!(board.list_all_tools(), expected);

    board
        .call_tool("t-remove_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    common::until(&board, "t-fresh is gone", |b| {
        b.get_tool("t-fresh").is_none()
    })
    .await;
    assert_eq!(board.list_all_tools(), order_before);
}

#[tokio::test]
async fn refresh_namespace_swaps_in_the_servers_current_tools() {
    let board = PegBoard::new();
    let server = TestServer::default();
    common::add(&board, "t", server.clone()).await;
    let mut changes = board.subscribe();
    changes.mark_unchanged();

    assert!(server.add_tool_silently("quiet"));
    assert!(server.remove_tool_silently("pid"));
    let report = board.refresh_namespace("t").await.unwrap();
    assert_eq!(report.added, ["t-quiet"]);
    assert_eq!(report.removed, ["t-pid"]);
    assert!(board.get_tool("t-quiet").is_some() && board.get_tool("t-pid").is_none());
    assert!(
        changes.has_changed().unwrap(),
        "subscribers hear of the change"
    );

    let again = board.refresh_namespace("t").await.unwrap();
    assert!(again.is_unchanged());
    assert!(matches!(
        board.refresh_namespace("nope").await,
        Err(PegBoardError::UnknownNamespace { .. })
    ));
}

#[tokio::test]
async fn unregistering_a_namespace_shuts_its_service_down() {
    let board = PegBoard::new();
    let server = connect_killable(TestServer::default()).await;
    board
        .add_service(Some("t".into()), server.service)
        .await
        .unwrap();
    board.unregister_namespace("t").unwrap();
    tokio::time::timeout(Duration::from_secs(1), server.ended)
        .await
        .expect("server side ended")
        .unwrap();
}

#[tokio::test]
async fn dropping_the_board_shuts_its_services_down() {
    let board = PegBoard::new();
    let server = connect_killable(TestServer::default()).await;
    board
        .add_service(Some("t".into()), server.service)
        .await
        .unwrap();
    drop(board);
    tokio::time::timeout(Duration::from_secs(1), server.ended)
        .await
        .expect("server side ended")
        .unwrap();
}

#[tokio::test]
async fn shutdown_closes_every_service_and_empties_the_board() {
    let board = PegBoard::new();
    let a = connect_killable(TestServer::default()).await;
    let b = connect_killable(UnitsServer::new()).await;
    board
        .add_service(Some("a".into()), a.service)
        .await
        .unwrap();
    board
        .add_service(Some("b".into()), b.service)
        .await
        .unwrap();
    let clone = board.clone();
    tokio::time::timeout(Duration::from_secs(2), board.shutdown())
        .await
        .unwrap();
    assert_eq!((clone.tool_count(), clone.service_count()), (0, 0));
    tokio::time::timeout(Duration::from_secs(1), a.ended)
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(1), b.ended)
        .await
        .unwrap()
        .unwrap();
}

#[test]
fn the_runtime_shuts_down_promptly_after_board_use() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let board = PegBoard::new();
        let (service, options) = connect_watched(TestServer::default()).await;
        board
            .add_service_with(Some("t".into()), service, options)
            .await
            .unwrap();
        board
            .call_tool("t-echo", json!({"text": "x"}))
            .await
            .unwrap();
        board.shutdown().await;
    });
    let started = Instant::now();
    runtime.shutdown_timeout(Duration::from_secs(5));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "runtime took {:?} to shut down",
        started.elapsed()
    );
}

#[tokio::test]
async fn wait_closed_resolves_when_the_service_dies() {
    let board = PegBoard::new();
    let server = connect_killable(TestServer::default()).await;
    let added = board
        .add_service_with(Some("t".into()), server.service, Default::default())
        .await
        .unwrap();
    let mut waiting = std::pin::pin!(board.wait_closed(added.index));
    assert!(
        futures::poll!(waiting.as_mut()).is_pending(),
        "the service is alive"
    );
    server.kill.cancel();
    tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("closed within 1 s")
        .unwrap();
    assert_eq!(board.services()[0].state, ServiceState::Closed);
    assert!(matches!(
        board.wait_closed(9).await,
        Err(PegBoardError::UnknownService { index: 9 })
    ));
}
