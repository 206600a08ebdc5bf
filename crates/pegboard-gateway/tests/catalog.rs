//! Prompts, resources and completions through the gateway's handler, in process (issue 9): a
//! real rmcp upstream connected as `pegboard serve` connects servers ([`UpstreamClient`] over a
//! [`ProgressTap`], a [`Hub`]), and a [`BoardServer::session`] per downstream rmcp client, all
//! over tokio duplex pipes. Every wait is on an event, under a deadline that only turns a hang
//! into a failure.
// resources/subscribe and roots are deprecated by SEP-2577 but live in 2025-11-25.
#![allow(deprecated)]

mod common;

use std::{collections::HashMap, sync::Arc, time::Duration};

use pegboard::PegBoard;
use pegboard_gateway::BoardServer;
use rmcp::{
    ClientHandler, ErrorData, Peer, RoleClient, RoleServer, ServerHandler, ServiceError,
    ServiceExt,
    model::{
        ArgumentInfo, CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
        ClientConfig, CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
        ListResourcesResult, ListRootsResult, ListToolsResult, MetaObject, PaginatedRequestParams,
        Prompt, PromptMessage, PromptsCapability, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Reference, Resource, ResourceContents,
        ResourceUpdatedNotificationParam, ResourcesCapability, Role, RootsCapabilities,
        ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, ToolsCapability,
        UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, RunningService},
};
use serde_json::json;
use tokio::sync::{mpsc, watch};

const WAIT: Duration = Duration::from_secs(20);

/// The upstream: a `show` tool whose UI is `ui://widget/a.html` and which links it, resources
/// `file:///a`, `file:///b`, `file:///c` and the widget, a `greet` prompt, completions. It
/// reports every (un)subscribe and read on `events`, and hands out its connection to the
/// gateway so the test can send notifications from it.
#[derive(Clone)]
struct Upstream {
    events: mpsc::UnboundedSender<String>,
    peer: watch::Sender<Option<Peer<RoleServer>>>,
}

