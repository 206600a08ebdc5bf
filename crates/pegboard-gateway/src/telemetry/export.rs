//! OTLP export of spans (configured by [`TraceExport`]).
//!
//! Spans go through the SDK's batch processor: a bounded queue and a thread of its own that
//! exports, so a call never waits on the collector. In front of it a gate counts the spans
//! queued or being exported; when that reaches the queue's size, a span is dropped and counted
//! (`pegboard_spans_dropped_total`) instead of waiting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider, Span, SpanData,
    SpanExporter, SpanProcessor,
};

use super::error::TelemetryError;
use super::export_config::{OtlpProtocol, TraceExport};

/// A running export: the provider (to flush and shut down) and the tracer spans come from.
#[derive(Debug)]
pub struct Exporter {
    /// The provider.
    pub provider: SdkTracerProvider,
    /// The tracer.
    pub tracer: SdkTracer,
}

/// Start exporting as `config` says; `dropped` counts spans a full queue turned away.
/// gRPC needs a Tokio runtime (its connection runs there): call this from inside one.
///
/// # Errors
/// The exporter cannot be built (a bad endpoint), or gRPC outside a runtime.
pub fn start(config: &TraceExport, dropped: Arc<AtomicU64>) -> Result<Exporter, TelemetryError> {
    // The blocking HTTP client (and tonic over https) use rustls with the process's default
    // provider: ring, as the rest of PegBoard (see `http_client.rs`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = opentelemetry_otlp::SpanExporter::builder();
    let exporter = match config.protocol {
        OtlpProtocol::HttpProtobuf => builder
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(config.endpoint.clone())
            .with_timeout(config.timeout)
            .build(),
        OtlpProtocol::Grpc => {
            if tokio::runtime::Handle::try_current().is_err() {
                return Err(TelemetryError::NoRuntime);
            }
            builder
                .with_tonic()
                .with_endpoint(config.endpoint.clone())
                .with_timeout(config.timeout)
                .build()
        }
    }
    .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let pending = Arc::new(AtomicUsize::new(0));
    let batch = BatchConfigBuilder::default()
        .with_max_queue_size(config.max_queue)
        .with_max_export_batch_size(config.max_batch)
        .with_scheduled_delay(config.schedule_delay)
        .build();
    let counted = Counted {
        inner: exporter,
        pending: Arc::clone(&pending),
        failing: AtomicBool::new(false),
    };
    let gate = Gate {
        inner: BatchSpanProcessor::new(counted, batch),
        pending,
        cap: config.max_queue,
        dropped,
    };
    let provider = SdkTracerProvider::builder()
        .with_span_processor(gate)
        .with_sampler(config.sampler.clone())
        .with_resource(
            Resource::builder()
                .with_service_name(config.service_name.clone())
                .build(),
        )
        .build();
    let tracer = provider.tracer(env!("CARGO_PKG_NAME"));
    Ok(Exporter { provider, tracer })
}

/// The batch processor behind a gate that never lets more spans in than its queue holds.
#[derive(Debug)]
struct Gate {
    inner: BatchSpanProcessor,
    /// Spans handed to `inner` and not yet through an export.
    pending: Arc<AtomicUsize>,
    cap: usize,
    dropped: Arc<AtomicU64>,
}

impl SpanProcessor for Gate {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if self.pending.fetch_add(1, Ordering::AcqRel) >= self.cap {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The exporter, counting what leaves the queue (and saying when exports start or stop failing).
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    pending: Arc<AtomicUsize>,
    failing: AtomicBool,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        self.pending.fetch_sub(n, Ordering::AcqRel);
        match &result {
            Err(e) if !self.failing.swap(true, Ordering::Relaxed) => {
                tracing::warn!("cannot export spans (OTLP): {e}; {n} spans lost, will keep trying");
            }
            Ok(()) if self.failing.swap(false, Ordering::Relaxed) => {
                tracing::info!("exporting spans (OTLP) again");
            }
            _ => {}
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
