//! [`Watch`]: what the pipeline records of one call, whichever path carries it — the client's
//! limits (a place among its `maxConcurrent`, its `callsPerMinute`), the request's metrics and
//! spans, the trace context the upstream request carries, and the audit line. One object per
//! call, made where the call enters the pipeline and ended where it ends; with telemetry, audit
//! and limits off it holds nothing and records nothing.

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use pegboard::PegBoardError;
use rmcp::ServiceError;

use super::caller::Caller;
use super::hooks::Hooks;
use super::route::Route;
use crate::audit::{AuditArguments, AuditRecord, Outcome};
use crate::identity::{CallAdmission, Client};
use crate::limits::PreAdmitted;
use crate::protocol::failure::Failure;
use crate::telemetry::{
    ClientOperation, ErrorType, JsonRpcId, Method, RequestInfo, ServerOperation, TraceContext,
    Transport, UpstreamInfo,
};

/// How a call ended.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ended<'a> {
    /// The server's result (`is_error`: its `isError`).
    Result {
        /// Whether the result says the tool failed.
        is_error: bool,
    },
    /// The server answered a JSON-RPC error with this code.
    ServerError(i64),
    /// No result (see [`Failure`]).
    Failed(&'a Failure),
}

impl Ended<'_> {
    /// The error type metrics and spans record (`None`: ok).
    fn error_type(self) -> Option<ErrorType> {
        match self {
            Ended::Result { is_error: false } => None,
            Ended::Result { is_error: true } => Some(ErrorType::ToolError),
            Ended::ServerError(code) => Some(ErrorType::from_code(code)),
            Ended::Failed(failure) => Some(match failure {
                Failure::Cancelled => ErrorType::Cancelled,
                Failure::Denied(_) | Failure::Hidden(_) => ErrorType::Denied,
                Failure::Board(PegBoardError::Timeout { .. }) => ErrorType::Timeout,
                Failure::Board(PegBoardError::ServiceClosed { .. }) => ErrorType::ServerUnavailable,
                Failure::Board(PegBoardError::ServiceError {
                    source: ServiceError::McpError(e),
                    ..
                }) => ErrorType::from_code(i64::from(e.code.0)),
                Failure::Board(PegBoardError::ToolNotFound { .. })
                | Failure::Board(PegBoardError::InvalidArguments { .. }) => {
                    ErrorType::InvalidParams
                }
                Failure::Board(_) | Failure::Open(_) | Failure::Unanswered(_) => ErrorType::Other,
            }),
        }
    }

    /// The audit line's outcome; `None`: the call neither reached a server nor was refused by
    /// policy (a name not on the board), so it has no line.
    pub(crate) fn outcome(self) -> Option<Outcome> {
        Some(match self {
            Ended::Result { is_error: false } => Outcome::Ok,
            Ended::Result { is_error: true } => Outcome::ToolError,
            Ended::ServerError(_) => Outcome::Error,
            Ended::Failed(failure) => match failure {
                Failure::Cancelled => Outcome::Cancelled,
                Failure::Denied(_) | Failure::Hidden(_) => Outcome::Denied,
                Failure::Board(PegBoardError::Timeout { .. }) => Outcome::Timeout,
                Failure::Board(
                    PegBoardError::ToolNotFound { .. }
                    | PegBoardError::PromptNotFound { .. }
                    | PegBoardError::ResourceNotFound { .. }
                    | PegBoardError::InvalidArguments { .. },
                ) => return None,
                Failure::Board(_) | Failure::Open(_) | Failure::Unanswered(_) => Outcome::Error,
            },
        })
    }
}

/// One call's records (see the module docs).
#[must_use = "end it with how the call ended"]
pub(crate) struct Watch {
    /// What is recorded: nothing (no allocation) unless telemetry, the audit log or an incoming
    /// trace context asks for something.
    records: Option<Box<Records>>,
    /// The call's place among its client's `maxConcurrent`, freed when the watch ends.
    _admission: Option<CallAdmission>,
}

