//! The `run_code` request's own metrics and span. Its calls are requests of their own through
//! the pipeline; their SERVER spans are children of this one (the host gives them its trace
//! context as their parent), and their series carry `pegboard_caller="code"`.

use pegboard_codemode::{RunError, RunOutcome};
use rmcp::{RoleServer, model::NumberOrString, service::RequestContext};

use crate::server::BoardServer;
use crate::telemetry::{ErrorType, JsonRpcId, Method, RequestInfo, ServerOperation, TraceContext};

/// One run's records (nothing without telemetry). Dropped before [`RunWatch::end`] (the
/// request's future was dropped), the run counts as cancelled.
pub(crate) struct RunWatch {
    op: Option<ServerOperation>,
    /// What the run's calls take as their parent: the run's span, else the client's own trace
    /// context (when spans are off but the client sent one), else nothing.
    parent: Option<TraceContext>,
}

impl RunWatch {
    /// The `run_code` request (named `name`) in `context` begins.
    pub(crate) fn begin(
        server: &BoardServer,
        context: &RequestContext<RoleServer>,
        name: &str,
    ) -> Self {
        let incoming = TraceContext::from_meta(&context.meta).or_else(|| {
            context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| TraceContext::from_headers(&parts.headers))
        });
        let Some(telemetry) = &server.hooks().telemetry else {
            return Self {
                op: None,
                parent: incoming,
            };
        };
        let caller = server.caller(context);
        let mut info = RequestInfo::new(Method::ToolsCall, caller.transport);
        // A fixed name (the code-mode tool's): a bounded label, though not a board tool.
        info.tool = Some(name);
        info.client = Some(caller.client.name());
        info.session_id = caller.session_id;
        info.request_id = Some(match &context.id {
            NumberOrString::Number(n) => JsonRpcId::Number(*n),
            NumberOrString::String(s) => JsonRpcId::String(s),
        });
        info.parent = incoming.as_ref();
        let op = telemetry.start_request(&info);
        let parent = op.trace_context(incoming.as_ref()).or(incoming);
        Self {
            op: Some(op),
            parent,
        }
    }

    /// The parent of the run's calls' spans.
    pub(crate) fn parent(&self) -> Option<&TraceContext> {
        self.parent.as_ref()
    }

    /// The run ended with `outcome` (`None`: cancelled before it ended).
    pub(crate) fn end(self, outcome: Option<&RunOutcome>) {
        let Some(op) = self.op else {
            return;
        };
        let error = match outcome.map(|o| &o.result) {
            Some(Ok(_)) => None,
            None | Some(Err(RunError::Cancelled)) => Some(ErrorType::Cancelled),
            Some(Err(RunError::Timeout { .. })) => Some(ErrorType::Timeout),
            // An `isError` answer, as a tool's.
            Some(Err(_)) => Some(ErrorType::ToolError),
        };
        let message = match outcome.map(|o| &o.result) {
            Some(Err(e)) => Some(e.to_string()),
            _ => None,
        };
        op.finish_with(error, message.as_deref());
    }
}
