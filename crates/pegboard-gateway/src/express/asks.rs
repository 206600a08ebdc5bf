//! The server's requests during an HTTP call on the lane (sampling, elicitation, roots), sent to
//! the client on the call's own stream — where rmcp's way sends them too — and the client's
//! answers, which come back as `POST`s of JSON-RPC responses that the lane takes before rmcp
//! (rmcp never saw these requests). Ids are the lane's own (`"pbs-N"`: rmcp's are numbers), and
//! an answer is taken only from the session the request went to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::fast::RandomState;
use rmcp::model::{
    ClientResult, ErrorData, GetMeta, NumberOrString, ProgressToken, RequestId,
    ServerJsonRpcMessage, ServerRequest,
};
use rmcp::{Peer, RoleServer};
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::events::Channel;
use crate::upstream::sides::{Boxed, CallSide, Declared};

/// A client's answer, as it came: its `result` or its `error`.
type Answer = Result<Box<RawValue>, ErrorData>;

/// A request of the lane's: its session and its id.
type Key = (Arc<str>, Box<str>);

/// The requests waiting for their client's answer.
type Table = HashMap<Key, oneshot::Sender<Answer>, RandomState>;

/// The requests waiting for their client's answer, by session and the lane's id.
#[derive(Debug, Default)]
pub(crate) struct Asks {
    waiting: Mutex<Table>,
    next: AtomicU64,
}

impl Asks {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hand the client's answer to request `id` of `session` to whoever waits for it: whether
    /// one did (else the answer is not the lane's).
    pub(crate) fn answer(&self, session: &Arc<str>, id: &str, answer: Answer) -> bool {
        let key = (Arc::clone(session), Box::<str>::from(id));
        match self.table().remove(&key) {
            Some(waiting) => {
                // Gone when the call ended meanwhile.
                let _ = waiting.send(answer);
                true
            }
            None => false,
        }
    }
}

/// Who an HTTP call on the lane is for: its session, to ask the client through. Kept beside the
/// call's event channel (`Events::with`), which is then the call's client end ([`CallSide`]):
/// one allocation for both.
#[derive(Debug)]
pub(crate) struct Caller {
    asks: Arc<Asks>,
    session: Arc<str>,
    peer: Peer<RoleServer>,
}

impl Caller {
    /// A call of `session` (`peer`), its requests waiting in `asks`.
    pub(crate) fn new(asks: Arc<Asks>, session: Arc<str>, peer: Peer<RoleServer>) -> Self {
        Self {
            asks,
            session,
            peer,
        }
    }
}

/// Takes a request's entry out of the table however its wait ends.
struct Asked<'a> {
    asks: &'a Asks,
    key: Key,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        self.asks.table().remove(&self.key);
    }
}

/// The client end of an HTTP call on the lane: its event stream, and its caller.
impl CallSide for Channel<Caller> {
    fn declared(&self) -> Declared {
        match self.side().peer.peer_info() {
            Some(info) => Declared::Capabilities(info.capabilities.clone()),
            None => Declared::Modern,
        }
    }

    fn ask(&self, request: ServerRequest) -> Boxed<'_, Result<ClientResult, ErrorData>> {
        Box::pin(async move {
            let method = method(&request);
            let caller = self.side();
            let n = caller.asks.next.fetch_add(1, Ordering::Relaxed);
            let id: Box<str> = format!("pbs-{n}").into();
            let (tx, rx) = oneshot::channel();
            let entry = Asked {
                asks: &caller.asks,
                key: (Arc::clone(&caller.session), id.clone()),
            };
            caller.asks.table().insert(entry.key.clone(), tx);
            // With a progress token, as rmcp's peer sends every request (the same on both ways).
            let mut request = request;
            request
                .get_meta_mut()
                .set_progress_token(ProgressToken(NumberOrString::String(Arc::from(&*id))));
            let message = ServerJsonRpcMessage::request(
                request,
                RequestId::from(NumberOrString::String(Arc::from(&*id))),
            );
            let line = serde_json::to_vec(&message).map_err(|e| {
                ErrorData::internal_error(format!("pegboard could not write {method}: {e}"), None)
            })?;
            self.send_event(&line).await.map_err(|e| {
                ErrorData::internal_error(format!("pegboard could not reach the client: {e}"), None)
            })?;
            let answer = rx.await.map_err(|_| {
                ErrorData::internal_error(
                    format!("the client's call ended before it answered {method}"),
                    None,
                )
            })?;
            drop(entry);
            let result = answer?;
            typed(method, &result)
        })
    }

    fn progress(&self, progress: rmcp::model::ProgressNotificationParam) -> Boxed<'_, ()> {
        Box::pin(async move {
            let message = rmcp::model::ServerJsonRpcMessage::notification(
                rmcp::model::ServerNotification::ProgressNotification(
                    rmcp::model::ProgressNotification::new(progress),
                ),
            );
            if let Ok(line) = serde_json::to_vec(&message)
                && let Err(e) = self.send_event(&line).await
            {
                tracing::debug!("could not pass progress to the client: {e}");
            }
        })
    }
}

fn method(request: &ServerRequest) -> &'static str {
    match request {
        ServerRequest::CreateMessageRequest(_) => "sampling/createMessage",
        ServerRequest::ElicitRequest(_) => "elicitation/create",
        ServerRequest::ListRootsRequest(_) => "roots/list",
        ServerRequest::PingRequest(_) => "ping",
        _ => "a request",
    }
}

/// The client's result, typed as the request's method expects it.
fn typed(method: &str, result: &RawValue) -> Result<ClientResult, ErrorData> {
    let text = result.get();
    let parsed = match method {
        "sampling/createMessage" => {
            serde_json::from_str(text).map(|r| ClientResult::CreateMessageResult(Box::new(r)))
        }
        "elicitation/create" => serde_json::from_str(text).map(ClientResult::ElicitResult),
        "roots/list" => serde_json::from_str(text).map(ClientResult::ListRootsResult),
        _ => serde_json::from_str(text).map(ClientResult::EmptyResult),
    };
    parsed.map_err(|e| {
        ErrorData::invalid_params(
            format!("the client's answer to {method} is not a {method} result: {e}"),
            None,
        )
    })
}
