//! Resource subscriptions through the gateway under races and restarts (issue 9): a real rmcp
//! upstream connected as `pegboard serve` connects servers, downstream rmcp clients on
//! [`BoardServer::session`]s, all over tokio duplex pipes. Waits are on events under a deadline
//! that only turns a hang into a failure.
// resources/subscribe is deprecated by SEP-2577 but lives in 2025-11-25.
#![allow(deprecated)]

mod common;

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, ClientServiceExt, ErrorData, Peer, RoleClient, RoleServer, ServerHandler,
    ServiceExt,
    model::{
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, Resource,
        ResourceUpdatedNotificationParam, ResourcesCapability, ServerCapabilities, ServerConfig,
        ServerNotification, SubscribeRequestParams, SubscriptionFilter, ToolsCapability,
        UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, RunningService},
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(20);
/// How long a test gives a session's request to overtake another one's, to catch the races
/// these tests are about. Not a synchronisation: the fixed gateway passes whatever happens in it.
const WINDOW: Duration = Duration::from_millis(300);
/// A resource whose upstream subscription always fails.
const FAIL: &str = "file:///fail";

/// The upstream: it reports every (un)subscribe on `events` (a successful subscribe once it
/// is recorded, the others when they arrive), holds each unsubscribe and each subscribe to
/// [`FAIL`] until `release` is true, and keeps the set of resources it is subscribed to,
/// updated before it answers.
#[derive(Clone)]
struct Upstream {
    events: mpsc::UnboundedSender<String>,
    peer: watch::Sender<Option<Peer<RoleServer>>>,
    release: watch::Receiver<bool>,
    subscribed: Arc<Mutex<HashSet<String>>>,
}

impl Upstream {
    async fn held(&self) {
        let mut release = self.release.clone();
        let _ = release.wait_for(|released| *released).await;
    }
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        caps.tools = Some(ToolsCapability::default());
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        caps.resources = Some(resources);
        ServerConfig::new(caps)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peer.send_replace(Some(context.peer));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Vec::new()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = ["file:///a", FAIL].map(|uri| Resource::new(uri, uri));
        Ok(ListResourcesResult::with_all_items(resources.to_vec()))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri == FAIL {
            let _ = self.events.send(format!("subscribe {}", request.uri));
            self.held().await;
            return Err(ErrorData::invalid_params("no subscriptions to that", None));
        }
        self.subscribed
            .lock()
            .expect("lock")
            .insert(request.uri.clone());
        let _ = self.events.send(format!("subscribe {}", request.uri));
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _ = self.events.send(format!("unsubscribe {}", request.uri));
        self.held().await;
        self.subscribed.lock().expect("lock").remove(&request.uri);
        Ok(())
    }
}

/// One upstream instance and what the test sees of it.
struct Instance {
    /// Ends the instance's connection, as a dying process does.
    stop: CancellationToken,
    events: mpsc::UnboundedReceiver<String>,
    peer: watch::Receiver<Option<Peer<RoleServer>>>,
    release: watch::Sender<bool>,
    subscribed: Arc<Mutex<HashSet<String>>>,
}

impl Instance {
    async fn next(&mut self) -> String {
        next(&mut self.events).await
    }

    async fn peer(&mut self) -> Peer<RoleServer> {
        let peer = tokio::time::timeout(WAIT, self.peer.wait_for(Option::is_some))
            .await
            .expect("the upstream was initialized")
            .expect("the upstream is alive");
        peer.clone().expect("checked")
    }

    fn holds(&self, uri: &str) -> bool {
        self.subscribed.lock().expect("lock").contains(uri)
    }
}

/// Start an upstream instance (its held requests released or not) and put it on `board` as
/// namespace `up`, connected as `pegboard serve` connects servers.
async fn start(board: &PegBoard, released: bool) -> Instance {
    let (events_tx, events) = mpsc::unbounded_channel();
    let (peer_tx, peer) = watch::channel(None);
    let (release, release_rx) = watch::channel(released);
    let subscribed = Arc::new(Mutex::new(HashSet::new()));
    let server = Upstream {
        events: events_tx,
        peer: peer_tx,
        release: release_rx,
        subscribed: subscribed.clone(),
    };
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let ct = running.cancellation_token();
            tokio::spawn(async move {
                stopped.cancelled().await;
                ct.cancel();
            });
            let _ = running.waiting().await;
        }
    });
    let (service, options, hub) = common::connect_as_gateway(client_io, "up").await;
    // As `connect::register` does: the gateway speaks 2026-07-28 only when its servers do.
    hub.learn_versions(service.peer()).await;
    board
        .add_service_with(Some("up".into()), service, options)
        .await
        .expect("registered");
    Instance {
        stop,
        events,
        peer,
        release,
        subscribed,
    }
}

/// A downstream client that reports the resource updates it gets.
#[derive(Clone)]
struct Downstream {
    events: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Downstream {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(format!("updated {}", params.uri));
    }
}