struct Records {
    /// The downstream request's metrics and span.
    op: Option<ServerOperation>,
    /// The upstream request's, once routed.
    upstream: Option<ClientOperation>,
    /// The client's trace context (from `_meta` or the HTTP headers). Boxed, as the audit's
    /// parts: what most calls lack takes a pointer's room, and the records fit in three cache
    /// lines (a call with metrics on writes and reads them all).
    incoming: Option<Box<TraceContext>>,
    /// The audit line's parts, when the audit log is on.
    audit: Option<Box<Audit>>,
    /// The operation started with its route (the lane's calls), so [`Watch::routed`] need not
    /// compare its names with the route's again.
    begun_routed: bool,
}

struct Audit {
    log: Arc<crate::audit::AuditLog>,
    client: Arc<str>,
    session: Option<Arc<str>>,
    name: Arc<str>,
    server: Option<Arc<str>>,
    at: SystemTime,
    started: Instant,
    arguments: Option<AuditArguments>,
    via: Option<&'static str>,
}

/// Who makes a call, as its records name it.
#[derive(Clone, Copy)]
pub(crate) struct Who<'a> {
    /// The client.
    pub(crate) client: &'a Arc<Client>,
    /// What the gateway records.
    pub(crate) hooks: &'a Hooks,
    /// The session's id (HTTP).
    pub(crate) session_id: Option<&'a str>,
    /// The front.
    pub(crate) transport: Transport,
    /// What made the call inside the gateway (`code`), for the audit line.
    pub(crate) via: Option<&'static str>,
    /// The call's admission, when it was taken before the call reached the pipeline (a
    /// fleet-limited client's, counted in the store: see `crate::limits::shared`).
    pub(crate) admitted: Option<&'a PreAdmitted<CallAdmission>>,
}

impl<'a> Caller<'a> {
    /// Who makes this caller's calls.
    pub(crate) fn who(&self) -> Who<'a> {
        Who {
            client: self.client,
            hooks: self.hooks,
            session_id: self.session_id,
            transport: self.transport,
            via: self.via,
            admitted: None,
        }
    }
}

impl Audit {
    // The audit's parts are made and written out of the line of code a call runs through with
    // metrics only (see `telemetry/operation.rs`).
    #[cold]
    #[inline(never)]
    fn begin(
        log: &Arc<crate::audit::AuditLog>,
        client: &Client,
        session_id: Option<&str>,
        name: &str,
        arguments: impl FnOnce() -> Option<AuditArguments>,
    ) -> Box<Self> {
        Box::new(Self {
            log: Arc::clone(log),
            client: Arc::clone(client.name_arc()),
            session: session_id.map(Arc::from),
            name: Arc::from(name),
            server: None,
            at: SystemTime::now(),
            started: Instant::now(),
            arguments: if log.wants_arguments() {
                arguments()
            } else {
                None
            },
            via: None,
        })
    }

    /// Write the line of a call that ended at `end` with `outcome`.
    #[cold]
    #[inline(never)]
    fn write(self, outcome: Outcome, end: Instant, bytes_in: usize, bytes_out: usize) {
        let mut record = AuditRecord::new(self.client, "tools/call", self.name, self.at);
        record.session = self.session;
        record.server = self.server;
        record.outcome = outcome;
        record.elapsed = end.saturating_duration_since(self.started);
        record.bytes_in = u64::try_from(bytes_in).unwrap_or(u64::MAX);
        record.bytes_out = u64::try_from(bytes_out).unwrap_or(u64::MAX);
        record.arguments = self.arguments;
        record.via = self.via;
        self.log.record(record);
    }
}

