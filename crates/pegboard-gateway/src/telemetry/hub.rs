//! [`Telemetry`]: the one handle the gateway keeps (as `Option<Arc<Telemetry>>`: off is `None`,
//! and costs a branch). Everything the pipeline, the session layer, the supervisor and the
//! message-limit code report goes through it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::TelemetryError;
use super::export;
use super::export_config::TraceExport;
use super::exposition;
use super::labels::DenyReason;
use super::metrics::Metrics;
use super::operation::{ClientOperation, ServerOperation};
use super::request_info::{RequestInfo, UpstreamInfo};
use super::servers::ServerState;
use super::session::SessionGuard;
use super::shared::Core;
use super::status::StatusReport;

/// How to set telemetry up.
#[derive(Debug, Clone, Default)]
pub struct TelemetryOptions {
    /// Span export (from [`TraceExport::from_env`]); `None`: no spans.
    pub trace_export: Option<TraceExport>,
    /// The configured servers' names, in config order (more can come with
    /// [`Telemetry::server_state`]).
    pub servers: Vec<String>,
    /// The configured clients' names (`default` is always known).
    pub clients: Vec<String>,
}

/// Metrics, spans and status of one gateway.
///
/// With span export on, call [`Telemetry::shutdown`] before the last handle goes: dropped
/// without it, the SDK stops its export thread in the drop, which blocks (up to 5 s) the thread
/// that drops it.
#[derive(Debug)]
pub struct Telemetry {
    core: Arc<Core>,
}

impl Telemetry {
    /// Start telemetry: the metrics, and the span exporter when `options` has one (gRPC export
    /// must be started inside a Tokio runtime).
    ///
    /// # Errors
    /// The span exporter cannot be built.
    pub fn new(options: TelemetryOptions) -> Result<Arc<Self>, TelemetryError> {
        let metrics = Arc::new(Metrics::default());
        for name in &options.servers {
            metrics.servers.register(name);
        }
        for name in &options.clients {
            metrics.register_client(name);
        }
        let exporter = options
            .trace_export
            .as_ref()
            .map(|config| export::start(config, metrics.spans_dropped_counter()))
            .transpose()?;
        if let Some(config) = &options.trace_export {
            tracing::info!(
                endpoint = %config.endpoint,
                protocol = ?config.protocol,
                "exporting spans over OTLP"
            );
        }
        Ok(Arc::new(Self {
            core: Arc::new(Core {
                metrics,
                exporter,
                started: Instant::now(),
            }),
        }))
    }

    /// A downstream request begins. Call when it is received (after parsing, before routing
    /// work); finish the handle when its answer is sent.
    pub fn start_request(&self, info: &RequestInfo<'_>) -> ServerOperation {
        ServerOperation::start(&self.core, info)
    }

    /// An upstream request the gateway makes on its own (not for a downstream request: a
    /// refresh of a server's tools, a ping); for one that is, use
    /// [`ServerOperation::upstream`].
    pub fn start_upstream(&self, info: &UpstreamInfo<'_>) -> ClientOperation {
        ClientOperation::alone(&self.core, info)
    }

    /// A downstream session opened; it counts until the guard is dropped.
    pub fn session_opened(&self) -> SessionGuard {
        SessionGuard::open(&self.core)
    }

    /// A server is now in `state` (with `reason` for failed, needs login, restarting). Registers
    /// the name if new: pass config names only.
    pub fn server_state(&self, server: &str, state: ServerState, reason: Option<&str>) {
        self.core
            .metrics
            .servers
            .register(server)
            .set_state(state, reason);
    }

    /// A server has `tools` tools on the board now.
    pub fn server_tools(&self, server: &str, tools: usize) {
        self.core.metrics.servers.register(server).set_tools(tools);
    }

    /// A server was started again after it stopped.
    pub fn server_restarted(&self, server: &str) {
        self.core.metrics.servers.register(server).restarted();
    }

    /// A server was removed from the config (by a reload): `stopped`, no tools.
    pub fn server_removed(&self, server: &str) {
        let entry = self.core.metrics.servers.register(server);
        entry.set_state(ServerState::Stopped, None);
        entry.set_tools(0);
    }

    /// A server sent a message over its size limit. Only a server this gateway knows is
    /// counted (the hook that reports it is process-wide: another gateway's server is not ours).
    pub fn message_over_limit(&self, server: &str) {
        if let Some(entry) = self.core.metrics.servers.get(server) {
            entry.over_limit();
        }
    }

    /// The gateway refused a request.
    pub fn denied(&self, reason: DenyReason) {
        self.core.metrics.denied(reason);
    }

    /// A client of the config (a `pegboard_client` value).
    pub fn register_client(&self, name: &str) {
        self.core.metrics.register_client(name);
    }

    /// The metrics, in Prometheus's text format.
    #[must_use]
    pub fn render_metrics(&self) -> String {
        // Writing into a String does not fail; an empty answer would be the sign if it did.
        exposition::encode(&self.core.metrics).unwrap_or_default()
    }

    /// The status now.
    #[must_use]
    pub fn status(&self) -> StatusReport {
        StatusReport::collect(&self.core)
    }

    /// Whether spans are exported.
    #[must_use]
    pub fn exporting_spans(&self) -> bool {
        self.core.exporter.is_some()
    }

    /// The metric state (for tests and the load harness).
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.core.metrics
    }

    /// Export the spans still queued (at most `timeout`), then stop the exporter. Call once, at
    /// shutdown; spans ended later are dropped.
    pub async fn shutdown(&self, timeout: Duration) {
        let Some(exporter) = &self.core.exporter else {
            return;
        };
        let provider = exporter.provider.clone();
        // The SDK's shutdown blocks until the export thread is done: not on a runtime thread.
        let done = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(timeout));
        match done.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("span export did not shut down cleanly: {e}"),
            Err(e) => tracing::warn!("span export shutdown task failed: {e}"),
        }
    }

    /// Export the spans queued so far and wait (at most about 5 s) until that export ends.
    pub async fn flush(&self) {
        let Some(exporter) = &self.core.exporter else {
            return;
        };
        let provider = exporter.provider.clone();
        let done = tokio::task::spawn_blocking(move || provider.force_flush());
        if let Ok(Err(e)) = done.await {
            tracing::warn!("span export flush failed: {e}");
        }
    }
}
