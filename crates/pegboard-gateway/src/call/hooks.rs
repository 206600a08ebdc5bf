//! [`Hooks`]: what the gateway records of every call (built once with the gateway, shared by every
//! session): telemetry and the audit log, each off (`None`) unless asked for.

use std::sync::Arc;

use crate::audit::AuditLog;
use crate::telemetry::Telemetry;

/// The gateway's recorders (see the module docs).
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    /// Metrics and spans (`--metrics`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub(crate) telemetry: Option<Arc<Telemetry>>,
    /// The audit log (`--audit-log`).
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// The fleet's shared state (`--store`), when there is one.
    #[cfg(feature = "store")]
    pub(crate) store: Option<crate::store::Store>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("telemetry", &self.telemetry.is_some())
            .field("audit", &self.audit.is_some())
            .finish_non_exhaustive()
    }
}
