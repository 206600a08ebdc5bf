//! What every operation handle shares: the metrics, the span exporter (when on), the clock the
//! status window counts periods on.

use std::sync::Arc;
use std::time::Instant;

use opentelemetry_sdk::trace::SdkTracer;

use super::export::Exporter;
use super::metrics::Metrics;
use super::window::PERIOD;

/// The shared state behind [`Telemetry`](super::Telemetry) and its operation handles.
#[derive(Debug)]
pub struct Core {
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// The span exporter, when `OTEL_EXPORTER_OTLP_*ENDPOINT` asked for one.
    pub exporter: Option<Exporter>,
    /// When telemetry started (uptime, and period 0 of the status window).
    pub started: Instant,
}

impl Core {
    /// The tracer, when spans are exported.
    #[inline]
    #[must_use]
    pub fn tracer(&self) -> Option<&SdkTracer> {
        self.exporter.as_ref().map(|e| &e.tracer)
    }

    /// The status window's period that `at` falls in.
    #[inline]
    #[must_use]
    pub fn period(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_secs() / PERIOD.as_secs()
    }
}
