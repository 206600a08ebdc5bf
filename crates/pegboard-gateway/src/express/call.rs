//! One `tools/call` on the express lane: the pipeline's steps (`crate::call`: the route, one
//! deadline, the flight that ties the server's requests to the call, one wording of failures,
//! the result as the board shows it) with the lane's transport (the request and its answer as
//! bytes, past rmcp).

use std::future::Future;
use std::sync::Arc;

use pegboard::{PegBoard, PegBoardError};
use rmcp::model::{CallToolResult, NumberOrString, ProgressToken, RequestId};
use rmcp::{ErrorData, ServiceError};

use axum::body::Bytes;

use super::request::{self, Call};
use crate::{
    audit::AuditArguments,
    call::{
        result,
        route::Route,
        watch::{Ended, Watch, Who},
    },
    guards::caps,
    io::writer::LineOut,
    protocol::failure::{Deadline, Failure},
    protocol::result_shape::ResultShape,
    telemetry::{JsonRpcId, TraceContext},
    upstream::{
        Flight, Hub,
        flights::ProgressGate,
        lane::{self, Lane, Reply, Waiting},
        sides::CallSide,
    },
};

/// Where a call's progress notifications go: the client's output, under the client's token.
pub(crate) struct Progress {
    ds_token: Box<[u8]>,
    out: Arc<dyn LineOut>,
    /// Only increasing progress goes on (the rule of both paths).
    gate: ProgressGate,
}

/// A call ready to go on the lane, or `None` when it must take rmcp's way: its tool's server
/// has no lane (not stdio, or `"session": "per-client"`), speaks 2026-07-28, the tool has not
/// answered a plain call yet (the first call learns whether it needs a task), the name is not
/// one `who`'s client may call (rmcp's way answers that, as it answers any unknown name), or the
/// client asked for progress and there is no `progress_out` to pass it to. The server's
/// requests during the call go to `side`; `headers_trace` is the trace context of the HTTP
/// request's headers, if any.
pub(crate) fn prepare(
    board: &PegBoard,
    call: &Call<'_>,
    who: Who<'_>,
    side: Arc<dyn CallSide>,
    progress_out: Option<Arc<dyn LineOut>>,
    headers_trace: Option<TraceContext>,
) -> Option<Box<Job>> {
    let progress = match (call.progress_token(), progress_out) {
        (None, _) => None,
        (Some(token), Some(out)) => Some(Progress {
            ds_token: token.into(),
            out,
            gate: ProgressGate::default(),
        }),
        (Some(_), None) => return None,
    };
    let route = Route::shared(board, &call.name, who.client).ok()?;
    let hub = route.hub.clone()?;
    let lane = hub.lane()?.clone();
    // The hub's answer is learnt once per connection (the MRTR check asks the same).
    let why_not = if hub.speaks_2026(&route.target.peer) {
        Some("its server speaks 2026-07-28")
    } else if hub.per_session().is_some() {
        Some("its server has a connection per session")
    } else if route.plain.is_none() {
        Some("the tool has not answered a plain call on this connection yet")
    } else {
        None
    };
    if let Some(why_not) = why_not {
        tracing::trace!(tool = %call.name, "express: rmcp's way, {why_not}");
        return None;
    }
    // The call's time starts now, before anything is sent, as on rmcp's way; its records
    // start at the same instant (one clock read for both).
    let now = tokio::time::Instant::now();
    let deadline = Deadline::start_at(&route.target, now);
    let incoming = call
        .trace_parts()
        .and_then(|(parent, state, baggage)| {
            TraceContext::parse(&parent, state.as_deref(), baggage.as_deref())
        })
        .or(headers_trace);
    // Read only for the spans, which name it (an id is read through a `serde_json::Value`).
    let id = who
        .hooks
        .telemetry
        .as_ref()
        .filter(|t| t.exporting_spans())
        .and_then(|_| serde_json::from_slice::<NumberOrString>(call.id()).ok());
    let json_id = id.as_ref().map(|id| match id {
        NumberOrString::Number(n) => JsonRpcId::Number(*n),
        NumberOrString::String(s) => JsonRpcId::String(s),
    });
    let arguments = || {
        Some(AuditArguments::Raw(Bytes::copy_from_slice(
            call.arguments(),
        )))
    };
    let (mut watch, refused) = match Watch::begin(
        who,
        (&call.name, Some((&route, now.into_std()))),
        json_id,
        incoming,
        arguments,
    ) {
        Ok(watch) => (watch, None),
        Err(denied) => {
            let (watch, denied) = *denied;
            (watch, Some(denied))
        }
    };
    // A refused call is never sent, so it has no upstream request to record or carry a trace
    // context: it stays as its records began, never routed, as on rmcp's way.
    let trace = match refused {
        None => watch.routed(&route, &call.name),
        Some(_) => None,
    };
    let Ok(waiting) = lane.begin(progress.is_some()) else {
        watch.abandon();
        return None;
    };
    let up_id = lane::request_id(waiting.n);
    // Boxed: a job is large (its route, records and request), and the futures that run it move
    // what they hold on each await into the next; a box moves as a pointer.
    Some(Box::new(Job {
        request: call.upstream_line(&up_id, &route.target.original, trace.as_ref()),
        n: waiting.n,
        waiting: Some(waiting),
        progress,
        side,
        lane,
        hub,
        name: call.name.to_string(),
        up_id,
        ds_id: call.id().into(),
        route,
        deadline,
        watch: Some(watch),
        refused,
        bytes_in: call.len(),
    }))
}

