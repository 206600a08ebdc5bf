//! Telemetry: Prometheus metrics and OpenTelemetry spans by the MCP semantic conventions, W3C
//! trace context carried from the client through the gateway to each server, and a status page.
//!
//! Off by default and free when off: the gateway holds an `Option<Arc<Telemetry>>`, and with
//! `None` every hook is one branch. On, a downstream request costs a label lookup (lock-free),
//! a few relaxed atomic adds and two clock reads (see `benches/telemetry.rs`).
//!
//! # Where everything lives
//! - [`Telemetry`] (`hub.rs`): the handle; servers' states, sessions, denials go through it.
//! - [`ServerOperation`], [`ClientOperation`], [`SessionGuard`] (`operation.rs`): a request or
//!   session under way; [`Relayed`] (`relayed.rs`): a request passed to one server in one step.
//! - [`TraceContext`] (`trace_context.rs`): W3C `traceparent` / `tracestate` / `baggage`.
//! - `labels.rs`: the bounded label values ([`Method`], [`ErrorType`], [`Transport`],
//!   [`DenyReason`]).
//! - `metrics.rs`, `series.rs`, `histogram.rs`, `servers.rs`, `window.rs`: the counting.
//! - `exposition.rs`: the Prometheus text format; [`names`]: the metric names (the contract).
//! - `spans.rs`: spans by the conventions; `export.rs`: OTLP export, configured by
//!   [`TraceExport`] (`export_config.rs`).
//! - `status.rs`, `status_page.rs`: the status as JSON and HTML; `status_client.rs`: reading it.
//! - [`MetricsListener`] (`listener.rs`): `GET /metrics` and `GET /status`.

// Part of this module's API is used only by its tests and benchmark, through the `testing`
// feature (`pegboard_gateway::testing::telemetry`); without it that part is unreachable.
#![cfg_attr(not(feature = "testing"), allow(dead_code, unused_imports))]

mod copy_on_write;
mod error;
mod export;
mod export_config;
mod exposition;
mod histogram;
mod hub;
mod labels;
mod listener;
mod metrics;
mod operation;
mod relayed;
mod request_info;
mod series;
mod servers;
mod session;
mod shared;
mod spans;
mod status;
mod status_client;
mod status_page;
mod trace_context;
mod window;

pub use error::TelemetryError;
pub use export_config::{OtlpProtocol, TraceExport};
pub use exposition::{CONTENT_TYPE as METRICS_CONTENT_TYPE, names};
pub use hub::{Telemetry, TelemetryOptions};
pub use labels::{DEFAULT_CLIENT, DenyReason, ErrorType, Method, OTHER_METHOD, Transport, UNKNOWN};
pub use listener::{DEFAULT_PORT, MetricsListener};
pub use metrics::{Metrics, ToolMemo};
pub use operation::{ClientOperation, ServerOperation, upstream_trace_context};
pub use relayed::Relayed;
pub use request_info::{RequestInfo, UpstreamInfo};
pub use servers::ServerState;
pub use session::SessionGuard;
pub use spans::JsonRpcId;
pub use status::{ServerStatus, StatusReport};
pub use status_client::{default_url, fetch_status};
pub use status_page::render as render_status_page;
pub use trace_context::{BAGGAGE, TRACEPARENT, TRACESTATE, TraceContext};
pub use window::WINDOW;

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn item() {
        fn demo() -> Result<(), crate::telemetry::TelemetryError> {
            use crate::telemetry::{
                ErrorType, Method, RequestInfo, Telemetry, TelemetryOptions, TraceContext,
                Transport, UpstreamInfo,
            };

            let telemetry = Telemetry::new(TelemetryOptions {
                servers: vec!["units".into()],
                ..TelemetryOptions::default()
            })?;

            // A `tools/call` of `units-convert` arrives with a trace context in `params._meta`.
            let meta = serde_json::json!({
                "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            });
            let incoming = meta.as_object().and_then(TraceContext::from_meta);
            let mut info = RequestInfo::new(Method::ToolsCall, Transport::Pipe);
            info.tool = Some("units-convert"); // on the board; `None` if not
            info.server = Some("units");
            info.parent = incoming.as_ref();
            let call = telemetry.start_request(&info);

            // The gateway sends `convert` to the server, with the trace in `params._meta`.
            let mut up = UpstreamInfo::new(Method::ToolsCall, "units", Transport::Pipe);
            up.tool = Some("convert");
            let upstream = call.upstream(&up, incoming.as_ref());
            let mut upstream_meta = serde_json::Map::new();
            if let Some(context) = upstream.trace_context() {
                context.write_meta(&mut upstream_meta); // same trace id, a span id of ours
            }
            assert!(
                upstream_meta["traceparent"]
                    .as_str()
                    .unwrap()
                    .starts_with("00-4bf92f35")
            );
            upstream.finish(None);
            call.finish(Some(ErrorType::ToolError)); // the result had `isError: true`

            let text = telemetry.render_metrics();
            assert!(text.contains(r#"error_type="tool_error""#));
            Ok(())
        }
        demo().unwrap();
    }
}
