//! Why telemetry could not start, or `pegboard status` could not read the status.

use std::net::SocketAddr;

/// A telemetry error, worded for the person starting the gateway.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An `OTEL_*` variable has a value PegBoard cannot use.
    #[error("{name}={value:?} cannot be used: expected {expected}")]
    BadVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What would do.
        expected: &'static str,
    },
    /// The OTLP exporter could not be built.
    #[error("cannot set up the OTLP span exporter: {0}")]
    Exporter(String),
    /// gRPC export was asked for outside a Tokio runtime.
    #[error("OTLP over gRPC needs a Tokio runtime: start telemetry from inside one")]
    NoRuntime,
    /// The metrics listener would be reachable from other machines with no token to guard it.
    #[error(
        "--metrics {0} is reachable from other machines: give a bearer token (--token or \
         PEGBOARD_TOKEN) to guard it, or bind it to 127.0.0.1"
    )]
    Unguarded(SocketAddr),
    /// The metrics listener's token is blank.
    #[error("the bearer token for --metrics is empty: give a real token, or bind to 127.0.0.1")]
    BlankToken,
    /// The metrics listener could not bind.
    #[error("cannot listen for --metrics on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The metrics listener failed while serving.
    #[error("the --metrics listener stopped: {0}")]
    Serve(std::io::Error),
    /// `pegboard status` could not read the status.
    #[error("cannot read the status from {url}: {reason}")]
    Fetch {
        /// Where from.
        url: String,
        /// Why (connection refused: is `pegboard serve --metrics` running?).
        reason: String,
    },
}