impl Watch {
    /// A `tools/call` of `name` (request `id`) by `caller` begins, with the client's trace
    /// context `incoming`; `route` is where it goes when that is known already, with the instant
    /// the call's time started (the lane's calls: their metrics then start with their labels,
    /// at that instant, and their upstream request's with them). `arguments` are taken only
    /// when the audit log keeps them.
    ///
    /// # Errors
    /// [`Failure::Denied`] when the client's limits refuse the call (the refusal is recorded).
    pub(crate) fn begin(
        who: Who<'_>,
        (name, route): (&str, Option<(&Route, Instant)>),
        id: Option<JsonRpcId<'_>>,
        incoming: Option<TraceContext>,
        arguments: impl FnOnce() -> Option<AuditArguments>,
    ) -> Result<Self, Box<(Self, Failure)>> {
        let Who {
            client,
            hooks,
            session_id,
            transport,
            via,
            admitted,
        } = who;
        // A call its client's limits refuse is recorded as never routed, on both paths.
        let admission = match admitted.and_then(PreAdmitted::take) {
            Some(admission) => admission,
            None => client.begin_call(),
        };
        let route = route.filter(|_| admission.is_ok());
        // Filled where they are, in their box: the records are a few hundred bytes, which a
        // move would copy.
        let wanted = hooks.telemetry.is_some() || hooks.audit.is_some() || incoming.is_some();
        let records = wanted.then(|| {
            let mut records = Records::boxed(incoming, route.is_some());
            if let Some(t) = &hooks.telemetry {
                let mut info = RequestInfo::new(Method::ToolsCall, transport);
                info.client = Some(client.name());
                info.session_id = session_id;
                info.request_id = id;
                info.parent = records.incoming.as_deref();
                info.via = via;
                if let Some((route, started)) = route {
                    (info.tool, info.server) = (Some(name), Some(route.server_name()));
                    info.original = Some(route.target.original.as_str());
                    info.memo = route.memo();
                    info.started = Some(started);
                }
                records.op = Some(t.start_request(&info));
            }
            if let Some(log) = &hooks.audit {
                records.audit = Some(Audit::begin(log, client, session_id, name, arguments));
                if let Some(audit) = &mut records.audit {
                    audit.via = via;
                }
            }
            records
        });
        let mut watch = Self {
            records,
            _admission: None,
        };
        match admission {
            Ok(admission) => {
                watch._admission = Some(admission);
                Ok(watch)
            }
            Err(limit) => Err(Box::new((watch, Failure::Denied(limit.to_string())))),
        }
    }

    /// The call has ended: its place among a fleet-wide `maxConcurrent` is given back now, and
    /// the store has it before the answer goes out (the client's next call, on any replica,
    /// finds it free, as on one replica). Free for any other call: nothing to wait for.
    pub(crate) async fn release_shared_place(&mut self) {
        if self
            ._admission
            .as_ref()
            .is_some_and(CallAdmission::holds_shared_place)
            && let Some(admission) = self._admission.take()
        {
            admission.release().await;
        }
    }

    /// The call of `name` (on the board) goes to `route` under the tool's original name: the
    /// trace context its upstream request carries (the gateway's CLIENT span in the client's
    /// trace; a new span id in it when spans are off; nothing without an incoming trace).
    pub(crate) fn routed(&mut self, route: &Route, name: &str) -> Option<TraceContext> {
        let records = self.records.as_deref_mut()?;
        let server = route.server_name();
        if let Some(audit) = &mut records.audit {
            audit.server = Some(Arc::from(server));
        }
        if let Some(op) = &mut records.op {
            if !records.begun_routed {
                op.routed(server, (name, route.target.original.as_str()), route.memo());
            }
            let mut info = UpstreamInfo::new(Method::ToolsCall, server, route.transport());
            info.tool = Some(route.target.original.as_str());
            // Begun with its route, the call makes nothing but the upstream request's line
            // before sending it: that request starts with the call (one clock read less).
            if records.begun_routed {
                info.started = Some(op.started());
            }
            // The server's address is an attribute of the span only.
            if op.has_span()
                && let Some((host, port)) = route.hub.as_ref().and_then(|hub| hub.address())
            {
                (info.server_address, info.server_port) = (Some(host), port);
            }
            records.upstream = Some(op.routed_upstream(&info, records.incoming.as_deref()));
        }
        crate::telemetry::upstream_trace_context(
            records.upstream.as_ref(),
            records.incoming.as_deref(),
        )
    }

