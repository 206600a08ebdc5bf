//! One `tools/call` on the express lane, from the client's request to the answer line.

use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;

use super::lane::{self, Lane, Waiting};
use super::request::{self, Call, Reply};
use super::writer::LineOut;
use crate::upstream::{Flight, Hub};
use pegboard::{PegBoard, PegBoardError, ToolTarget};
use rmcp::model::{CallToolResult, NumberOrString, ProgressToken, RequestId};
use rmcp::{ErrorData, Peer, RoleServer, ServiceError};

/// Whether the client of `peer` speaks a legacy protocol generation (the lane's results are
/// the servers' as they are: no `resultType` added).
pub(crate) fn legacy_client(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !crate::mrtr::is_2026(&info.protocol_version))
}

/// Where a call's progress notifications go: the client's output, under the client's token.
pub(crate) struct Progress {
    ds_token: Box<[u8]>,
    out: Arc<dyn LineOut>,
}

/// A call ready to go on the lane, or `None` when it must take rmcp's way: its tool's server
/// has no lane (not stdio, or `"session": "per-client"`), speaks 2026-07-28, the tool has not
/// answered a plain call yet (the first call learns whether it needs a task), or the client
/// asked for progress and there is no `progress_out` to pass it to.
pub(crate) fn prepare(
    board: &PegBoard,
    peer: &Peer<RoleServer>,
    call: &Call<'_>,
    progress_out: Option<Arc<dyn LineOut>>,
) -> Option<Job> {
    let progress = match (call.progress_token(), progress_out) {
        (None, _) => None,
        (Some(token), Some(out)) => Some(Progress {
            ds_token: token.into(),
            out,
        }),
        (Some(_), None) => return None,
    };
    let target = board.tool_target(&call.name).ok()?;
    let hub = target.extension.as_ref().and_then(|e| e.get::<Hub>())?;
    let lane = hub.lane()?.clone();
    // The hub's answer is learnt once per connection (the MRTR check asks the same).
    if hub.speaks_2026(&target.peer)
        || hub.per_client().is_some()
        || !hub.is_plain(&target.original)
    {
        return None;
    }
    let waiting = lane.begin(progress.is_some()).ok()?;
    let n = waiting.n;
    let up_id = lane::request_id(n);
    Some(Job {
        request: call.upstream_line(&up_id, &target.original),
        waiting: Some(waiting),
        progress,
        peer: peer.clone(),
        lane,
        hub,
        name: call.name.to_string(),
        n,
        up_id,
        ds_id: call.id().into(),
        target,
    })
}

/// One call on the lane (see [`prepare`]).
pub(crate) struct Job {
    request: Vec<u8>,
    waiting: Option<Waiting>,
    progress: Option<Progress>,
    peer: Peer<RoleServer>,
    lane: Arc<Lane>,
    hub: Arc<Hub>,
    target: ToolTarget,
    name: String,
    n: u64,
    up_id: Arc<str>,
    ds_id: Box<[u8]>,
}

/// Forgets the call on the lane however the job ends (answered, failed, dropped).
struct Forget<'a>(&'a Lane, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

impl Job {
    /// Send the call and wait for its answer: the line for the client. Dropped before the
    /// answer (the client cancelled or went away), it cancels the call upstream.
    pub(crate) async fn run(mut self) -> Vec<u8> {
        tracing::trace!(tool = %self.name, "express call");
        let Some(waiting) = self.waiting.take() else {
            return self.unexpected();
        };
        let _forget = Forget(&self.lane, self.n);
        let up_id = RequestId::from(NumberOrString::String(Arc::clone(&self.up_id)));
        let ds_id = serde_json::from_slice::<RequestId>(&self.ds_id)
            .unwrap_or_else(|_| RequestId::from(NumberOrString::Number(0)));
        // The server may ask the client something mid-call (sampling, elicitation, roots):
        // the flight ties it to this call, as on rmcp's way; dropped unfinished, it cancels
        // the call upstream.
        let guard = self.hub.flights().register(
            &self.target.peer,
            up_id,
            ProgressToken(NumberOrString::String(Arc::clone(&self.up_id))),
            Flight::new(self.peer.clone(), ds_id, None, true),
        );
        match self.exchange(waiting).await {
            Ok(reply) => {
                guard.finish();
                self.for_client(reply)
            }
            // Timed out: the guard, dropped unfinished, tells the server.
            Err(error @ PegBoardError::Timeout { .. }) => self.failure(error),
            Err(error) => {
                guard.finish();
                self.failure(error)
            }
        }
    }

