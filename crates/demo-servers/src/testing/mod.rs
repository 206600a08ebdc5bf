//! `TestServer`: a configurable MCP server for liveness, pagination, cancellation and
//! list_changed tests, written as a manual [`ServerHandler`] with a dynamic tool list.

use std::{
    sync::{
        Arc, RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::common::schema_for_type,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
        ServerConfig, Tool,
    },
    service::RequestContext,
};
use schemars::JsonSchema;
use serde::Deserialize;

mod handler;
pub mod inproc;
mod mrtr;
mod options;
mod parity;
pub mod redis;
mod vendor;

pub use options::TestServerOptions;
pub use parity::Faults;
pub use vendor::vendor_tools;

/// Server info name reported by [`TestServer`].
pub const TEST_SERVER_NAME: &str = "pegboard-test-server";

/// Names of the built-in tools, in listing order.
pub const BASE_TOOLS: &[&str] = &["echo", "sleep", "crash", "add_tool", "remove_tool", "pid"];

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// Text to send back unchanged.
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct HugeArgs {
    /// How many bytes of text to answer with.
    bytes: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NameArgs {
    /// Tool name.
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Echo,
    Sleep,
    Crash,
    AddTool,
    RemoveTool,
    Pid,
    /// `tool_NNNN` from `extra_tools`: echoes its name.
    Extra,
    /// Added at run time with `add_tool`.
    Dynamic,
    /// `huge` (with `huge_tool`): a text of the size asked for.
    Huge,
    /// `huge_listing` (with `huge_list`): only there to make the listing big.
    Listing,
    /// `ask` (with `ask_tool`): asks the client with `input_required` (see `mrtr.rs`).
    Ask,
    /// `echo_meta` (with `parity_tools`): answers with the request's `_meta` (see `parity.rs`).
    EchoMeta,
    /// `progress` (with `parity_tools`): sends the progress values asked for.
    Progress,
    /// `malformed` (with `parity_tools`): answered by [`Faults`] (see `parity.rs`).
    Malformed,
}

#[derive(Debug, Clone)]
struct Entry {
    tool: Tool,
    kind: Kind,
}

#[derive(Debug)]
struct Counters {
    cancelled: AtomicUsize,
    list_calls: AtomicUsize,
    tool_calls: AtomicUsize,
    /// How many of the next `tools/list` requests fail.
    failing_lists: AtomicUsize,
    /// Bumped on every request and cancellation, so tests wait on events, not on sleeps.
    events: tokio::sync::watch::Sender<u64>,
    /// While true, `tools/list` requests wait (after counting) until it turns false.
    lists_paused: tokio::sync::watch::Sender<bool>,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            cancelled: AtomicUsize::new(0),
            list_calls: AtomicUsize::new(0),
            tool_calls: AtomicUsize::new(0),
            failing_lists: AtomicUsize::new(0),
            events: tokio::sync::watch::Sender::new(0),
            lists_paused: tokio::sync::watch::Sender::new(false),
        }
    }
}

/// A configurable MCP test server (server info name `pegboard-test-server`).
///
/// Clones share the tool list and counters, so a test can keep a clone to inspect
/// [`cancelled_count`](Self::cancelled_count) after serving another clone.
/// It advertises the tools capability with `listChanged: true`.
///
/// Tools: `echo {text}`, `sleep {ms}`, `crash {}`, `add_tool {name}`, `remove_tool {name}`,
/// `pid {}`, plus `tool_0000`.. (see [`TestServerOptions::extra_tools`]) and any added tools.
#[derive(Debug, Clone)]
pub struct TestServer {
    options: Arc<TestServerOptions>,
    tools: Arc<RwLock<Vec<Entry>>>,
    counters: Arc<Counters>,
}

impl Default for TestServer {
    fn default() -> Self {
        Self::new(TestServerOptions::default())
    }
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_type::<T>()
}

