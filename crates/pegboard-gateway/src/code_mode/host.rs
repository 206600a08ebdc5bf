//! The gateway as code mode's [`ToolHost`]: every call a script makes is a `tools/call` through
//! the one call pipeline, as the client of the `run_code` request (its visible tools, limits,
//! pins, result caps, metrics, spans, audit lines), cancelled with it.

use pegboard_codemode::{CallFuture, CallRecord, DoneFuture, ToolEntry, ToolHost, ToolReply};
use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ProgressNotificationParam,
        ProgressToken,
    },
    service::RequestContext,
};
use serde_json::Value;

use crate::call::pipeline;
use crate::server::BoardServer;
use crate::telemetry::TraceContext;

/// One `run_code`'s way to the pipeline.
pub(crate) struct GatewayHost<'a> {
    pub(crate) server: &'a BoardServer,
    /// The `run_code` request's context, without its progress token: the inner calls' own
    /// progress is not the run's (the run reports a step per finished call instead).
    pub(crate) context: RequestContext<RoleServer>,
    /// The run's progress token, when the request had one.
    pub(crate) progress: Option<ProgressToken>,
}

impl<'a> GatewayHost<'a> {
    /// The host of the run of the request in `context`; its calls' spans are children of
    /// `parent` (the run's span: see `watch.rs`).
    pub(crate) fn new(
        server: &'a BoardServer,
        context: &RequestContext<RoleServer>,
        parent: Option<&TraceContext>,
    ) -> Self {
        let mut context = context.clone();
        let progress = context.meta.get_progress_token();
        context.meta.0.0.remove("progressToken");
        // The pipeline reads a call's trace context from its `_meta` first.
        if let Some(parent) = parent {
            parent.write_meta(&mut context.meta.0.0);
        }
        Self {
            server,
            context,
            progress,
        }
    }
}

impl ToolHost for GatewayHost<'_> {
    fn tools(&self) -> Vec<ToolEntry> {
        let board = self.server.board();
        let client = self.server.client_of(&self.context);
        let mut names = board.list_all_tools();
        if !client.sees_everything() {
            client.view(board).retain_tools(&mut names, |name| name);
        }
        names
            .iter()
            .map(|name| super::meta::tool_entry(board, name))
            .collect()
    }

    fn call<'b>(&'b self, name: &'b str, arguments: Value) -> CallFuture<'b> {
        Box::pin(async move {
            let mut request = CallToolRequestParams::new(name.to_string());
            request.arguments = match arguments {
                Value::Object(map) => Some(map),
                _ => None,
            };
            let caller = self.server.code_caller(&self.context);
            let answer =
                pipeline::call_tool(self.server.board(), request, &self.context, &caller).await;
            match answer {
                Ok(CallToolResponse::Complete(result)) => reply(result),
                Ok(_) => ToolReply::Error(format!(
                    "`{name}` asked for input or started a task, which a script cannot answer: call it directly"
                )),
                Err(error) => ToolReply::Error(error.message.to_string()),
            }
        })
    }

    fn finished<'b>(&'b self, record: &'b CallRecord, done: usize) -> DoneFuture<'b> {
        Box::pin(async move {
            let Some(token) = self.progress.clone() else {
                return;
            };
            let mut progress = ProgressNotificationParam::new(token, done as f64);
            progress.message = Some(format!(
                "{} {} ({} ms)",
                record.name,
                if record.ok { "ok" } else { "failed" },
                record.ms
            ));
            // A client gone is the run's cancellation, seen elsewhere.
            let _ = self.context.peer.notify_progress(progress).await;
        })
    }
}

/// A tool's result as the script sees it: `structuredContent` when present, else the text of
/// its text blocks; `isError` is a `ToolError` with that text.
fn reply(result: CallToolResult) -> ToolReply {
    let text = || {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        let message = text();
        return ToolReply::Error(if message.is_empty() {
            "the tool reported an error".to_string()
        } else {
            message
        });
    }
    match &result.structured_content {
        Some(value) => ToolReply::Value(value.clone()),
        None => ToolReply::Value(Value::String(text())),
    }
}
