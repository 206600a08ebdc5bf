//! The client's end of the express lane: takes the `tools/call` requests it can carry out of the
//! client's input before rmcp parses them, and answers them itself.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use pegboard::{PegBoard, PegBoardError, ToolTarget};
use rmcp::model::{NumberOrString, ProgressToken, RequestId};
use rmcp::{Peer, RoleServer, ServiceError};
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

use super::lane::{self, Lane};
use super::request::{Call, Incoming, Reply, classify};
use super::tools_list::ToolsList;
use super::writer::LineSink;
use crate::startup::Startup;
use crate::upstream::limit::Divert;
use crate::upstream::{Flight, Hub};

/// The first protocol generation whose results need more than the legacy shape (`resultType`).
const MODERN: &str = "2026-07-28";

/// The express lane's client end (see the module docs).
pub struct Front<W> {
    me: Weak<Self>,
    board: PegBoard,
    out: LineSink<W>,
    /// The session's peer, once its handshake is done and it speaks a legacy generation.
    peer: OnceLock<Peer<RoleServer>>,
    /// Calls on the lane by the client's raw id: how to cancel each.
    calls: Mutex<HashMap<Box<[u8]>, CancellationToken>>,
    startup: Startup,
    tools: ToolsList,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Front<W> {
    pub(crate) fn new(board: PegBoard, out: LineSink<W>, startup: Startup) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            board,
            out,
            peer: OnceLock::new(),
            calls: Mutex::new(HashMap::new()),
            startup,
            tools: ToolsList::default(),
        })
    }

    /// The session is up: from now on calls may take the lane (when the client speaks a legacy
    /// generation; a 2026-07-28 session stays on rmcp's way, which adds what it needs).
    pub(crate) fn start(&self, peer: Peer<RoleServer>) {
        let legacy = peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() < MODERN);
        if legacy {
            let _ = self.peer.set(peer);
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<Box<[u8]>, CancellationToken>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Take `call` when its tool's server has a lane and nothing about the call needs more than
    /// the lane does (see [`crate::express`]).
    fn take(&self, peer: &Peer<RoleServer>, call: &Call<'_>) -> bool {
        let Ok(target) = self.board.tool_target(&call.name) else {
            return false;
        };
        let Some(hub) = target.extension.as_ref().and_then(|e| e.get::<Hub>()) else {
            return false;
        };
        let Some(lane) = hub.lane().cloned() else {
            return false;
        };
        let legacy_server = target
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() < MODERN);
        if !legacy_server || hub.per_client().is_some() || !hub.is_plain(&target.original) {
            return false;
        }
        let Ok((n, answer)) = lane.begin() else {
            return false;
        };
        let Some(me) = self.me.upgrade() else {
            lane.forget(n);
            return false;
        };
        let up_id = lane::request_id(n);
        let request = call.upstream_line(&up_id, &target.original);
        let ds_id: Box<[u8]> = call.id().into();
        let cancel = CancellationToken::new();
        self.calls().insert(ds_id.clone(), cancel.clone());
        let job = Job {
            front: me,
            peer: peer.clone(),
            lane,
            hub,
            target,
            name: call.name.to_string(),
            n,
            up_id,
            ds_id,
            cancel,
        };
        tokio::spawn(job.run(request, answer));
        true
    }

    /// Answer `tools/list` from the cached serialisation, once every server has started (before,
    /// rmcp's way waits for them).
    fn list_tools(&self, id: &[u8]) -> bool {
        if !self.startup.is_settled() {
            return false;
        }
        let line = self.tools.answer(&self.board, id);
        let out = self.out.clone();
        tokio::spawn(async move {
            if let Err(e) = out.write_line(&line).await {
                tracing::debug!("could not answer the client: {e}");
            }
        });
        true
    }

    fn cancel(&self, ds_id: &[u8]) -> bool {
        match self.calls().remove(ds_id) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Divert for Front<W> {
    fn divert(&self, line: &[u8]) -> bool {
        let Some(peer) = self.peer.get() else {
            return false;
        };
        match classify(line) {
            Incoming::Call(call) => self.take(peer, &call),
            Incoming::ListTools(id) => self.list_tools(id),
            Incoming::Cancelled(id) => self.cancel(id),
            Incoming::Other => false,
        }
    }
}

/// One call on the lane, from request to answer.
struct Job<W> {
    front: Arc<Front<W>>,
    peer: Peer<RoleServer>,
    lane: Arc<Lane>,
    hub: Arc<Hub>,
    target: ToolTarget,
    name: String,
    n: u64,
    up_id: String,
    ds_id: Box<[u8]>,
    cancel: CancellationToken,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Job<W> {
    async fn run(self, request: Vec<u8>, answer: tokio::sync::oneshot::Receiver<Vec<u8>>) {
        tracing::trace!(tool = %self.name, "express call");
        let up_id = RequestId::from(NumberOrString::String(self.up_id.as_str().into()));
        let ds_id = serde_json::from_slice::<RequestId>(&self.ds_id)
            .unwrap_or_else(|_| RequestId::from(NumberOrString::Number(0)));
        // The server may ask the client something mid-call (sampling, elicitation, roots):
        // the flight ties it to this call, as on rmcp's way; dropped unfinished, it cancels
        // the call upstream.
        let guard = self.hub.flights().register(
            &self.target.peer,
            up_id.clone(),
            ProgressToken(NumberOrString::String(self.up_id.as_str().into())),
            Flight::new(self.peer.clone(), ds_id, None, true),
        );
        let outcome = tokio::select! {
            outcome = self.exchange(&request, answer) => outcome,
            () = self.cancel.cancelled() => {
                // No answer for a cancelled request; the guard tells the server.
                self.lane.forget(self.n);
                return;
            }
        };
        let line = match outcome {
            Ok(reply) => {
                guard.finish();
                self.answer(&reply)
            }
            Err(error) => {
                if !matches!(error, PegBoardError::Timeout { .. }) {
                    guard.finish();
                }
                self.lane.forget(self.n);
                self.failure(error)
            }
        };
        self.front.calls().remove(&self.ds_id);
        if let Err(e) = self.front.out.write_line(&line).await {
            tracing::debug!("could not answer the client: {e}");
        }
    }

    fn namespace(&self) -> Option<String> {
        self.target.namespace.as_deref().map(str::to_string)
    }

    async fn exchange(
        &self,
        request: &[u8],
        answer: tokio::sync::oneshot::Receiver<Vec<u8>>,
    ) -> Result<Vec<u8>, PegBoardError> {
        let closed = || PegBoardError::ServiceClosed {
            namespace: self.namespace(),
        };
        self.lane.send(request).await.map_err(|_| closed())?;
        match self.target.timeout {
            None => answer.await.map_err(|_| closed()),
            Some(after) => match tokio::time::timeout(after, answer).await {
                Ok(answer) => answer.map_err(|_| closed()),
                Err(_) => Err(PegBoardError::Timeout {
                    operation: self.name.clone(),
                    namespace: self.namespace(),
                    after,
                }),
            },
        }
    }

    /// The server's answer for the client: verbatim with the client's id, unless resource URIs
    /// in it must be namespaced (then as rmcp's way builds it).
    fn answer(&self, line: &[u8]) -> Vec<u8> {
        let Some(reply) = Reply::parse(line) else {
            return self.unexpected();
        };
        match (reply.result, reply.error) {
            (Some(result), _) if self.target.namespace.is_some() && may_carry_uris(result) => {
                match serde_json::from_str::<rmcp::model::CallToolResult>(result.get()) {
                    Ok(mut result) => {
                        if crate::forward::carries_uris(&result) {
                            let ns = self.target.namespace.as_deref().unwrap_or_default();
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
            (Some(_), _) | (None, Some(_)) => reply.with_id(&self.ds_id),
            (None, None) => self.unexpected(),
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

    /// A whole answer line for the client.
    fn message(&self, answer: Result<rmcp::model::CallToolResult, rmcp::ErrorData>) -> Vec<u8> {
        let id = std::str::from_utf8(&self.ds_id)
            .ok()
            .and_then(|id| serde_json::from_str::<serde_json::Value>(id).ok())
            .unwrap_or(serde_json::Value::Null);
        let message = match answer {
            Ok(result) => serde_json::json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        let mut line = serde_json::to_vec(&message).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// Whether a raw result may hold a resource link, an embedded resource or `_meta.ui` (a cheap
/// byte search; most results have none and pass verbatim).
fn may_carry_uris(result: &serde_json::value::RawValue) -> bool {
    let bytes = result.get().as_bytes();
    memchr::memmem::find(bytes, b"resource").is_some()
        || memchr::memmem::find(bytes, b"\"ui\"").is_some()
}