fn text(s: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(s.into())]).into()
}

fn tool_error(s: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(s.into())]).into()
}

fn parse<T: serde::de::DeserializeOwned>(args: &JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(serde_json::Value::Object(args.clone()))
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl TestServer {
    /// Builds a server with the base tools plus `options.extra_tools` extra tools.
    pub fn new(options: TestServerOptions) -> Self {
        let base = [
            (
                "echo",
                "Echo: returns the given text unchanged.",
                schema::<EchoArgs>(),
                Kind::Echo,
            ),
            (
                "sleep",
                "Sleep for `ms` milliseconds, then return \"slept N ms\". Returns early with an error if the request is cancelled (cancellations are counted).",
                schema::<SleepArgs>(),
                Kind::Sleep,
            ),
            (
                "crash",
                "Crash the server process (exit code 3). In-process servers return a tool error instead.",
                schema::<NoArgs>(),
                Kind::Crash,
            ),
            (
                "add_tool",
                "Add a tool named `name` (it echoes its name and arguments) and send notifications/tools/list_changed.",
                schema::<NameArgs>(),
                Kind::AddTool,
            ),
            (
                "remove_tool",
                "Remove the tool named `name` and send notifications/tools/list_changed.",
                schema::<NameArgs>(),
                Kind::RemoveTool,
            ),
            (
                "pid",
                "Return the server's process id.",
                schema::<NoArgs>(),
                Kind::Pid,
            ),
        ];
        let mut tools: Vec<Entry> = base
            .into_iter()
            .map(|(name, desc, schema, kind)| Entry {
                tool: Tool::new(name, desc, schema),
                kind,
            })
            .collect();
        for i in 0..options.extra_tools {
            let name = format!("tool_{i:04}");
            tools.push(Entry {
                tool: Tool::new(
                    name.clone(),
                    format!("Extra tool #{i}: returns its own name ({name})."),
                    schema::<NoArgs>(),
                ),
                kind: Kind::Extra,
            });
        }
        if options.huge_tool {
            tools.push(Entry {
                tool: Tool::new(
                    "huge",
                    "Answer with a text of `bytes` bytes (for message size limits).",
                    schema::<HugeArgs>(),
                ),
                kind: Kind::Huge,
            });
        }
        if options.huge_list > 0 {
            tools.push(Entry {
                tool: Tool::new(
                    "huge_listing",
                    "d".repeat(options.huge_list),
                    schema::<NoArgs>(),
                ),
                kind: Kind::Listing,
            });
        }
        if options.ask_tool {
            tools.push(mrtr::entry());
        }
        if options.parity_tools {
            tools.extend(parity::entries());
        }
        Self {
            options: Arc::new(options),
            tools: Arc::new(RwLock::new(tools)),
            counters: Arc::default(),
        }
    }

    /// The options this server was built with.
    pub fn options(&self) -> &TestServerOptions {
        &self.options
    }

    /// How many `sleep` calls ended because their request was cancelled
    /// (shared by all clones).
    pub fn cancelled_count(&self) -> usize {
        self.counters.cancelled.load(Ordering::SeqCst)
    }

    /// How many `tools/list` requests were received (shared by all clones).
    pub fn list_calls(&self) -> usize {
        self.counters.list_calls.load(Ordering::SeqCst)
    }

    /// How many `tools/call` requests were received (shared by all clones).
    pub fn tool_calls(&self) -> usize {
        self.counters.tool_calls.load(Ordering::SeqCst)
    }

    /// The names of the current tools, in listing order.
    pub fn tool_names(&self) -> Vec<String> {
        self.read()
            .iter()
            .map(|e| e.tool.name.to_string())
            .collect()
    }

    /// Adds a dynamic tool without sending any notification. Returns false if the name is taken
    /// or invalid.
    pub fn add_tool_silently(&self, name: &str) -> bool {
        if !valid_tool_name(name) {
            return false;
        }
        let mut tools = self.write();
        if tools.iter().any(|e| e.tool.name == name) {
            return false;
        }
        tools.push(Entry {
            tool: Tool::new(
                name.to_string(),
                format!("Dynamically added tool {name}: echoes \"{name} called with ARGS\"."),
                Arc::new(JsonObject::from_iter([
                    ("type".to_string(), serde_json::json!("object")),
                    ("additionalProperties".to_string(), serde_json::json!(true)),
                ])),
            ),
            kind: Kind::Dynamic,
        });
        true
    }

    /// Make the next `n` `tools/list` requests fail with an internal error.
    pub fn fail_next_lists(&self, n: usize) {
        self.counters.failing_lists.store(n, Ordering::SeqCst);
    }

    /// Hold (`true`) or release (`false`) every `tools/list` request; held requests are counted
    /// on arrival (see [`wait_for_list_calls`](Self::wait_for_list_calls)) and answered on release.
    pub fn pause_lists(&self, paused: bool) {
        self.counters.lists_paused.send_replace(paused);
    }

    /// Resolves once `n` `tools/list` requests have arrived in all.
    pub async fn wait_for_list_calls(&self, n: usize) {
        self.wait_until(|server| server.list_calls() >= n).await;
    }

    /// Resolves once `n` `tools/call` requests have arrived in all.
    pub async fn wait_for_tool_calls(&self, n: usize) {
        self.wait_until(|server| server.tool_calls() >= n).await;
    }

    /// Resolves once `check` holds; checked again on every request and cancellation.
    pub async fn wait_until(&self, check: impl Fn(&Self) -> bool) {
        let mut events = self.counters.events.subscribe();
        while !check(self) {
            if events.changed().await.is_err() {
                return;
            }
        }
    }

    /// Count a `tools/call` (for [`wait_for_tool_calls`](Self::wait_for_tool_calls)).
    fn count_call(&self) {
        self.counters.tool_calls.fetch_add(1, Ordering::SeqCst);
        self.event();
    }

    fn event(&self) {
        self.counters.events.send_modify(|n| *n += 1);
    }

    /// Replace a tool's description and input schema without sending any notification
    /// (the tool keeps its name and behaviour). Returns false if there is no such tool.
    pub fn redefine_tool_silently(
        &self,
        name: &str,
        description: &str,
        schema: JsonObject,
    ) -> bool {
        let mut tools = self.write();
        let Some(entry) = tools.iter_mut().find(|e| e.tool.name == name) else {
            return false;
        };
        entry.tool.description = Some(description.to_string().into());
        entry.tool.input_schema = Arc::new(schema);
        true
    }

    /// Removes a tool without sending any notification. Returns false if there was none.
    pub fn remove_tool_silently(&self, name: &str) -> bool {
        let mut tools = self.write();
        let before = tools.len();
        tools.retain(|e| e.tool.name != name);
        tools.len() != before
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Entry>> {
        self.tools.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Entry>> {
        self.tools.write().unwrap_or_else(|e| e.into_inner())
    }

    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
        let tools = self.read();
        let cursor = cursor.filter(|_| !self.options.stuck_cursor);
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|s| *s <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("bad cursor {c:?}"), None))?,
        };
        let end = if self.options.page_size == 0 {
            tools.len()
        } else {
            (start + self.options.page_size).min(tools.len())
        };
        let mut result = ListToolsResult::with_all_items(
            tools[start..end].iter().map(|e| e.tool.clone()).collect(),
        );
        if end < tools.len() {
            result.next_cursor = Some(if self.options.stuck_cursor {
                self.options.page_size.to_string()
            } else {
                end.to_string()
            });
        }
        Ok(result)
    }

    async fn notify_changed(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
        context.peer.notify_tool_list_changed().await.map_err(|e| {
            ErrorData::internal_error(format!("cannot notify list_changed: {e}"), None)
        })
    }
}