/// One call on the lane (see [`prepare`]).
pub(crate) struct Job {
    request: Vec<u8>,
    /// The call's number on the lane.
    n: u64,
    /// What the call waits for (taken when it runs).
    waiting: Option<Waiting>,
    progress: Option<Progress>,
    side: Arc<dyn CallSide>,
    lane: Arc<Lane>,
    hub: Arc<Hub>,
    route: Route,
    deadline: Deadline,
    name: String,
    up_id: Arc<str>,
    ds_id: Box<[u8]>,
    /// The call's records (ended by [`Job::run`]).
    watch: Option<Watch>,
    /// Why the call is refused before it is sent (its client's limits).
    refused: Option<Failure>,
    /// The request's size, as the client sent it.
    bytes_in: usize,
}

/// Forgets the call on the lane however the job ends (answered, failed, dropped).
struct Forget(Arc<Lane>, u64);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

impl Job {
    /// Send the call and wait for its answer: the line for the client. `None` when the client
    /// cancelled it or its session ended (both reach the call through `cancelled`: see
    /// `super::cancels`): no answer then, as on rmcp's way; the call is cancelled upstream (so
    /// it is when the job is dropped before its answer).
    pub(crate) async fn run(
        mut self: Box<Self>,
        cancelled: impl Future<Output = ()>,
    ) -> Option<Vec<u8>> {
        tracing::trace!(tool = %self.name, "express call");
        let _forget = Forget(Arc::clone(&self.lane), self.n);
        let watch = self.watch.take();
        let (answer, how) = self.answer_of(cancelled).await;
        if let Some(mut watch) = watch {
            watch.release_shared_place().await;
            let bytes_out = answer.as_ref().map_or(0, Vec::len);
            watch.end(how.ended(), self.bytes_in, bytes_out);
        }
        answer
    }

    /// The answer line (`None`: cancelled), and how the call ended.
    async fn answer_of(&mut self, cancelled: impl Future<Output = ()>) -> (Option<Vec<u8>>, How) {
        if let Some(refused) = self.refused.take() {
            let line = self.failure(&refused);
            return (Some(line), How::Failed(refused));
        }
        let Some(waiting) = self.waiting.take() else {
            return (Some(self.unexpected()), How::Error);
        };
        // The server may ask the client something mid-call (sampling, elicitation, roots):
        // the flight ties it to this call, as on rmcp's way; dropped unfinished, it cancels
        // the call upstream.
        let guard = self.hub.flights().register(
            &self.route.target.peer,
            RequestId::from(NumberOrString::String(Arc::clone(&self.up_id))),
            ProgressToken(NumberOrString::String(Arc::clone(&self.up_id))),
            Flight::new(Arc::clone(&self.side), None),
        );
        // Biased: the branches in their order, no random pick per poll.
        let outcome = tokio::select! {
            biased;
            outcome = self.exchange(waiting) => outcome,
            () = cancelled => return (None, How::Failed(Failure::Cancelled)),
        };
        match outcome {
            Ok(reply) => {
                guard.finish();
                let (line, how) = self.for_client(reply);
                (Some(line), how)
            }
            // Timed out: the guard, dropped unfinished, tells the server.
            Err(failure @ Failure::Board(PegBoardError::Timeout { .. })) => {
                (Some(self.failure(&failure)), How::Failed(failure))
            }
            Err(failure) => {
                guard.finish();
                (Some(self.failure(&failure)), How::Failed(failure))
            }
        }
    }

    async fn exchange(&self, waiting: Waiting) -> Result<Reply, Failure> {
        let closed = || {
            Failure::Board(PegBoardError::ServiceClosed {
                namespace: self.route.namespace().map(str::to_string),
            })
        };
        self.lane.send(&self.request).await.map_err(|_| closed())?;
        match self.deadline.run(self.answer(waiting)).await {
            Some(answer) => answer.ok_or_else(closed),
            None => Err(self.deadline.expired(self.route.namespace(), &self.name)),
        }
    }

