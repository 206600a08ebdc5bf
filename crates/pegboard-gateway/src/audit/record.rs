//! One audit record: who called what, on which server, how it ended, how long it took.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

/// How a request ended, as the audit log's `outcome` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The server answered with a result.
    Ok,
    /// The tool ran and reported an error (`isError: true`).
    ToolError,
    /// A JSON-RPC error (from the server or the gateway).
    Error,
    /// Refused by policy or a limit, never sent to a server.
    Denied,
    /// The call's deadline passed.
    Timeout,
    /// The client cancelled it (or went away).
    Cancelled,
}

impl Outcome {
    /// The word written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Error => "error",
            Outcome::Denied => "denied",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// A request's arguments as the pipeline has them; only kept when the log asks for them
/// ([`super::AuditLog::wants_arguments`]), and turned into a hash or a line off the call path.
#[derive(Debug, Clone)]
pub enum AuditArguments {
    /// The JSON text of the arguments (as received on the express lane).
    Raw(Bytes),
    /// The arguments as parsed (rmcp's typed path).
    Value(Arc<serde_json::Value>),
}

/// One line of the audit log. Built by the pipeline when a request ends (or is refused), handed
/// to [`super::AuditLog::record`]; every field is cheap to clone into it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuditRecord {
    /// When the request arrived.
    pub at: SystemTime,
    /// The client's name.
    pub client: Arc<str>,
    /// The downstream session (`Mcp-Session-Id`), if any.
    pub session: Option<Arc<str>>,
    /// The MCP method, e.g. `tools/call`.
    pub method: Cow<'static, str>,
    /// The board name of the tool or prompt, or the resource URI.
    pub name: Arc<str>,
    /// The server (namespace) it went to, if it was resolved.
    pub server: Option<Arc<str>>,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub elapsed: Duration,
    /// Bytes of the request's params.
    pub bytes_in: u64,
    /// Bytes of the answer.
    pub bytes_out: u64,
    /// The arguments (only when the log wants them).
    pub arguments: Option<AuditArguments>,
    /// What made the request inside the gateway, when not the client directly: `code` for a
    /// call a `run_code` script made.
    pub via: Option<&'static str>,
}

impl AuditRecord {
    /// A record of `method` on `name` by `client`, arrived at `at`, with every other field
    /// empty (`ok`, zero bytes, zero time): set the others as the request goes.
    pub fn new(
        client: Arc<str>,
        method: impl Into<Cow<'static, str>>,
        name: Arc<str>,
        at: SystemTime,
    ) -> Self {
        Self {
            at,
            client,
            session: None,
            method: method.into(),
            name,
            server: None,
            outcome: Outcome::Ok,
            elapsed: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
            arguments: None,
            via: None,
        }
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn new() {
        use crate::audit::{AuditRecord, Outcome};
        let mut r = AuditRecord::new(
            "ci-bot".into(),
            "tools/call",
            "units-convert".into(),
            std::time::SystemTime::now(),
        );
        r.outcome = Outcome::Denied;
        assert_eq!(r.outcome.as_str(), "denied");
    }
}
