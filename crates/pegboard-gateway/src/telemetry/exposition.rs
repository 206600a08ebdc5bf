//! `GET /metrics`: the metrics in Prometheus's text format (0.0.4), written by `prometheus-client`
//! from the atomics at scrape time.

use std::collections::HashMap;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::registry::Registry;

use super::histogram::AtomicHistogram;
use super::labels::{DenyReason, error_label};
use super::metrics::Metrics;
use super::series::SeriesMap;

/// The `Content-Type` of the answer.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Metric names: the contract (docs, dashboards and tests use them).
pub mod names {
    /// Downstream requests (histogram).
    pub const SERVER_OPERATION: &str = "mcp_server_operation_duration_seconds";
    /// Upstream requests (histogram).
    pub const CLIENT_OPERATION: &str = "mcp_client_operation_duration_seconds";
    /// Session durations (histogram).
    pub const SESSION_DURATION: &str = "mcp_server_session_duration_seconds";
    /// Sessions open (gauge).
    pub const SESSIONS: &str = "pegboard_sessions";
    /// Downstream requests in flight (gauge).
    pub const CALLS_IN_FLIGHT: &str = "pegboard_calls_in_flight";
    /// 1 when the server is up (gauge, per server).
    pub const SERVER_UP: &str = "pegboard_server_up";
    /// Tools a server has on the board (gauge, per server).
    pub const TOOLS: &str = "pegboard_tools";
    /// Restarts (counter, per server; `_total` is added by the encoder).
    pub const SERVER_RESTARTS: &str = "pegboard_server_restarts";
    /// Messages over the size limit (counter, per server).
    pub const MESSAGES_OVER_LIMIT: &str = "pegboard_messages_over_limit";
    /// Refused requests (counter, per reason).
    pub const DENIED: &str = "pegboard_denied";
    /// Spans dropped by a full export queue (counter).
    pub const SPANS_DROPPED: &str = "pegboard_spans_dropped";
    /// Store round trips that failed or timed out (counter).
    pub const STORE_ERRORS: &str = "pegboard_store_errors";
}

/// The whole exposition of `metrics`.
///
/// # Errors
/// Only if formatting fails (it writes to a `String`, so it does not).
pub fn encode(metrics: &Arc<Metrics>) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape(Arc::clone(metrics))));
    let mut out = String::with_capacity(16 * 1024);
    prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)?;
    Ok(out)
}

#[derive(Debug)]
struct Scrape(Arc<Metrics>);

type NoExemplars = HashMap<usize, Exemplar<[(&'static str, &'static str); 0], f64>>;

fn histogram(
    encoder: &mut MetricEncoder<'_>,
    labels: &impl EncodeLabelSet,
    h: &AtomicHistogram,
) -> Result<(), std::fmt::Error> {
    let s = h.snapshot();
    encoder.encode_family(labels)?.encode_histogram(
        s.sum,
        s.count,
        &s.buckets,
        None::<&NoExemplars>,
    )
}

