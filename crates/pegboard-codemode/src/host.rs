//! [`ToolHost`]: how a run reaches tools (the gateway implements it over its call pipeline).

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use crate::names::ToolEntry;

/// A tool call's answer as the script sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    /// The tool's `structuredContent` when it gives one, else the text of its text blocks (a
    /// JSON string).
    Value(serde_json::Value),
    /// The tool failed (`isError`, or a protocol error such as an unknown tool): the script
    /// gets a `ToolError` with this message.
    Error(String),
}

/// A boxed future of a [`ToolHost`] call.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = ToolReply> + Send + 'a>>;

/// A boxed future of [`ToolHost::finished`].
pub type DoneFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// What runs a script's tool calls.
pub trait ToolHost: Send + Sync {
    /// The tools the script may reach as `tools.<ns>.<name>` (what the caller sees).
    fn tools(&self) -> Vec<ToolEntry>;

    /// Call the tool named `name` (a board name) with `arguments` (a JSON object, from
    /// `JSON.stringify` of what the script passed). Dropping the future cancels the call.
    fn call<'a>(&'a self, name: &'a str, arguments: serde_json::Value) -> CallFuture<'a>;

    /// A call ended; `done` calls have ended so far (for progress notifications). The run's
    /// next reply waits for it, so what it sends keeps the calls' order.
    fn finished<'a>(&'a self, _record: &'a CallRecord, _done: usize) -> DoneFuture<'a> {
        Box::pin(async {})
    }
}

/// One tool call a run made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallRecord {
    /// The board name as the script gave it.
    pub name: String,
    /// How long the call took, from leaving its queue to its answer.
    pub ms: u64,
    /// Whether it answered a value (not a `ToolError`).
    pub ok: bool,
}

impl CallRecord {
    #[cfg(feature = "engine")]
    pub(crate) fn new(name: String, took: std::time::Duration, ok: bool) -> Self {
        Self {
            name,
            ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            ok,
        }
    }
}
