//! [`Relayed`]: a downstream request that the gateway passes to one server in one step
//! (`prompts/get`, `resources/read`, `completion/complete`): its SERVER operation, its CLIENT
//! operation, and the trace context the upstream request carries, made and ended together.

use super::hub::Telemetry;
use super::labels::ErrorType;
use super::operation::{ClientOperation, ServerOperation, upstream_trace_context};
use super::request_info::{RequestInfo, UpstreamInfo};
use super::trace_context::TraceContext;

/// A downstream request relayed to a server (see the module docs). With telemetry off it holds
/// only the trace context to carry upstream (a new span id in the client's trace), if the client
/// sent one.
#[derive(Debug)]
#[must_use = "finish it with the outcome; dropped unfinished it counts as cancelled"]
pub struct Relayed {
    op: Option<ServerOperation>,
    upstream: Option<ClientOperation>,
    context: Option<TraceContext>,
}

impl Relayed {
    /// `request` was received and goes upstream as `upstream` (`None`: not known, as for a name
    /// not on the board; then no CLIENT operation is counted). `telemetry` `None`: telemetry is
    /// off, and `upstream` need not be looked up.
    pub fn start(
        telemetry: Option<&Telemetry>,
        request: &RequestInfo<'_>,
        upstream: Option<&UpstreamInfo<'_>>,
    ) -> Self {
        let op = telemetry.map(|t| t.start_request(request));
        let client = match (&op, upstream) {
            (Some(op), Some(info)) => Some(op.upstream(info, request.parent)),
            _ => None,
        };
        let context = upstream_trace_context(client.as_ref(), request.parent);
        Self {
            op,
            upstream: client,
            context,
        }
    }

    /// What the upstream request carries in `params._meta` (see
    /// [`ClientOperation::trace_context`]): `None` adds nothing.
    #[must_use]
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.context.as_ref()
    }

    /// The answer came (`error`: `None` when it is a result, else what failed).
    pub fn finish(self, error: Option<ErrorType>) {
        if let Some(upstream) = self.upstream {
            upstream.finish(error);
        }
        if let Some(op) = self.op {
            op.finish(error);
        }
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn relayed() {
        use crate::telemetry::{
            Method, Relayed, RequestInfo, Telemetry, TelemetryOptions, TraceContext, Transport,
            UpstreamInfo,
        };

        let telemetry = Telemetry::new(TelemetryOptions {
            servers: vec!["docs".into()],
            ..TelemetryOptions::default()
        })
        .unwrap();
        let incoming = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            None,
            None,
        );
        let mut request = RequestInfo::new(Method::PromptsGet, Transport::Tcp);
        request.prompt = Some("docs-summary");
        request.server = Some("docs");
        request.parent = incoming.as_ref();
        let mut upstream = UpstreamInfo::new(Method::PromptsGet, "docs", Transport::Pipe);
        upstream.prompt = Some("summary");
        let relayed = Relayed::start(Some(&telemetry), &request, Some(&upstream));
        // The upstream request carries the client's trace, with a span id of the gateway's.
        let carried = relayed.trace_context().unwrap().traceparent();
        assert!(carried.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(!carried.contains("00f067aa0ba902b7"));
        relayed.finish(None);
        assert!(
            telemetry
                .render_metrics()
                .contains(r#"mcp_method_name="prompts/get""#)
        );
    }
}