    /// The call ended as `ended`; `bytes_in` and `bytes_out` are the request's and answer's
    /// sizes as the client sent and got them.
    pub(crate) fn end(mut self, ended: Ended<'_>, bytes_in: usize, bytes_out: usize) {
        let Some(mut records) = self.records.take() else {
            return;
        };
        if records.op.is_some() || records.upstream.is_some() || records.audit.is_some() {
            records.end(ended, bytes_in, bytes_out);
        }
        records.keep();
    }
}

impl Watch {
    /// Drop the watch without its audit line: the call was never made on this path (the
    /// lane could not take it after all, and rmcp's way records it).
    pub(crate) fn abandon(mut self) {
        drop(self.records.take());
    }
}

impl Drop for Watch {
    /// A call whose future was dropped before it ended (a `run_code` cancelled while its
    /// script's call was in flight) ended as cancelled: its metrics, spans and audit line say
    /// so, as a call that saw its cancellation does.
    fn drop(&mut self) {
        if let Some(mut records) = self.records.take() {
            records.end(Ended::Failed(&Failure::Cancelled), 0, 0);
            records.keep();
        }
    }
}

thread_local! {
    /// The records of the last call this thread ended, emptied, for its next call: a call with
    /// metrics on allocates nothing more than one without. Callgrind found the allocation and
    /// free of each call's records in glibc's slow path (outside its per-thread cache), with
    /// the heap's own lines that walks.
    static SPARE: Cell<Option<Box<Records>>> = const { Cell::new(None) };
}

impl Records {
    /// New records in this thread's spare box, if it has one.
    fn boxed(incoming: Option<TraceContext>, begun_routed: bool) -> Box<Self> {
        let fresh = Self {
            op: None,
            upstream: None,
            incoming: incoming.map(Box::new),
            audit: None,
            begun_routed,
        };
        match SPARE.try_with(Cell::take).ok().flatten() {
            Some(mut spare) => {
                *spare = fresh;
                spare
            }
            None => Box::new(fresh),
        }
    }

    /// Empty the box and make it this thread's spare.
    fn keep(mut self: Box<Self>) {
        self.op = None;
        self.upstream = None;
        self.incoming = None;
        self.audit = None;
        let _ = SPARE.try_with(|spare| spare.set(Some(self)));
    }

    fn end(&mut self, ended: Ended<'_>, bytes_in: usize, bytes_out: usize) {
        let error = ended.error_type();
        // All end here: one clock read for the metrics of both requests and the audit line.
        // Ended where they are (the records are not moved out of their box to end them).
        let end = Instant::now();
        if let Some(upstream) = &mut self.upstream {
            upstream.record(error, None, end);
        }
        if let Some(op) = &mut self.op {
            op.record(error, None, end);
        }
        if let (Some(audit), Some(outcome)) = (self.audit.take(), ended.outcome()) {
            audit.write(outcome, end, bytes_in, bytes_out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_box_comes_back_with_nothing_of_the_call_before() {
        let trace = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            None,
            None,
        );
        let first = Records::boxed(trace, true);
        assert!(first.incoming.is_some());
        let at: *const Records = &*first;
        first.keep();
        let second = Records::boxed(None, false);
        assert!(std::ptr::eq(&*second, at), "the thread's spare box");
        assert!(second.incoming.is_none() && !second.begun_routed);
        assert!(second.op.is_none() && second.upstream.is_none() && second.audit.is_none());
    }
}
