//! Why a call has no result, and how its client reads that: one [`Failure`], one [`Deadline`],
//! one wording ([`Failure::answer`]), whichever way the call went (rmcp's, the express lane's,
//! a task, a bridge, rounds of `input_required`).

use std::time::Duration;

use pegboard::{PegBoardError, ToolTarget};
use rmcp::{
    ErrorData, ServiceError,
    model::{CallToolResult, ContentBlock},
};
use serde_json::json;
use tokio::time::Instant;

/// The JSON-RPC error code of a call refused by the client's limits (a server error code, as
/// JSON-RPC reserves -32000..-32099 for them).
pub(crate) const LIMITED: i32 = -32029;

/// Why a forwarded request has no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The board refused (no such tool, bad arguments) or the server failed (its error, a
    /// timeout, a closed connection).
    Board(PegBoardError),
    /// The client cancelled, or its session ended.
    Cancelled,
    /// A per-client server: the session's own connection could not be opened (why, for the caller).
    Open(String),
    /// The server needs the client's input (`input_required`) and the gateway could not get it
    /// (why, for the caller).
    Unanswered(String),
    /// The client's limits refused the call (which limit, and when to try again).
    Denied(String),
    /// A name the client may not see: answered exactly as a name that is not on the board
    /// (this error), recorded as refused.
    Hidden(PegBoardError),
}

impl From<PegBoardError> for Failure {
    fn from(e: PegBoardError) -> Self {
        Self::Board(e)
    }
}

impl Failure {
    /// The answer to a `tools/call` of `tool` that failed this way: a bad request is a protocol
    /// error; a server that could not be reached, or that failed, is a tool result with
    /// `isError`, so the model reads why and can carry on; the server's own error passes as it
    /// is.
    pub(crate) fn answer(self, tool: &str) -> Result<CallToolResult, ErrorData> {
        self.answer_ref(tool)
    }

    /// [`Failure::answer`], leaving the failure as it is (for its records).
    pub(crate) fn answer_ref(&self, tool: &str) -> Result<CallToolResult, ErrorData> {
        let error = match self {
            Self::Board(error) | Self::Hidden(error) => error,
            Self::Denied(why) => {
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode(LIMITED),
                    why.clone(),
                    Some(json!({ "tool": tool })),
                ));
            }
            Self::Cancelled => {
                return Err(ErrorData::internal_error(
                    "request cancelled by the client",
                    None,
                ));
            }
            Self::Open(why) | Self::Unanswered(why) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(why.clone())]));
            }
        };
        match error {
            PegBoardError::ToolNotFound { .. } | PegBoardError::InvalidArguments { .. } => Err(
                ErrorData::invalid_params(error.to_string(), Some(json!({ "tool": tool }))),
            ),
            PegBoardError::ServiceError {
                source: ServiceError::McpError(upstream),
                ..
            } => Err(upstream.clone()),
            other => Ok(CallToolResult::error(vec![ContentBlock::text(
                other.to_string(),
            )])),
        }
    }
}

/// Why the server of `target` gave no result for `name`, as the board words it.
pub(crate) fn upstream_failed(target: &ToolTarget, name: &str, source: ServiceError) -> Failure {
    let namespace = target.namespace.as_deref().map(str::to_string);
    match source {
        ServiceError::TransportClosed => PegBoardError::ServiceClosed { namespace },
        source => PegBoardError::ServiceError {
            tool: name.to_string(),
            namespace,
            source,
        },
    }
    .into()
}

/// The end of one call's time: the board's call timeout for its server, counted from when the
/// call entered the pipeline (before anything is sent), whichever way it then goes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    /// The instant and the timeout it ends; `None`: no timeout.
    end: Option<(Instant, Duration)>,
}

impl Deadline {
    /// The deadline of a call to `target` starting now.
    pub(crate) fn start(target: &ToolTarget) -> Self {
        Self::start_at(target, Instant::now())
    }

    /// The deadline of a call to `target` that started at `now` (read by its caller, who
    /// times the call with it too).
    pub(crate) fn start_at(target: &ToolTarget, now: Instant) -> Self {
        Self::after_from(target.timeout, now)
    }

    /// A deadline `timeout` from now (`None`: never).
    pub(crate) fn after(timeout: Option<Duration>) -> Self {
        Self::after_from(timeout, Instant::now())
    }

    fn after_from(timeout: Option<Duration>, now: Instant) -> Self {
        Self {
            end: timeout.and_then(|after| Some((now.checked_add(after)?, after))),
        }
    }

    /// The instant, if there is one.
    pub(crate) fn instant(&self) -> Option<Instant> {
        self.end.map(|(at, _)| at)
    }

    /// The timeout, if there is one.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.end.map(|(_, after)| after)
    }

    /// Done when the deadline has passed (never, without one).
    pub(crate) async fn passed(&self) {
        match self.end {
            Some((at, _)) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// Run `work` until the deadline: `None` when it passed first.
    ///
    /// Not an `async fn`: its state would hold `work` twice (the argument, and the timer's
    /// copy it moved into), which made a lane call's future too large for the allocator's
    /// fast path (1,328 bytes where its per-thread cache takes up to 1,032).
    pub(crate) fn run<F: Future>(&self, work: F) -> impl Future<Output = Option<F::Output>> {
        use futures::future::{Either, FutureExt};
        match self.end {
            Some((at, _)) => Either::Left(tokio::time::timeout_at(at, work).map(Result::ok)),
            None => Either::Right(work.map(Some)),
        }
    }

    /// The failure of `operation` (a tool, a prompt, a URI) on the server of `namespace` whose
    /// deadline passed: the one wording of a timeout, whichever way the request went.
    pub(crate) fn expired(&self, namespace: Option<&str>, operation: &str) -> Failure {
        PegBoardError::Timeout {
            operation: operation.to_string(),
            namespace: namespace.map(str::to_string),
            after: self.timeout().unwrap_or_default(),
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_request_is_a_protocol_error_and_a_failed_server_a_tool_error() {
        let missing = Failure::from(PegBoardError::ToolNotFound {
            name: "x".into(),
            suggestions: Vec::new(),
        });
        let error = missing.answer("x").expect_err("a protocol error");
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        let closed = Failure::from(PegBoardError::ServiceClosed {
            namespace: Some("web".into()),
        });
        let result = closed.answer("web-search").expect("a tool result");
        assert_eq!(result.is_error, Some(true));
        let upstream = ErrorData::invalid_request("the server's own words", None);
        let passed = Failure::from(PegBoardError::ServiceError {
            tool: "web-search".into(),
            namespace: None,
            source: ServiceError::McpError(upstream.clone()),
        })
        .answer("web-search")
        .expect_err("the server's error");
        assert_eq!(passed, upstream);
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_ends_work_once_and_words_the_timeout_as_the_board_does() {
        let deadline = Deadline::after(Some(Duration::from_secs(2)));
        assert_eq!(deadline.run(std::future::pending::<()>()).await, None);
        assert_eq!(deadline.run(async { 7 }).await, Some(7));
        assert_eq!(Deadline::after(None).run(async { 7 }).await, Some(7));
        assert_eq!(deadline.timeout(), Some(Duration::from_secs(2)));
    }
}