const WIDGET: &str = "ui://widget/a.html";
const WIDGET_HTML: &str = "<html>widget</html>";

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        caps.tools = Some(ToolsCapability::default());
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        caps.prompts = Some(prompts);
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        caps.resources = Some(resources);
        caps.completions = Some(Default::default());
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
        let mut meta = MetaObject::new();
        meta.insert("ui".into(), json!({ "resourceUri": WIDGET }));
        let tool =
            Tool::new("show", "shows the widget", Arc::new(Default::default())).with_meta(meta);
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![
            ContentBlock::text(format!("see {WIDGET}")),
            ContentBlock::ResourceLink(Resource::new(WIDGET, "widget")),
        ])
        .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let greet = Prompt::new("greet", Some("says hello"), None);
        Ok(ListPromptsResult::with_all_items(vec![greet]))
    }

    async fn get_prompt(
        &self,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let hello = PromptMessage::new_text(Role::User, "hello");
        Ok(GetPromptResult::new(vec![hello]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = ["file:///a", "file:///b", "file:///c", WIDGET]
            .map(|uri| Resource::new(uri, uri))
            .to_vec();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _ = self.events.send(format!("read {}", request.uri));
        let text = if request.uri == WIDGET {
            WIDGET_HTML.to_string()
        } else {
            format!("contents of {}", request.uri)
        };
        let contents = ResourceContents::text(text, request.uri).with_mime_type("text/html");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _ = self.events.send(format!("subscribe {}", request.uri));
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _ = self.events.send(format!("unsubscribe {}", request.uri));
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values = vec![format!("{}!", request.argument.value)];
        Ok(CompleteResult::new(
            CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }
}

/// A downstream client: every notification it gets, and the gateway asking for its roots
/// (which the gateway does once the session has joined its relay), arrive on `events`.
#[derive(Clone)]
struct Downstream {
    events: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Downstream {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.roots = Some(RootsCapabilities::default());
        ClientConfig::new(caps, rmcp::model::Implementation::new("downstream", "1"))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let _ = self.events.send("roots/list".into());
        Ok(ListRootsResult::new(Vec::new()))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(format!("updated {}", params.uri));
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.events.send("prompts/list_changed".into());
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.events.send("resources/list_changed".into());
    }
}

/// The gateway with `server` on its board as namespace `up`, connected as `pegboard serve`
/// connects servers.
async fn gateway<S: ServerHandler>(server: S) -> BoardServer {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (service, options, _hub) = common::connect_as_gateway(client_io, "up").await;
    let board = PegBoard::new();
    board
        .add_service_with(Some("up".into()), service, options)
        .await
        .expect("registered");
    BoardServer::new(board)
}

/// The gateway with an [`Upstream`], its events, and its connection once initialized.
struct Rig {
    server: BoardServer,
    upstream: mpsc::UnboundedReceiver<String>,
    peer: watch::Receiver<Option<Peer<RoleServer>>>,
}

async fn rig() -> Rig {
    let (events, upstream) = mpsc::unbounded_channel();
    let (peer_tx, peer) = watch::channel(None);
    let server = gateway(Upstream {
        events,
        peer: peer_tx,
    })
    .await;
    Rig {
        server,
        upstream,
        peer,
    }
}

impl Rig {
    /// The upstream's side of the connection to the gateway.
    async fn upstream_peer(&mut self) -> Peer<RoleServer> {
        let peer = tokio::time::timeout(WAIT, self.peer.wait_for(Option::is_some))
            .await
            .expect("the upstream was initialized")
            .expect("the upstream is alive");
        peer.clone().expect("checked")
    }

    async fn next_upstream(&mut self) -> String {
        next(&mut self.upstream).await
    }
}

type Client = RunningService<RoleClient, Downstream>;

/// A downstream session on its own [`BoardServer::session`], returned once it has joined the
/// gateway's relay (the gateway asked for its roots).
async fn session(server: &BoardServer) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.session();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (events, mut seen) = mpsc::unbounded_channel();
    let client = Downstream { events }
        .serve(client_io)
        .await
        .expect("downstream handshake");
    assert_eq!(next(&mut seen).await, "roots/list");
    (client, seen)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("an event arrives")
        .expect("the sender is alive")
}

async fn subscribe(client: &Client, uri: &str) {
    client
        .peer()
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("subscribed");
}

async fn unsubscribe(client: &Client, uri: &str) {
    client
        .peer()
        .unsubscribe(UnsubscribeRequestParams::new(uri))
        .await
        .expect("unsubscribed");
}

async fn updated(peer: &Peer<RoleServer>, uri: &str) {
    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
        .await
        .expect("sent");
}

/// The code and message of a request's error.
fn error_of<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> (i32, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_completions_are_advertised_only_when_an_upstream_has_them() {
    let rig = rig().await;
    let (full, _) = session(&rig.server).await;
    let caps = &full.peer_info().expect("initialized").capabilities;
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert!(caps.completions.is_some(), "{caps:?}");
    let resources = caps.resources.as_ref().expect("resources advertised");
    assert_eq!(resources.subscribe, Some(true));
    assert_eq!(resources.list_changed, Some(true));

    let tools_only = gateway(demo_servers::UnitsServer::new()).await;
    let (client, _) = session(&tools_only).await;
    let caps = &client.peer_info().expect("initialized").capabilities;
    assert!(caps.tools.is_some());
    assert!(
        caps.prompts.is_none() && caps.resources.is_none() && caps.completions.is_none(),
        "{caps:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_resource_is_read_through_the_link_of_the_tool_that_shows_it() {
    let mut rig = rig().await;
    let (client, _) = session(&rig.server).await;
    let shown = "ui://up+widget/a.html";

    let tools = client.peer().list_tools(None).await.expect("listed").tools;
    let show = tools.iter().find(|t| t.name == "up-show").expect("up-show");
    let meta = show.meta.as_ref().expect("_meta kept");
    assert_eq!(meta["ui"]["resourceUri"], shown);

    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("up-show"))
        .await
        .expect("called");
    // The text is the server's words; the link is the board's URI.
    assert_eq!(
        result.content[0].as_text().expect("text").text,
        "see ui://widget/a.html"
    );
    let link = match &result.content[1] {
        ContentBlock::ResourceLink(link) => link.uri.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(link, shown);

    let read = client
        .peer()
        .read_resource(ReadResourceRequestParams::new(link))
        .await
        .expect("read");
    assert_eq!(rig.next_upstream().await, format!("read {WIDGET}"));
    match &read.contents[..] {
        [
            ResourceContents::TextResourceContents {
                uri,
                text,
                mime_type,
                ..
            },
        ] => {
            assert_eq!(uri, shown);
            assert_eq!(text, WIDGET_HTML);
            assert_eq!(mime_type.as_deref(), Some("text/html"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_update_reaches_only_the_sessions_subscribed_to_it() {
    let mut rig = rig().await;
    let upstream = rig.upstream_peer().await;
    let (a, mut a_seen) = session(&rig.server).await;
    let (b, mut b_seen) = session(&rig.server).await;
    subscribe(&a, "up+file:///a").await;
    subscribe(&b, "up+file:///b").await;

    updated(&upstream, "file:///a").await;
    assert_eq!(next(&mut a_seen).await, "updated up+file:///a");
    updated(&upstream, "file:///b").await;
    // B's first update is its own: it never got A's.
    assert_eq!(next(&mut b_seen).await, "updated up+file:///b");
    updated(&upstream, "file:///a").await;
    // A's next one is A's again: it never got B's.
    assert_eq!(next(&mut a_seen).await, "updated up+file:///a");
    // An update of a resource nobody holds goes nowhere; then both get a shared one.
    updated(&upstream, "file:///c").await;
    subscribe(&b, "up+file:///a").await;
    updated(&upstream, "file:///a").await;
    assert_eq!(next(&mut a_seen).await, "updated up+file:///a");
    assert_eq!(next(&mut b_seen).await, "updated up+file:///a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_share_one_upstream_subscription_which_ends_with_its_last_subscriber() {
    let mut rig = rig().await;
    let (a, _a_seen) = session(&rig.server).await;
    let (b, _b_seen) = session(&rig.server).await;

    subscribe(&a, "up+file:///a").await;
    assert_eq!(rig.next_upstream().await, "subscribe file:///a");
    subscribe(&b, "up+file:///a").await;
    subscribe(&b, "up+file:///b").await;
    // B's subscription to a asked the upstream nothing: the next thing it saw is b.
    assert_eq!(rig.next_upstream().await, "subscribe file:///b");

    unsubscribe(&a, "up+file:///a").await;
    unsubscribe(&b, "up+file:///b").await;
    // A left a while B holds it: the upstream is still subscribed.
    assert_eq!(rig.next_upstream().await, "unsubscribe file:///b");
    unsubscribe(&b, "up+file:///a").await;
    assert_eq!(rig.next_upstream().await, "unsubscribe file:///a");

    // A session that ends takes its subscriptions with it.
    subscribe(&a, "up+file:///c").await;
    assert_eq!(rig.next_upstream().await, "subscribe file:///c");
    a.cancel().await.expect("a closed");
    assert_eq!(rig.next_upstream().await, "unsubscribe file:///c");
    assert!(rig.upstream.try_recv().is_err(), "nothing else upstream");
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_uris_that_name_nothing_are_invalid_params_with_the_way_out() {
    let mut rig = rig().await;
    let (client, _) = session(&rig.server).await;
    let peer = client.peer();

    let (code, message) = error_of(
        peer.get_prompt(GetPromptRequestParams::new("up-gret"))
            .await,
    );
    assert_eq!(code, -32602);
    assert!(message.contains("did you mean `up-greet`"), "{message}");

    let (code, message) = error_of(
        peer.read_resource(ReadResourceRequestParams::new("nope+file:///x"))
            .await,
    );
    assert_eq!(code, -32602);
    assert!(message.contains("`up+`"), "{message}");

    let (code, message) = error_of(
        peer.complete(CompleteRequestParams::new(
            Reference::for_prompt("up-gret"),
            ArgumentInfo::new("name", "x"),
        ))
        .await,
    );
    assert_eq!(code, -32602);
    assert!(message.contains("up-greet"), "{message}");

    let (code, _) = error_of(
        peer.subscribe(SubscribeRequestParams::new("file:///a"))
            .await,
    );
    assert_eq!(code, -32602);

    // The right names work, completions reach the upstream.
    let got = peer
        .get_prompt(GetPromptRequestParams::new("up-greet"))
        .await
        .expect("prompt");
    assert_eq!(got.messages.len(), 1);
    let done = peer
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("up-greet"),
            ArgumentInfo::new("name", "x"),
        ))
        .await
        .expect("completed");
    assert_eq!(done.completion.values, ["x!"]);
    assert!(
        rig.upstream.try_recv().is_err(),
        "nothing was read upstream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_and_resource_list_changes_reach_every_session_that_listed_them() {
    let mut rig = rig().await;
    let upstream = rig.upstream_peer().await;
    let (a, mut a_seen) = session(&rig.server).await;
    let (b, mut b_seen) = session(&rig.server).await;
    // A session is told about lists it was answered (its first listing is current anyway).
    for client in [&a, &b] {
        client.peer().list_all_prompts().await.expect("prompts");
        client.peer().list_all_resources().await.expect("resources");
    }

    upstream.notify_prompt_list_changed().await.expect("sent");
    upstream.notify_resource_list_changed().await.expect("sent");
    // Notification handlers run on tasks of their own: the order of the two is not kept.
    for seen in [&mut a_seen, &mut b_seen] {
        let mut got = HashMap::new();
        for _ in 0..2 {
            *got.entry(next(seen).await).or_insert(0) += 1;
        }
        assert_eq!(
            got,
            HashMap::from([
                ("prompts/list_changed".to_string(), 1),
                ("resources/list_changed".to_string(), 1)
            ])
        );
    }
}

/// The gateway with `server` connected as `pegboard serve` connects an HTTP entry of its
/// config (`connect::connect`, then `connect::register`), under `namespace` (`None`: the
/// entry's `"prefix": false`).
async fn gateway_over_http(
    server: Upstream,
    namespace: Option<&str>,
) -> (BoardServer, demo_servers::serve::HttpHandle) {
    let http = demo_servers::serve::spawn_http(server, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serving");
    let config = pegboard_gateway::config::ServerConfig {
        name: "plain".into(),
        namespace: namespace.map(str::to_string),
        transport: pegboard_gateway::config::Transport::Http {
            url: http.url(),
            headers: Default::default(),
            oauth: Default::default(),
        },
        allow: None,
        deny: Vec::new(),
        timeout: None,
        max_message: None,
        session: Default::default(),
        guards: Default::default(),
    };
    let board = PegBoard::new();
    let connection = pegboard_gateway::testing::connect(&config, WAIT)
        .await
        .expect("connected");
    pegboard_gateway::testing::register(&board, &config, connection)
        .await
        .expect("registered");
    (BoardServer::new(board), http)
}

/// Read and subscribe to `file:///a` of an HTTP upstream under `namespace`, shown as `shown`;
/// the upstream's update reaches the subscriber under the same URI.
async fn read_and_follow_over_http(namespace: Option<&str>, shown: &str) {
    let (events, mut upstream) = mpsc::unbounded_channel();
    let (peer_tx, mut peer) = watch::channel(None);
    let server = Upstream {
        events,
        peer: peer_tx,
    };
    let (gateway, _http) = gateway_over_http(server, namespace).await;
    let (client, mut seen) = session(&gateway).await;

    let read = client
        .peer()
        .read_resource(ReadResourceRequestParams::new(shown))
        .await
        .expect("read");
    assert_eq!(next(&mut upstream).await, "read file:///a");
    match &read.contents[..] {
        [ResourceContents::TextResourceContents { uri, .. }] => assert_eq!(uri, shown),
        other => panic!("{other:?}"),
    }

    subscribe(&client, shown).await;
    assert_eq!(next(&mut upstream).await, "subscribe file:///a");
    let up = tokio::time::timeout(WAIT, peer.wait_for(Option::is_some))
        .await
        .expect("initialized")
        .expect("alive")
        .clone()
        .expect("checked");
    updated(&up, "file:///a").await;
    assert_eq!(next(&mut seen).await, format!("updated {shown}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstream_s_resource_updates_reach_its_subscriber() {
    read_and_follow_over_http(Some("web"), "web+file:///a").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_without_prefix_has_its_resources_verbatim_and_updates_reach_subscribers() {
    read_and_follow_over_http(None, "file:///a").await;
}