type Client = RunningService<RoleClient, Downstream>;

async fn session(server: &BoardServer) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (events, seen) = mpsc::unbounded_channel();
    let client = Downstream { events }
        .serve(client_io)
        .await
        .expect("downstream handshake");
    (client, seen)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("an event arrives")
        .expect("the sender is alive")
}

fn subscribing(client: &Client, uri: &str) -> tokio::task::JoinHandle<bool> {
    let peer = client.peer().clone();
    let request = SubscribeRequestParams::new(uri);
    tokio::spawn(async move { peer.subscribe(request).await.is_ok() })
}

async fn joined<T>(task: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(WAIT, task)
        .await
        .expect("answered")
        .expect("the task ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_joining_a_failing_first_subscribe_is_told_it_failed() {
    let board = PegBoard::new();
    let mut up = start(&board, false).await;
    let server = BoardServer::new(board);
    let (a, _) = session(&server).await;
    let (b, _) = session(&server).await;

    let first = subscribing(&a, "up+file:///fail");
    assert_eq!(up.next().await, "subscribe file:///fail");
    let mut second = subscribing(&b, "up+file:///fail");
    // B must not be answered while the only upstream attempt is undecided.
    if let Ok(answered) = tokio::time::timeout(WINDOW, &mut second).await {
        panic!("B was answered before the upstream decided: {answered:?}");
    }
    up.release.send_replace(true);
    assert!(!joined(first).await, "A's subscribe failed upstream");
    assert!(!joined(second).await, "B is not subscribed either");
    // B asked the upstream itself once A's attempt failed.
    assert_eq!(up.next().await, "subscribe file:///fail");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_racing_the_last_unsubscribe_leaves_the_upstream_subscribed() {
    let board = PegBoard::new();
    let mut up = start(&board, false).await;
    let server = BoardServer::new(board);
    let (a, _) = session(&server).await;
    let (b, _) = session(&server).await;

    assert!(joined(subscribing(&a, "up+file:///a")).await);
    assert_eq!(up.next().await, "subscribe file:///a");
    let leaving = {
        let peer = a.peer().clone();
        tokio::spawn(async move {
            peer.unsubscribe(UnsubscribeRequestParams::new("up+file:///a"))
                .await
                .is_ok()
        })
    };
    assert_eq!(up.next().await, "unsubscribe file:///a");
    let joining = subscribing(&b, "up+file:///a");
    // B's subscribe must wait for A's unsubscribe to be done upstream.
    if let Ok(event) = tokio::time::timeout(WINDOW, up.events.recv()).await {
        panic!("the upstream saw {event:?} while an unsubscribe was in flight");
    }
    up.release.send_replace(true);
    assert!(joined(leaving).await);
    assert!(joined(joining).await);
    assert_eq!(up.next().await, "subscribe file:///a");
    assert!(up.holds("file:///a"), "the upstream ends subscribed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_is_subscribed_again_and_its_updates_reach_the_subscriber() {
    let board = PegBoard::new();
    let mut before = start(&board, true).await;
    let server = BoardServer::new(board.clone());
    let (a, mut a_seen) = session(&server).await;
    let (_b, _) = session(&server).await;
    assert!(joined(subscribing(&a, "up+file:///a")).await);
    assert_eq!(before.next().await, "subscribe file:///a");

    // The restart, as the supervisor does it: the dead connection goes, a new one comes.
    before.stop.cancel();
    board.remove_service(0).expect("removed");
    let mut after = start(&board, true).await;
    assert_eq!(after.next().await, "subscribe file:///a");
    assert!(after.holds("file:///a"));

    let peer = after.peer().await;
    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new("file:///a"))
        .await
        .expect("sent");
    assert_eq!(next(&mut a_seen).await, "updated up+file:///a");
    // Two sessions' watchers saw the change; the upstream was subscribed once.
    assert!(after.events.try_recv().is_err(), "nothing else upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_s_resource_is_subscribed_again_after_a_restart() {
    let board = PegBoard::new();
    let mut before = start(&board, true).await;
    let server = BoardServer::new(board.clone());
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ()
        .serve_with_lifecycle(
            client_io,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discovered");
    let filter = SubscriptionFilter::builder()
        .resource_subscription("up+file:///a")
        .build();
    let mut stream = client.peer().listen(filter).await.expect("listening");
    assert_eq!(before.next().await, "subscribe file:///a");

    before.stop.cancel();
    board.remove_service(0).expect("removed");
    let mut after = start(&board, true).await;
    assert_eq!(after.next().await, "subscribe file:///a");

    let peer = after.peer().await;
    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new("file:///a"))
        .await
        .expect("sent");
    // The stream also carries the board's tools/list_changed of the restart.
    loop {
        let notification = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("a notification arrives")
            .expect("the stream is alive")
            .expect("the stream is open");
        if let ServerNotification::ResourceUpdatedNotification(updated) = notification {
            assert_eq!(updated.params.uri, "up+file:///a");
            break;
        }
    }
}