fn operations(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    series: &SeriesMap,
    with_client: bool,
) -> Result<(), std::fmt::Error> {
    let groups = series.all();
    if groups.is_empty() {
        return Ok(());
    }
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Histogram)?;
    for group in groups.values() {
        let k = &group.key;
        for (error, h) in group.outcomes() {
            let common = [
                ("mcp_method_name", k.method.as_str()),
                ("gen_ai_tool_name", &*k.tool),
                ("error_type", error_label(error)),
                ("pegboard_server", &*k.server),
            ];
            if with_client {
                let [a, b, c, d] = common;
                histogram(
                    &mut metric,
                    &[a, b, c, d, ("pegboard_client", &*k.client)],
                    h,
                )?;
            } else {
                histogram(&mut metric, &common, h)?;
            }
        }
    }
    Ok(())
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let m = &self.0;
        operations(
            &mut encoder,
            names::SERVER_OPERATION,
            "MCP requests the gateway received, from receipt to answer.",
            &m.server_ops,
            true,
        )?;
        operations(
            &mut encoder,
            names::CLIENT_OPERATION,
            "MCP requests the gateway sent to servers, from sending to the answer.",
            &m.client_ops,
            false,
        )?;
        let mut metric = encoder.encode_descriptor(
            names::SESSION_DURATION,
            "Downstream MCP sessions, from open to close.",
            None,
            MetricType::Histogram,
        )?;
        let s = m.session_duration.snapshot();
        metric.encode_histogram(s.sum, s.count, &s.buckets, None::<&NoExemplars>)?;

        encoder
            .encode_descriptor(names::SESSIONS, "Sessions open.", None, MetricType::Gauge)?
            .encode_gauge(&m.sessions())?;
        encoder
            .encode_descriptor(
                names::CALLS_IN_FLIGHT,
                "Downstream requests being answered.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&m.in_flight())?;

        let servers: Vec<_> = m.servers.all().iter().map(|e| e.read()).collect();
        let mut metric = encoder.encode_descriptor(
            names::SERVER_UP,
            "1 when the server is up, else 0.",
            None,
            MetricType::Gauge,
        )?;
        for s in &servers {
            let up = i64::from(s.state == super::servers::ServerState::Up);
            metric
                .encode_family(&[("pegboard_server", &*s.name)])?
                .encode_gauge(&up)?;
        }
        let mut metric = encoder.encode_descriptor(
            names::TOOLS,
            "Tools the server has on the board.",
            None,
            MetricType::Gauge,
        )?;
        for s in &servers {
            metric
                .encode_family(&[("pegboard_server", &*s.name)])?
                .encode_gauge(&i64::try_from(s.tools).unwrap_or(i64::MAX))?;
        }
        let mut metric = encoder.encode_descriptor(
            names::SERVER_RESTARTS,
            "Times the server was started again after it stopped.",
            None,
            MetricType::Counter,
        )?;
        for s in &servers {
            metric
                .encode_family(&[("pegboard_server", &*s.name)])?
                .encode_counter::<[(&str, &str); 0], _, u64>(&s.restarts, None)?;
        }
        let mut metric = encoder.encode_descriptor(
            names::MESSAGES_OVER_LIMIT,
            "Messages from the server over its size limit (refused).",
            None,
            MetricType::Counter,
        )?;
        for s in &servers {
            metric
                .encode_family(&[("pegboard_server", &*s.name)])?
                .encode_counter::<[(&str, &str); 0], _, u64>(&s.over_limit, None)?;
        }
        let mut metric = encoder.encode_descriptor(
            names::DENIED,
            "Requests the gateway refused, by reason.",
            None,
            MetricType::Counter,
        )?;
        for reason in DenyReason::ALL {
            metric
                .encode_family(&[("reason", reason.as_str())])?
                .encode_counter::<[(&str, &str); 0], _, u64>(&m.denied_count(reason), None)?;
        }
        encoder
            .encode_descriptor(
                names::SPANS_DROPPED,
                "Spans dropped because the export queue was full.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<[(&str, &str); 0], _, u64>(&m.spans_dropped(), None)?;
        encoder
            .encode_descriptor(
                names::STORE_ERRORS,
                "Round trips to the store (--store) that failed or timed out.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<[(&str, &str); 0], _, u64>(&m.store_errors(), None)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::labels::{ErrorType, Method};
    use std::time::Duration;

    #[test]
    fn the_exposition_has_the_contract_names_and_labels() {
        let m = Arc::new(Metrics::default());
        let units = m.servers.register("units");
        units.set_tools(3);
        units.restarted();
        let g = m.server_group(
            Method::ToolsCall,
            Some("units-convert"),
            Some("units"),
            None,
        );
        g.observe(None, Duration::from_millis(3));
        g.observe(Some(ErrorType::ToolError), Duration::from_millis(7));
        m.client_group(Method::ToolsCall, Some("convert"), "units")
            .observe(None, Duration::from_millis(2));
        m.denied(DenyReason::Unauthorized);
        let text = encode(&m).expect("encode");
        for line in [
            "# TYPE mcp_server_operation_duration_seconds histogram",
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="",pegboard_server="units",pegboard_client="default"} 1"#,
            r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="tool_error",pegboard_server="units",pegboard_client="default",le="0.01"} 1"#,
            r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="tool_error",pegboard_server="units",pegboard_client="default",le="0.005"} 0"#,
            r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="tool_error",pegboard_server="units",pegboard_client="default",le="300"} 1"#,
            r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="units-convert",error_type="tool_error",pegboard_server="units",pegboard_client="default",le="+Inf"} 1"#,
            r#"mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="convert",error_type="",pegboard_server="units"} 1"#,
            "# TYPE mcp_server_session_duration_seconds histogram",
            "mcp_server_session_duration_seconds_count 0",
            "pegboard_sessions 0",
            "pegboard_calls_in_flight 0",
            r#"pegboard_server_up{pegboard_server="units"} 0"#,
            r#"pegboard_tools{pegboard_server="units"} 3"#,
            r#"pegboard_server_restarts_total{pegboard_server="units"} 1"#,
            r#"pegboard_messages_over_limit_total{pegboard_server="units"} 0"#,
            r#"pegboard_denied_total{reason="unauthorized"} 1"#,
            "pegboard_spans_dropped_total 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing line: {line}\n{text}"
            );
        }
        assert_eq!(
            text.matches("le=\"+Inf\"").count(),
            4,
            "one +Inf per histogram series"
        );
        assert!(!text.contains("e+308"));
    }
}