    /// The answer (`None`: the server's output ended first), with the call's progress passed to
    /// the client on the way, all in the server's order.
    async fn answer(&self, waiting: Waiting) -> Option<Reply> {
        let Waiting {
            mut answer,
            progress,
            ..
        } = waiting;
        let Some(backlog) = progress else {
            return answer.await.ok();
        };
        loop {
            tokio::select! {
                biased;
                line = backlog.next() => match line {
                    Some(line) => self.forward_progress(&line).await,
                    // Closed: the answer has come (or the server's output ended).
                    None => return (&mut answer).await.ok(),
                },
                reply = &mut answer => {
                    // What the server sent before its answer goes out before it.
                    while let Some(line) = backlog.try_next() {
                        self.forward_progress(&line).await;
                    }
                    return reply.ok();
                }
            }
        }
    }

    async fn forward_progress(&self, line: &[u8]) {
        let Some(progress) = &self.progress else {
            return;
        };
        let Some((value, line)) = request::progress_for_client(line, &progress.ds_token) else {
            return;
        };
        if !progress.gate.admits(value) {
            return;
        }
        if let Err(e) = progress.out.write_line(&line).await {
            tracing::debug!("could not pass progress to the client: {e}");
        }
    }

    /// The server's answer for the client: a plain result (text alone, within any cap: its
    /// shape was read with the answer, `crate::protocol::result_shape`) passes verbatim with the
    /// client's id; any other is read as rmcp's way reads it (a result that is not a tool result
    /// is refused the same) and passed verbatim unless it must be changed (resource URIs
    /// namespaced, cut to the server's cap: then as rmcp's way builds it).
    fn for_client(&self, reply: Reply) -> (Vec<u8>, How) {
        if reply.error && reply.result.is_none() {
            let code = serde_json::from_slice::<ErrorOnly>(reply.line())
                .map_or(i64::from(rmcp::model::ErrorCode::INTERNAL_ERROR.0), |e| {
                    e.error.code
                });
            return (reply.with_id(&self.ds_id), How::ServerError(code));
        }
        let Some(shape) = reply.result else {
            return (self.unexpected(), How::Error);
        };
        let over = self
            .route
            .result_cap()
            .is_some_and(|cap| caps::may_exceed(reply.line().len(), cap));
        // Most results are text alone within any cap: nothing to change, nothing to build.
        if let (false, ResultShape::Plain { is_error }) = (over, shape) {
            return (reply.with_id(&self.ds_id), How::Result { is_error });
        }
        match serde_json::from_slice::<ResultOnly>(reply.line()) {
            Ok(ResultOnly { mut result }) => {
                let how = How::Result {
                    is_error: result.is_error == Some(true),
                };
                let changed = match over {
                    true => result::finish(&mut result, &self.route),
                    false => result::namespace_uris(&mut result, &self.route.target),
                };
                let how = match (changed, result.is_error == Some(true)) {
                    (true, is_error) => How::Result { is_error },
                    (false, _) => how,
                };
                if changed {
                    (self.message(Ok(result)), how)
                } else {
                    (reply.with_id(&self.ds_id), how)
                }
            }
            Err(e) => {
                tracing::debug!(tool = %self.name, "the server's answer is not a tool result: {e}");
                (self.unexpected(), How::Error)
            }
        }
    }

    fn unexpected(&self) -> Vec<u8> {
        self.failure(&crate::protocol::failure::upstream_failed(
            &self.route.target,
            &self.name,
            ServiceError::UnexpectedResponse,
        ))
    }

    fn failure(&self, failure: &Failure) -> Vec<u8> {
        self.message(failure.answer_ref(&self.name))
    }

    /// A whole answer line for the client, built from typed parts: for a session of a legacy
    /// protocol generation (the lane serves no other), whose results carry no `resultType`, as
    /// rmcp's way strips it for them.
    fn message(&self, mut answer: Result<CallToolResult, ErrorData>) -> Vec<u8> {
        if let Ok(result) = &mut answer {
            result.result_type = None;
        }
        let id = serde_json::from_slice::<serde_json::Value>(&self.ds_id)
            .unwrap_or(serde_json::Value::Null);
        let message = match answer {
            Ok(result) => serde_json::json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        // A JSON value serialises without fail.
        let mut line = serde_json::to_vec(&message).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// How a call on the lane ended (for its records).
enum How {
    Result {
        is_error: bool,
    },
    ServerError(i64),
    Failed(Failure),
    /// The server's answer was not one (recorded as an error).
    Error,
}

impl How {
    fn ended(&self) -> Ended<'_> {
        match self {
            How::Result { is_error } => Ended::Result {
                is_error: *is_error,
            },
            How::ServerError(code) => Ended::ServerError(*code),
            How::Failed(failure) => Ended::Failed(failure),
            How::Error => Ended::ServerError(i64::from(rmcp::model::ErrorCode::INTERNAL_ERROR.0)),
        }
    }
}

/// The error of an answer.
#[derive(serde::Deserialize)]
struct ErrorOnly {
    error: ErrorCodeOnly,
}

#[derive(serde::Deserialize)]
struct ErrorCodeOnly {
    code: i64,
}

/// The result of an answer, typed as rmcp's way types it.
#[derive(serde::Deserialize)]
struct ResultOnly {
    result: CallToolResult,
}
