//! [`Watch`]: what the pipeline records of one call, whichever path carries it — the client's
//! limits (a place among its `maxConcurrent`, its `callsPerMinute`), the request's metrics and
//! spans, the trace context the upstream request carries, and the audit line. One object per
//! call, made where the call enters the pipeline and ended where it ends; with telemetry, audit
//! and limits off it holds nothing and records nothing.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use pegboard::PegBoardError;
use rmcp::ServiceError;

use super::caller::Caller;
use super::hooks::Hooks;
use super::route::Route;
use crate::audit::{AuditArguments, AuditRecord, Outcome};
use crate::identity::{CallAdmission, Client};
use crate::protocol::failure::Failure;
use crate::telemetry::{
    ClientOperation, ErrorType, JsonRpcId, RequestInfo, ServerOperation, TraceContext, Transport,
    UpstreamInfo,
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
    /// The client's trace context (from `_meta` or the HTTP headers).
    incoming: Option<TraceContext>,
    /// The audit line's parts, when the audit log is on.
    audit: Option<Audit>,
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
}

impl<'a> Caller<'a> {
    /// Who makes this caller's calls.
    pub(crate) fn who(&self) -> Who<'a> {
        Who {
            client: self.client,
            hooks: self.hooks,
            session_id: self.session_id,
            transport: self.transport,
        }
    }
}

impl Watch {
    /// A `tools/call` of `name` (request `id`) by `caller` begins, with the client's trace
    /// context `incoming`; `route` is where it goes when that is known already (the lane's
    /// calls: their metrics then start with their labels). `arguments` are taken only when the
    /// audit log keeps them.
    ///
    /// # Errors
    /// [`Failure::Denied`] when the client's limits refuse the call (the refusal is recorded).
    pub(crate) fn begin(
        who: Who<'_>,
        (name, route): (&str, Option<&Route>),
        id: Option<JsonRpcId<'_>>,
        incoming: Option<TraceContext>,
        arguments: impl FnOnce() -> Option<AuditArguments>,
    ) -> Result<Self, Box<(Self, Failure)>> {
        let Who {
            client,
            hooks,
            session_id,
            transport,
        } = who;
        // A call its client's limits refuse is recorded as never routed, on both paths.
        let admission = client.begin_call();
        let route = route.filter(|_| admission.is_ok());
        let op = hooks.telemetry.as_ref().map(|t| {
            let mut info = RequestInfo::new("tools/call", transport);
            info.client = Some(client.name());
            info.session_id = session_id;
            info.request_id = id;
            info.parent = incoming.as_ref();
            if let Some(route) = route {
                (info.tool, info.server) = (Some(name), Some(route.server_name()));
                info.original = Some(route.target.original.as_str());
            }
            t.start_request(&info)
        });
        let audit = hooks.audit.as_ref().map(|log| Audit {
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
        });
        let records = (op.is_some() || audit.is_some() || incoming.is_some()).then(|| {
            Box::new(Records {
                op,
                upstream: None,
                incoming,
                audit,
            })
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
            op.routed(server, name, route.target.original.as_str());
        }
        records.upstream = records.op.as_ref().map(|op| {
            let mut info = UpstreamInfo::new("tools/call", server, route.transport());
            info.tool = Some(route.target.original.as_str());
            if let Some((host, port)) = route.hub.as_ref().and_then(|hub| hub.address()) {
                (info.server_address, info.server_port) = (Some(host), port);
            }
            op.upstream(&info)
        });
        crate::telemetry::upstream_trace_context(
            records.upstream.as_ref(),
            records.incoming.as_ref(),
        )
    }

    /// The call ended as `ended`; `bytes_in` and `bytes_out` are the request's and answer's
    /// sizes as the client sent and got them.
    pub(crate) fn end(self, ended: Ended<'_>, bytes_in: usize, bytes_out: usize) {
        let Some(records) = self.records else {
            return;
        };
        let Records {
            op,
            upstream,
            audit,
            ..
        } = *records;
        let error = ended.error_type();
        if op.is_none() && upstream.is_none() && audit.is_none() {
            return;
        }
        // All end here: one clock read for the metrics of both requests and the audit line.
        let end = Instant::now();
        if let Some(upstream) = upstream {
            upstream.finish_at(error, None, end);
        }
        if let Some(op) = op {
            op.finish_at(error, None, end);
        }
        if let (Some(audit), Some(outcome)) = (audit, ended.outcome()) {
            let mut record = AuditRecord::new(audit.client, "tools/call", audit.name, audit.at);
            record.session = audit.session;
            record.server = audit.server;
            record.outcome = outcome;
            record.elapsed = end.saturating_duration_since(audit.started);
            record.bytes_in = u64::try_from(bytes_in).unwrap_or(u64::MAX);
            record.bytes_out = u64::try_from(bytes_out).unwrap_or(u64::MAX);
            record.arguments = audit.arguments;
            audit.log.record(record);
        }
    }
}
