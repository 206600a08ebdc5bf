//! Spans by the OpenTelemetry MCP conventions: a SERVER span `{mcp.method.name} {target}` per
//! downstream request, a CLIENT span per upstream request as its child, with the conventions'
//! attributes; status ERROR with `error.type` when the operation failed.

use std::borrow::Cow;

use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;

use super::labels::{ErrorType, Method, Transport};
use super::trace_context::TraceContext;

/// A JSON-RPC request id (`jsonrpc.request.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRpcId<'a> {
    /// A number id.
    Number(i64),
    /// A string id.
    String(&'a str),
}

impl JsonRpcId<'_> {
    fn attribute(self) -> KeyValue {
        let value = match self {
            JsonRpcId::Number(n) => n.to_string(),
            JsonRpcId::String(s) => s.to_string(),
        };
        KeyValue::new("jsonrpc.request.id", value)
    }
}

/// What a span is about (the request's side of it).
#[derive(Debug, Clone, Copy)]
pub struct SpanFacts<'a> {
    /// The method.
    pub method: Method,
    /// The tool (board name on the server span, the server's own name on the client span).
    pub tool: Option<&'a str>,
    /// The prompt, for `prompts/get`.
    pub prompt: Option<&'a str>,
    /// `mcp.session.id`.
    pub session_id: Option<&'a str>,
    /// `jsonrpc.request.id`.
    pub request_id: Option<JsonRpcId<'a>>,
    /// `network.transport`.
    pub transport: Transport,
    /// `server.address` (client spans).
    pub server_address: Option<&'a str>,
    /// `server.port` (client spans).
    pub server_port: Option<u16>,
}

fn name(facts: &SpanFacts<'_>) -> Cow<'static, str> {
    let method = facts.method.as_str();
    match facts.tool.or(facts.prompt) {
        Some(target) => Cow::Owned(format!("{method} {target}")),
        None => Cow::Borrowed(method),
    }
}

fn attributes(facts: &SpanFacts<'_>) -> Vec<KeyValue> {
    let mut attrs = Vec::with_capacity(9);
    attrs.push(KeyValue::new("mcp.method.name", facts.method.as_str()));
    if facts.method.is_tool_call() {
        attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let Some(tool) = facts.tool {
        attrs.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
    }
    if let Some(prompt) = facts.prompt {
        attrs.push(KeyValue::new("gen_ai.prompt.name", prompt.to_string()));
    }
    if let Some(session) = facts.session_id {
        attrs.push(KeyValue::new("mcp.session.id", session.to_string()));
    }
    if let Some(id) = facts.request_id {
        attrs.push(id.attribute());
    }
    attrs.push(KeyValue::new("network.transport", facts.transport.as_str()));
    if let Some(address) = facts.server_address {
        attrs.push(KeyValue::new("server.address", address.to_string()));
    }
    if let Some(port) = facts.server_port {
        attrs.push(KeyValue::new("server.port", i64::from(port)));
    }
    attrs
}

/// Start the SERVER span of a downstream request: the child of `parent` (the client's context),
/// linked to `link` (the HTTP request's own context, when both came). Returns the context that
/// holds it.
pub fn start_server(
    tracer: &SdkTracer,
    facts: &SpanFacts<'_>,
    parent: Option<&TraceContext>,
    link: Option<&TraceContext>,
) -> Context {
    let parent_cx = parent.map_or_else(Context::new, |p| {
        Context::new().with_remote_span_context(p.span_context())
    });
    let mut builder = tracer
        .span_builder(name(facts))
        .with_kind(SpanKind::Server)
        .with_attributes(attributes(facts));
    if let Some(link) = link {
        builder = builder.with_links(vec![Link::with_context(link.span_context())]);
    }
    let span = tracer.build_with_context(builder, &parent_cx);
    parent_cx.with_span(span)
}

/// Start the CLIENT span of an upstream request under `parent` (a server span's context, or none
/// for a request of the gateway's own).
pub fn start_client(
    tracer: &SdkTracer,
    facts: &SpanFacts<'_>,
    parent: Option<&Context>,
) -> Context {
    let builder = tracer
        .span_builder(name(facts))
        .with_kind(SpanKind::Client)
        .with_attributes(attributes(facts));
    let root = Context::new();
    let parent = parent.unwrap_or(&root);
    let span = tracer.build_with_context(builder, parent);
    parent.with_span(span)
}

/// Name the span `cx` holds after `target` (`{method} {target}`), with the attribute the
/// conventions give it: the request was routed after its span started.
pub fn name_target(cx: &Context, method: Method, target: &str) {
    let span = cx.span();
    span.update_name(format!("{} {target}", method.as_str()));
    let key = match method {
        Method::PromptsGet => "gen_ai.prompt.name",
        _ => "gen_ai.tool.name",
    };
    span.set_attribute(KeyValue::new(key, target.to_string()));
}

/// End the span `cx` holds, with `error.type` and status ERROR when the operation failed.
pub fn end(cx: &Context, error: Option<ErrorType>, message: Option<&str>) {
    let span = cx.span();
    if let Some(error) = error {
        span.set_attribute(KeyValue::new("error.type", error.as_str()));
        if let Some(code) = error.jsonrpc_code() {
            span.set_attribute(KeyValue::new("rpc.response.status_code", code));
        }
        span.set_status(Status::error(message.unwrap_or(error.as_str()).to_string()));
    }
    span.end();
}

/// The trace context of the span `cx` holds, carrying `incoming`'s `tracestate` and
/// `baggage`: what the upstream request carries.
pub fn context_of(cx: &Context, incoming: Option<&TraceContext>) -> Option<TraceContext> {
    TraceContext::from_span_context(cx.span().span_context(), incoming)
}
