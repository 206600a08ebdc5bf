//! The audit log (`--audit-log PATH|-`, `--audit-arguments hash|full`): one JSON line per
//! request that reaches a server or is refused by policy.
//!
//! ```json
//! {"ts":"2026-01-01T00:00:00.123Z","client":"ci-bot","session":"3f2a…","method":"tools/call",
//!  "name":"units-convert","server":"units","outcome":"ok","ms":12.345,"bytes_in":40,"bytes_out":120}
//! ```
//!
//! The pipeline builds an `AuditRecord` when a request ends and hands it to
//! `AuditLog::record`, which never blocks or fails the call; a thread of its own formats and
//! writes. `ts` is RFC 3339 in UTC; `outcome` is one of `Outcome`; `arguments` (with
//! `hash`) is the SHA-256 in hex of the arguments' canonical JSON (keys sorted, no spaces).

mod canonical;
mod line;
mod log;
mod record;
mod sink;
#[cfg(test)]
mod tests;

pub use line::ArgumentsMode;
pub(crate) use log::{AuditLog, DEFAULT_QUEUE};
pub(crate) use record::{AuditArguments, AuditRecord, Outcome};
pub use sink::AuditTarget;
