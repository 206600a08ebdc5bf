//! The status report: each server's state, tools, restarts, and its calls, errors and latency
//! percentiles of the last five minutes. `GET /status` answers it as JSON; `pegboard status`
//! reads it back.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::shared::Core;
use super::window::WINDOW;

/// The whole status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// PegBoard's version.
    pub version: String,
    /// Seconds since telemetry started (about the gateway's uptime).
    pub uptime_seconds: u64,
    /// The window the counts and percentiles cover, seconds (300).
    pub window_seconds: u64,
    /// Downstream sessions open.
    pub sessions: i64,
    /// Downstream requests being answered.
    pub calls_in_flight: i64,
    /// Whether spans are exported (OTLP).
    pub exporting_spans: bool,
    /// Spans dropped by a full export queue, so far.
    pub spans_dropped: u64,
    /// The servers, in config order.
    pub servers: Vec<ServerStatus>,
}

/// One server's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// Its config name (namespace).
    pub name: String,
    /// `starting`, `up`, `restarting`, `needs_login`, `failed` or `stopped`.
    pub state: String,
    /// Why (failed, needs login, restarting), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Tools it has on the board.
    pub tools: u64,
    /// Restarts since the gateway started.
    pub restarts: u64,
    /// Requests routed to it that ended in the window.
    pub calls: u64,
    /// Of which failed (`tool_error` included).
    pub errors: u64,
    /// Median latency in the window, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    /// 99th percentile latency in the window, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
}

impl StatusReport {
    /// The status now.
    #[must_use]
    pub fn collect(core: &Core) -> Self {
        let now = Instant::now();
        let period = core.period(now);
        let metrics = &core.metrics;
        let servers = metrics
            .servers
            .all()
            .iter()
            .map(|entry| {
                let reading = entry.read();
                let window = entry.window.stats(period);
                ServerStatus {
                    name: reading.name.to_string(),
                    state: reading.state.as_str().to_string(),
                    reason: reading.reason,
                    tools: reading.tools,
                    restarts: reading.restarts,
                    calls: window.calls,
                    errors: window.errors,
                    p50_ms: window.p50_ms,
                    p99_ms: window.p99_ms,
                }
            })
            .collect();
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            uptime_seconds: now.saturating_duration_since(core.started).as_secs(),
            window_seconds: WINDOW.as_secs(),
            sessions: metrics.sessions(),
            calls_in_flight: metrics.in_flight(),
            exporting_spans: core.exporter.is_some(),
            spans_dropped: metrics.spans_dropped(),
            servers,
        }
    }
}
