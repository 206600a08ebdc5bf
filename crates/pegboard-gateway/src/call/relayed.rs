//! The records of a request other than `tools/call` that reaches one server (`prompts/get`,
//! `resources/read`, `completion/complete`): its metrics and spans, and the trace context its
//! upstream request carries, from the pieces a tool call's [`Watch`](super::watch::Watch) uses
//! (the caller's [`Who`], the telemetry's operations). Its limits and audit line are not here.

use std::sync::Arc;

use pegboard::Extension;
use rmcp::model::NumberOrString;
use rmcp::{ErrorData, RoleServer, service::RequestContext};

use super::watch::Who;
use crate::telemetry::{
    ErrorType, JsonRpcId, Method, Relayed, RequestInfo, TraceContext, Transport, UNKNOWN,
    UpstreamInfo,
};
use crate::upstream::Hub;

/// The server a request goes to, as the board's entry names it.
pub(crate) struct Destination {
    hub: Option<Arc<Hub>>,
    namespace: Option<Arc<str>>,
}

impl Destination {
    /// The server of a board entry added with `extension` under `namespace`.
    pub(crate) fn of(extension: Option<&Extension>, namespace: Option<Arc<str>>) -> Self {
        Self {
            hub: extension.and_then(Extension::get::<Hub>),
            namespace,
        }
    }

    /// Its name in metrics and logs, as a tool call's route gives it.
    pub(crate) fn server(&self) -> &str {
        match (&self.hub, &self.namespace) {
            (Some(hub), _) => hub.namespace(),
            (None, Some(namespace)) => namespace,
            (None, None) => UNKNOWN,
        }
    }

    /// How the gateway reaches it: a child's pipes, or TCP.
    fn transport(&self) -> Transport {
        match self.hub.as_ref().and_then(|hub| hub.lane()) {
            Some(_) => Transport::Pipe,
            None => Transport::Tcp,
        }
    }
}

/// Where a request goes: its server and, for a prompt, its board name and its server's own.
pub(crate) struct To<'a> {
    /// The server.
    pub(crate) destination: Destination,
    /// The prompt's names: on the board, at its server.
    pub(crate) prompt: Option<(&'a str, &'a str)>,
}

/// A request of `method` by `who` begins, with the client's trace context from `context`, going
/// to `to` (`None`: it reaches no server).
pub(crate) fn start(
    who: Who<'_>,
    method: &str,
    context: &RequestContext<RoleServer>,
    to: Option<&To<'_>>,
) -> Relayed {
    let incoming = incoming(context);
    let mut request = RequestInfo::new(Method::parse(method), who.transport);
    request.client = Some(who.client.name());
    request.session_id = who.session_id;
    request.request_id = Some(request_id(context));
    request.parent = incoming.as_ref();
    request.server = to.map(|to| to.destination.server());
    request.prompt = to.and_then(|to| to.prompt).map(|(board, _)| board);
    let upstream = to.map(|to| {
        let destination = &to.destination;
        let mut upstream = UpstreamInfo::new(
            request.method,
            destination.server(),
            destination.transport(),
        );
        upstream.prompt = to.prompt.map(|(_, original)| original);
        if let Some((host, port)) = destination.hub.as_ref().and_then(|hub| hub.address()) {
            (upstream.server_address, upstream.server_port) = (Some(host), port);
        }
        upstream
    });
    Relayed::start(who.hooks.telemetry.as_deref(), &request, upstream.as_ref())
}

/// End `relayed` with how the request was `answered`.
pub(crate) fn end<T>(relayed: Relayed, answered: &Result<T, ErrorData>) {
    let error = answered
        .as_ref()
        .err()
        .map(|e| ErrorType::from_code(i64::from(e.code.0)));
    relayed.finish(error);
}

/// The client's trace context of a request rmcp parsed: its `params._meta` (rmcp moves it into
/// the context), else the HTTP request's headers.
pub(crate) fn incoming(context: &RequestContext<RoleServer>) -> Option<TraceContext> {
    TraceContext::from_meta(&context.meta).or_else(|| {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| TraceContext::from_headers(&parts.headers))
    })
}

/// The JSON-RPC id of the request in `context`.
pub(crate) fn request_id(context: &RequestContext<RoleServer>) -> JsonRpcId<'_> {
    match &context.id {
        NumberOrString::Number(n) => JsonRpcId::Number(*n),
        NumberOrString::String(s) => JsonRpcId::String(s),
    }
}
