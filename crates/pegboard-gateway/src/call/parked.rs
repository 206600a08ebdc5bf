//! The bridged calls of 2026-07-28 clients between their rounds (see `bridge.rs`): what a parked
//! call holds, and the gateway's table of them by token.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError, Weak},
    time::Duration,
};

use rmcp::{
    ErrorData, ServiceError,
    model::{InputRequest, ServerResult},
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::DropGuard;

use crate::protocol::failure::Deadline;

/// How long a parked call waits for the client's answers when the board has no call timeout:
/// a client that never comes back must not hold the server's call forever.
const UNBOUNDED_PARK: Duration = Duration::from_secs(600);

/// The client's answer to one of the server's requests (the result's JSON), or why there is none.
pub(crate) type Answer = oneshot::Sender<Result<Value, ErrorData>>;

/// From the upstream call to the client's rounds.
#[derive(Debug)]
pub(crate) enum Event {
    /// The server asks: the answer goes back through the sender.
    Asked(InputRequest, Answer),
    /// The server answered (or failed).
    Done(Result<ServerResult, ServiceError>),
    /// The call timeout passed: the server's call was cancelled.
    Expired,
}

/// The gateway's bridged calls between two rounds, by token (one table for all sessions: a
/// client's retry may come on another connection).
#[derive(Debug, Clone, Default)]
pub(crate) struct Bridges {
    parked: Arc<Mutex<HashMap<String, Parked>>>,
}

impl Bridges {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `parked` under `token` until the client's retry, or until its time is up (then
    /// dropping it cancels the server's call).
    pub(crate) fn park(&self, token: String, parked: Parked) {
        let ttl = match parked.deadline.instant() {
            Some(deadline) => deadline.saturating_duration_since(tokio::time::Instant::now()),
            None => UNBOUNDED_PARK,
        };
        self.table().insert(token.clone(), parked);
        let table: Weak<Mutex<HashMap<String, Parked>>> = Arc::downgrade(&self.parked);
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(table) = table.upgrade() {
                table
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&token);
            }
        });
    }

    pub(crate) fn unpark(&self, token: &str) -> Option<Parked> {
        self.table().remove(token)
    }
}

/// A bridged call between two rounds (or in one): its events, the server's requests waiting
/// for the client's answers, and the cancellation of the upstream call (on drop).
#[derive(Debug)]
pub(crate) struct Parked {
    pub(crate) tool: String,
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
    /// An event read while gathering a round's requests, for the next round.
    pub(crate) stashed: Option<Event>,
    pub(crate) waiting: HashMap<String, Answer>,
    pub(crate) next_key: usize,
    /// When the call timeout ends the whole call.
    pub(crate) deadline: Deadline,
    pub(crate) _cancel: DropGuard,
}
