//! [`ReadAudit`]: the audit line of a `prompts/get` or `resources/read`, as [`super::watch`]
//! writes one for a `tools/call`: who asked, for what, which server answered and how it ended.
//! Nothing is allocated or measured unless the audit log is on.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use serde::Serialize;

use super::watch::{Ended, Who};
use crate::audit::{AuditLog, AuditRecord};
use crate::protocol::failure::Failure;

/// One `prompts/get` or `resources/read` being audited (see the module docs).
#[must_use = "end it with how the request ended"]
pub(crate) struct ReadAudit {
    log: Arc<AuditLog>,
    record: AuditRecord,
    started: Instant,
}

impl ReadAudit {
    /// `method` on `name` (a prompt's board name, a resource's URI) by `who` begins, with the
    /// request's params `params` (measured for `bytes_in`); `None` when the audit log is off.
    pub(crate) fn begin(
        who: Who<'_>,
        method: &'static str,
        name: &str,
        params: &impl Serialize,
    ) -> Option<Self> {
        let log = Arc::clone(who.hooks.audit.as_ref()?);
        let mut record = AuditRecord::new(
            Arc::clone(who.client.name_arc()),
            method,
            Arc::from(name),
            SystemTime::now(),
        );
        record.session = who.session_id.map(Arc::from);
        record.bytes_in = size_of_json(params);
        Some(Self {
            log,
            record,
            started: Instant::now(),
        })
    }

    /// The request went to `server`.
    pub(crate) fn server(&mut self, server: Option<&str>) {
        self.record.server = server.map(Arc::from);
    }

    /// The request ended with `outcome` (its answer, or why there is none), the answer `size`
    /// bytes as JSON. A name not on the board (neither reaching a server nor refused by policy)
    /// has no line, as for a call.
    pub(crate) fn end<T>(mut self, outcome: &Result<T, Failure>, size: impl FnOnce(&T) -> u64) {
        let ended = match outcome {
            Ok(answer) => {
                self.record.bytes_out = size(answer);
                Ended::Result { is_error: false }
            }
            Err(failure) => Ended::Failed(failure),
        };
        let Some(outcome) = ended.outcome() else {
            return;
        };
        self.record.outcome = outcome;
        self.record.elapsed = self.started.elapsed();
        self.log.record(self.record);
    }
}

/// `value`'s size as JSON, in bytes.
pub(crate) fn size_of_json(value: &impl Serialize) -> u64 {
    serde_json::to_vec(value).map_or(0, |json| u64::try_from(json.len()).unwrap_or(u64::MAX))
}
