//! What the pipeline tells telemetry of a request when it starts: [`RequestInfo`] for a
//! downstream request, [`UpstreamInfo`] for an upstream one (their metrics' labels, their spans'
//! attributes, where the call's route keeps its tool's series).

use std::time::Instant;

use super::labels::{Method, Transport};
use super::metrics::ToolMemo;
use super::spans::JsonRpcId;
use super::trace_context::TraceContext;

/// A downstream request, as the pipeline knows it when it starts.
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    /// The JSON-RPC method ([`Method::parse`] of the name received: a fixed set).
    pub method: Method,
    /// The tool's board name, only when it is on the board (`tools/call`).
    pub tool: Option<&'a str>,
    /// The prompt's name (`prompts/get`), for the span name.
    pub prompt: Option<&'a str>,
    /// The server (config name) the request is routed to, if any.
    pub server: Option<&'a str>,
    /// The tool's own name on that server, when routed (`tools/call`): the call's upstream
    /// request then finds its series with the downstream one's, in one lookup.
    pub original: Option<&'a str>,
    /// The client's configured name (`None`: `default`).
    pub client: Option<&'a str>,
    /// `Mcp-Session-Id`, if the request is part of a session.
    pub session_id: Option<&'a str>,
    /// The JSON-RPC id.
    pub request_id: Option<JsonRpcId<'a>>,
    /// The front it came in on: `Pipe` (stdio) or `Tcp` (HTTP).
    pub transport: Transport,
    /// The trace context the client sent (`params._meta`, else the HTTP headers).
    pub parent: Option<&'a TraceContext>,
    /// The HTTP headers' trace context when `params._meta` had one too (linked, per the
    /// conventions).
    pub link: Option<&'a TraceContext>,
    /// When the request started, if its caller read the clock already (else now).
    pub started: Option<Instant>,
    /// Where the route keeps what telemetry found for its tool (see
    /// [`Metrics::tool_call_groups`](super::Metrics::tool_call_groups)): one slot per tool
    /// (`original`) of one server's connection.
    pub memo: Option<&'a ToolMemo>,
    /// What made the request inside the gateway, when not the client itself (`code`: a call
    /// of a `run_code` script): the `pegboard_caller` label. A fixed name, never a client's.
    pub via: Option<&'static str>,
}

impl<'a> RequestInfo<'a> {
    /// A request of `method` on `transport`, nothing else known yet.
    #[must_use]
    pub fn new(method: Method, transport: Transport) -> Self {
        Self {
            method,
            tool: None,
            prompt: None,
            server: None,
            original: None,
            client: None,
            session_id: None,
            request_id: None,
            transport,
            parent: None,
            link: None,
            started: None,
            memo: None,
            via: None,
        }
    }
}

/// An upstream request, as the pipeline knows it before sending it.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamInfo<'a> {
    /// The JSON-RPC method.
    pub method: Method,
    /// The tool's own name on its server (`tools/call`).
    pub tool: Option<&'a str>,
    /// The prompt's own name on its server (`prompts/get`).
    pub prompt: Option<&'a str>,
    /// The server (config name).
    pub server: &'a str,
    /// `server.address`: the host of an HTTP server (none for stdio).
    pub server_address: Option<&'a str>,
    /// `server.port`.
    pub server_port: Option<u16>,
    /// `Pipe` (stdio child) or `Tcp` (HTTP).
    pub transport: Transport,
    /// The id the gateway gives the upstream request.
    pub request_id: Option<JsonRpcId<'a>>,
    /// When the request started, if its caller knows (else now).
    pub started: Option<Instant>,
}

impl<'a> UpstreamInfo<'a> {
    /// A request of `method` to `server` over `transport`.
    #[must_use]
    pub fn new(method: Method, server: &'a str, transport: Transport) -> Self {
        Self {
            method,
            tool: None,
            prompt: None,
            server,
            server_address: None,
            server_port: None,
            transport,
            request_id: None,
            started: None,
        }
    }
}