    fn namespace(&self) -> Option<String> {
        self.target.namespace.as_deref().map(str::to_string)
    }

    async fn exchange(&self, waiting: Waiting) -> Result<Reply, PegBoardError> {
        let closed = || PegBoardError::ServiceClosed {
            namespace: self.namespace(),
        };
        self.lane.send(&self.request).await.map_err(|_| closed())?;
        let answer = self.answer(waiting);
        match self.target.timeout {
            None => answer.await.ok_or_else(closed),
            Some(after) => match tokio::time::timeout(after, answer).await {
                Ok(answer) => answer.ok_or_else(closed),
                Err(_) => Err(PegBoardError::Timeout {
                    operation: self.name.clone(),
                    namespace: self.namespace(),
                    after,
                }),
            },
        }
    }

    /// The answer (`None`: the server's output ended first), with the call's progress passed to
    /// the client on the way, all in the server's order.
    async fn answer(&self, waiting: Waiting) -> Option<Reply> {
        let Waiting {
            mut answer,
            mut progress,
            ..
        } = waiting;
        loop {
            let next_progress = async {
                match progress.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                line = next_progress => match line {
                    Some(line) => self.forward_progress(&line).await,
                    None => progress = None,
                },
                line = &mut answer => {
                    // What the server sent before its answer goes out before it.
                    while let Some(line) = progress.as_mut().and_then(|rx| rx.try_recv().ok()) {
                        self.forward_progress(&line).await;
                    }
                    return line.ok();
                }
            }
        }
    }

    async fn forward_progress(&self, line: &[u8]) {
        let Some(progress) = &self.progress else {
            return;
        };
        let Some(line) = request::progress_for_client(line, &progress.ds_token) else {
            return;
        };
        if let Err(e) = progress.out.write_line(&line).await {
            tracing::debug!("could not pass progress to the client: {e}");
        }
    }

    /// The server's answer for the client: verbatim with the client's id, unless resource URIs
    /// in it must be namespaced (then as rmcp's way builds it).
    fn for_client(&self, reply: Reply) -> Vec<u8> {
        let line = reply.line();
        match (reply.result, reply.error) {
            (true, _) if self.target.namespace.is_some() && may_carry_uris(line) => {
                match serde_json::from_slice::<ResultOnly>(line) {
                    Ok(ResultOnly { mut result }) => {
                        if let Some(ns) = &self.target.namespace
                            && crate::forward::carries_uris(&result)
                        {
                            pegboard::uri::encode_call_result(
                                &mut result,
                                &pegboard::uri::alias(ns),
                            );
                        }
                        self.message(Ok(result))
                    }
                    Err(_) => self.unexpected(),
                }
            }
            (true, _) | (false, true) => reply.with_id(&self.ds_id),
            (false, false) => self.unexpected(),
        }
    }

    fn unexpected(&self) -> Vec<u8> {
        self.failure(PegBoardError::ServiceError {
            tool: self.name.clone(),
            namespace: self.namespace(),
            source: ServiceError::UnexpectedResponse,
        })
    }

    fn failure(&self, error: PegBoardError) -> Vec<u8> {
        self.message(crate::server::board_error(&self.name, error))
    }

    /// A whole answer line for the client, built from typed parts.
    fn message(&self, answer: Result<CallToolResult, ErrorData>) -> Vec<u8> {
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

/// The result of an answer, typed, when its URIs must be namespaced.
#[derive(serde::Deserialize)]
struct ResultOnly {
    result: CallToolResult,
}

/// Whether an answer may hold a resource link, an embedded resource or `_meta.ui` (a cheap byte
/// search; most have none and pass verbatim).
fn may_carry_uris(line: &[u8]) -> bool {
    static RESOURCE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"resource"));
    static UI: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"ui\""));
    RESOURCE.find(line).is_some() || UI.find(line).is_some()
}
