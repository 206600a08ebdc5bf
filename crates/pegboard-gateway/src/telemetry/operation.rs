//! The handles the call pipeline holds while a request is under way: one per downstream request
//! ([`ServerOperation`]), one per upstream request ([`ClientOperation`]). Each records its
//! metrics (and ends its span) when finished, or, if dropped unfinished (the request's future was
//! cancelled), as `cancelled`. A session's handle is [`super::SessionGuard`].

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::Context;

use super::labels::{ErrorType, Method};
use super::metrics::{ToolCallGroups, ToolMemo};
use super::request_info::{RequestInfo, UpstreamInfo};
use super::series::OpGroup;
use super::shared::Core;
use super::spans::{self, SpanFacts};
use super::trace_context::TraceContext;

/// Where an operation records: a group of its own, or one of a routed `tools/call`'s two (found
/// together, held by one reference: a call takes and gives back one count, not three).
#[derive(Debug, Clone)]
enum Series {
    Own(Arc<OpGroup>),
    ToolCall(Arc<ToolCallGroups>),
}

impl Series {
    /// The group a downstream request records into.
    fn server(&self) -> &OpGroup {
        match self {
            Series::Own(group) => group,
            Series::ToolCall(groups) => &groups.server,
        }
    }

    /// The group an upstream request records into.
    fn client(&self) -> &OpGroup {
        match self {
            Series::Own(group) => group,
            Series::ToolCall(groups) => &groups.client,
        }
    }
}

/// A downstream request under way.
#[derive(Debug)]
#[must_use = "finish it with the outcome; dropped unfinished it counts as cancelled"]
pub struct ServerOperation {
    core: Arc<Core>,
    series: Series,
    start: Instant,
    span: Option<Context>,
    done: bool,
}

impl ServerOperation {
    pub(crate) fn start(core: &Arc<Core>, info: &RequestInfo<'_>) -> Self {
        let start = info.started.unwrap_or_else(Instant::now);
        let method = info.method;
        let metrics = &core.metrics;
        let series = match (method, info.tool, info.server, info.original, info.via) {
            (Method::ToolsCall, Some(tool), Some(server), Some(original), None) => {
                Series::ToolCall(metrics.tool_call_groups(
                    tool,
                    original,
                    server,
                    info.client,
                    info.memo,
                ))
            }
            // A script's call has series of its own (`pegboard_caller`), looked up apart.
            (.., Some(via)) => Series::Own(metrics.server_group_via(
                method,
                info.tool,
                info.server,
                info.client,
                via,
            )),
            _ => Series::Own(metrics.server_group(method, info.tool, info.server, info.client)),
        };
        metrics.call_started();
        let span = core.tracer().map(|tracer| Self::start_span(tracer, info));
        Self {
            core: Arc::clone(core),
            series,
            start,
            span,
            done: false,
        }
    }

    // Spans, cancellations and errors are out of the line of code a call runs through with
    // metrics only (`#[cold]`): at one call in flight that code is fetched again at every call,
    // and the lines it spans, not its instructions, are most of what metrics cost a call.
    #[cold]
    #[inline(never)]
    fn start_span(tracer: &opentelemetry_sdk::trace::SdkTracer, info: &RequestInfo<'_>) -> Context {
        let facts = SpanFacts {
            method: info.method,
            tool: info.tool,
            prompt: info.prompt,
            session_id: info.session_id,
            request_id: info.request_id,
            transport: info.transport,
            server_address: None,
            server_port: None,
        };
        spans::start_server(tracer, &facts, info.parent, info.link)
    }

    /// When the request started.
    pub(crate) fn started(&self) -> Instant {
        self.start
    }

    /// The trace context of this request's span, carrying `incoming`'s `tracestate` and
    /// `baggage`: the parent of the requests made inside it (a `run_code` script's calls).
    /// `None` without a span.
    #[cfg(feature = "code-mode")]
    pub(crate) fn trace_context(&self, incoming: Option<&TraceContext>) -> Option<TraceContext> {
        self.span
            .as_ref()
            .and_then(|cx| spans::context_of(cx, incoming))
    }

    /// Whether this request has a span (its upstream request will have one too).
    pub(crate) fn has_span(&self) -> bool {
        self.span.is_some()
    }

    /// The `tools/call` was routed to `server` (a config name), for `tool` (its board name),
    /// `original` on that server. Its labels and its span's name say so from now on (a request
    /// never routed keeps the labels it started with: `_unknown` tool, no server), and its
    /// upstream request's series is found with this one's, in one lookup. Call it only with
    /// names on the board: label values are bounded by them. `memo` is the route's slot for
    /// the tool, as [`RequestInfo::memo`].
    pub(crate) fn routed(
        &mut self,
        server: &str,
        (tool, original): (&str, &str),
        memo: Option<&ToolMemo>,
    ) {
        let same = match &self.series {
            Series::ToolCall(groups) => {
                let (key, up) = (&groups.server.key, &groups.client.key);
                *key.server == *server && *key.tool == *tool && *up.tool == *original
            }
            Series::Own(_) => false,
        };
        let key = &self.series.server().key;
        if !key.via.is_empty() {
            self.routed_via(server, tool);
        } else if !same {
            let client = (*key.client != *super::DEFAULT_CLIENT).then_some(&*key.client);
            let groups = self
                .core
                .metrics
                .tool_call_groups(tool, original, server, client, memo);
            self.series = Series::ToolCall(groups);
        }
        if let Some(cx) = &self.span {
            spans::name_target(cx, Method::ToolsCall, tool);
        }
    }

    /// [`ServerOperation::routed`] for a request made inside the gateway (a script's call):
    /// its own series, with its `pegboard_caller`.
    #[cold]
    #[inline(never)]
    fn routed_via(&mut self, server: &str, tool: &str) {
        let key = &self.series.server().key;
        let client = (*key.client != *super::DEFAULT_CLIENT).then_some(&*key.client);
        let group = self.core.metrics.server_group_via(
            Method::ToolsCall,
            Some(tool),
            Some(server),
            client,
            key.via,
        );
        self.series = Series::Own(group);
    }

    /// Begin the upstream request this downstream request makes (its CLIENT span is the child
    /// of this one's SERVER span; `incoming` is the client's trace context, whose `tracestate`
    /// and `baggage` the upstream request carries on).
    pub fn upstream(
        &self,
        info: &UpstreamInfo<'_>,
        incoming: Option<&TraceContext>,
    ) -> ClientOperation {
        // The series found with this request's, when it is that request's (only a routed
        // `tools/call` has one).
        let known = match &self.series {
            Series::ToolCall(groups)
                if info.method == Method::ToolsCall
                    && *groups.client.key.tool == *info.tool.unwrap_or("")
                    && *groups.client.key.server == *info.server =>
            {
                Some(Series::ToolCall(Arc::clone(groups)))
            }
            _ => None,
        };
        ClientOperation::start(&self.core, info, known, self.span.as_ref(), incoming)
    }

    /// [`ServerOperation::upstream`] for the `tools/call` this request started or was
    /// [routed](ServerOperation::routed) with, which `info` must be (its caller knows: the
    /// call's route gave both): its series is the one found with this request's, taken without
    /// comparing the names again (two string compares a call, on the hot path).
    pub(crate) fn routed_upstream(
        &self,
        info: &UpstreamInfo<'_>,
        incoming: Option<&TraceContext>,
    ) -> ClientOperation {
        let known = match &self.series {
            Series::ToolCall(groups) => Some(Series::ToolCall(Arc::clone(groups))),
            Series::Own(_) => None,
        };
        ClientOperation::start(&self.core, info, known, self.span.as_ref(), incoming)
    }

    /// The request was answered: `error` is `None` on success, `Some(ToolError)` for a
    /// `CallToolResult` with `isError`, else what failed.
    pub fn finish(self, error: Option<ErrorType>) {
        self.finish_with(error, None);
    }

    /// [`ServerOperation::finish`], with the JSON-RPC error message for the span's status.
    pub fn finish_with(mut self, error: Option<ErrorType>, message: Option<&str>) {
        self.record(error, message, Instant::now());
    }

    /// [`ServerOperation::finish_with`] at `end` (the time its upstream request ended too,
    /// when both end at once: one clock read for the two).
    pub fn finish_at(mut self, error: Option<ErrorType>, message: Option<&str>, end: Instant) {
        self.record(error, message, end);
    }

    /// [`ServerOperation::finish_at`] where the handle lives (the caller's records are not
    /// moved to finish it); once finished, it records nothing more.
    pub(crate) fn record(&mut self, error: Option<ErrorType>, message: Option<&str>, end: Instant) {
        if self.done {
            return;
        }
        self.done = true;
        let elapsed = end.saturating_duration_since(self.start);
        let group = self.series.server();
        group.observe(error, elapsed);
        if let Some(server) = &group.server {
            server
                .window
                .record(self.core.period(end), elapsed, error.is_some());
        }
        self.core.metrics.call_ended();
        if let Some(cx) = &self.span {
            end_span(cx, error, message);
        }
    }

    #[cold]
    #[inline(never)]
    fn cancelled(&mut self) {
        self.record(Some(ErrorType::Cancelled), None, Instant::now());
    }
}

impl Drop for ServerOperation {
    fn drop(&mut self) {
        if !self.done {
            self.cancelled();
        }
    }
}

#[cold]
#[inline(never)]
fn end_span(cx: &Context, error: Option<ErrorType>, message: Option<&str>) {
    spans::end(cx, error, message);
}

/// An upstream request under way.
#[derive(Debug)]
#[must_use = "finish it with the outcome; dropped unfinished it counts as cancelled"]
pub struct ClientOperation {
    series: Series,
    start: Instant,
    span: Option<Context>,
    /// Boxed: most calls carry no trace, and this handle lives in each call's records.
    context: Option<Box<TraceContext>>,
    done: bool,
}

impl ClientOperation {
    /// Its series is `known` when the caller found it already, else looked up here.
    fn start(
        core: &Arc<Core>,
        info: &UpstreamInfo<'_>,
        known: Option<Series>,
        parent_span: Option<&Context>,
        incoming: Option<&TraceContext>,
    ) -> Self {
        let start = info.started.unwrap_or_else(Instant::now);
        let method = info.method;
        let series = known.unwrap_or_else(|| {
            Series::Own(core.metrics.client_group(method, info.tool, info.server))
        });
        let (span, context) = match (core.tracer(), incoming) {
            (None, None) => (None, None),
            (tracer, incoming) => Self::traced(tracer, info, parent_span, incoming),
        };
        Self {
            series,
            start,
            span,
            context,
            done: false,
        }
    }

    /// The span and the trace context of a request when spans are exported or the client sent
    /// a trace (see [`ServerOperation::start_span`] for why apart).
    #[cold]
    #[inline(never)]
    fn traced(
        tracer: Option<&opentelemetry_sdk::trace::SdkTracer>,
        info: &UpstreamInfo<'_>,
        parent_span: Option<&Context>,
        incoming: Option<&TraceContext>,
    ) -> (Option<Context>, Option<Box<TraceContext>>) {
        let span = tracer.map(|tracer| {
            let facts = SpanFacts {
                method: info.method,
                tool: info.tool,
                prompt: info.prompt,
                session_id: None,
                request_id: info.request_id,
                transport: info.transport,
                server_address: info.server_address,
                server_port: info.server_port,
            };
            spans::start_client(tracer, &facts, parent_span)
        });
        let context = match &span {
            Some(cx) => spans::context_of(cx, incoming),
            None => incoming.map(TraceContext::child),
        }
        .map(Box::new);
        (span, context)
    }

    /// A request the gateway makes on its own (see [`super::Telemetry::start_upstream`]).
    pub(crate) fn alone(core: &Arc<Core>, info: &UpstreamInfo<'_>) -> Self {
        Self::start(core, info, None, None, None)
    }

    /// What goes in the upstream request's `params._meta` (`traceparent`: the same trace, this
    /// CLIENT span's id; `tracestate`, `baggage`): `None` when there is no trace to carry (no
    /// incoming trace and no spans exported), and then nothing is added.
    #[must_use]
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.context.as_deref()
    }

    /// The answer came: `error` as for [`ServerOperation::finish`].
    pub fn finish(self, error: Option<ErrorType>) {
        self.finish_with(error, None);
    }

    /// [`ClientOperation::finish`] with the JSON-RPC error message.
    pub fn finish_with(mut self, error: Option<ErrorType>, message: Option<&str>) {
        self.record(error, message, Instant::now());
    }

    /// [`ClientOperation::finish_with`] at `end` (see [`ServerOperation::finish_at`]).
    pub fn finish_at(mut self, error: Option<ErrorType>, message: Option<&str>, end: Instant) {
        self.record(error, message, end);
    }

    /// [`ClientOperation::finish_at`] where the handle lives (see [`ServerOperation::record`]).
    pub(crate) fn record(&mut self, error: Option<ErrorType>, message: Option<&str>, end: Instant) {
        if self.done {
            return;
        }
        self.done = true;
        self.series
            .client()
            .observe(error, end.saturating_duration_since(self.start));
        if let Some(cx) = &self.span {
            end_span(cx, error, message);
        }
    }

    #[cold]
    #[inline(never)]
    fn cancelled(&mut self) {
        self.record(Some(ErrorType::Cancelled), None, Instant::now());
    }
}

impl Drop for ClientOperation {
    fn drop(&mut self) {
        if !self.done {
            self.cancelled();
        }
    }
}

/// What an upstream request carries when telemetry may be off: `upstream`'s context when there
/// is an operation, else a new span id in the client's trace, else nothing.
#[must_use]
pub fn upstream_trace_context(
    upstream: Option<&ClientOperation>,
    incoming: Option<&TraceContext>,
) -> Option<TraceContext> {
    match upstream {
        Some(op) => op.trace_context().cloned(),
        None => incoming.map(TraceContext::child),
    }
}
