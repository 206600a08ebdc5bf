//! The calls in flight on one upstream connection, by upstream request id and progress token.
//!
//! Upstream ids and tokens come from per-connection counters, so two downstream sessions that
//! both use progress token `0` never meet here: each call is its own entry.
use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

// Every call adds and removes entries here; the ids and tokens are the gateway's own counters.
use foldhash::fast::RandomState;

use rmcp::{
    Peer, RoleClient,
    model::{CancelledNotificationParam, ProgressNotificationParam, ProgressToken, RequestId},
};

use super::sides::{CallSide, Declared};

/// One downstream call being answered by the upstream.
#[derive(Debug)]
pub(crate) struct Flight {
    /// Where the server's progress and requests during the call go.
    side: Arc<dyn CallSide>,
    /// The progress token the client asked with, if any (progress is passed on under it).
    ds_token: Option<ProgressToken>,
    /// Only increasing progress goes on (see [`ProgressGate`]).
    gate: ProgressGate,
}

impl Flight {
    /// A flight whose client end is `side`, which asked for progress under `ds_token`.
    pub(crate) fn new(side: Arc<dyn CallSide>, ds_token: Option<ProgressToken>) -> Self {
        Self {
            side,
            ds_token,
            gate: ProgressGate::default(),
        }
    }

    /// The client end of the call.
    pub(crate) fn side(&self) -> &Arc<dyn CallSide> {
        &self.side
    }

    /// What the client of the call can be asked.
    pub(crate) fn declared(&self) -> Declared {
        self.side.declared()
    }

    /// Forward an upstream progress notification under the downstream's own token.
    pub(crate) async fn forward_progress(&self, mut progress: ProgressNotificationParam) {
        let Some(token) = &self.ds_token else { return };
        if !self.gate.admits(progress.progress) {
            return;
        }
        progress.progress_token = token.clone();
        self.side.progress(progress).await;
    }
}

/// The rule both call paths apply to a call's progress: a value passes only when it is greater
/// than every one before it (the spec requires progress to increase; notifications may be
/// handled on separate tasks, so a late one must not go out after a newer one).
#[derive(Debug, Default)]
pub(crate) struct ProgressGate {
    last: Mutex<Option<f64>>,
}

impl ProgressGate {
    /// Whether `value` goes on (and is from now on the value to beat).
    pub(crate) fn admits(&self, value: f64) -> bool {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|l| value <= l) || value.is_nan() {
            return false;
        }
        *last = Some(value);
        true
    }
}

#[derive(Debug, Default)]
struct Table {
    by_token: HashMap<ProgressToken, Arc<Flight>, RandomState>,
    by_id: HashMap<RequestId, ProgressToken, RandomState>,
    /// Calls about to be sent, so that a server request that comes back before the call is
    /// registered under its upstream id still finds it (see [`Flights::register_pending`]).
    pending: HashMap<u64, Arc<Flight>, RandomState>,
    next_pending: u64,
}

/// The in-flight table of one upstream connection.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    table: Mutex<Table>,
}

impl Flights {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Record a call sent upstream as `up_id` with `up_token`; the guard removes it, and sends
    /// `notifications/cancelled` upstream unless [`FlightGuard::finish`] was called.
    pub(crate) fn register(
        &self,
        up_peer: &Peer<RoleClient>,
        up_id: RequestId,
        up_token: ProgressToken,
        flight: Flight,
    ) -> FlightGuard<'_> {
        let mut table = self.lock();
        table.by_id.insert(up_id.clone(), up_token.clone());
        table.by_token.insert(up_token.clone(), Arc::new(flight));
        FlightGuard {
            flights: self,
            up_peer: up_peer.clone(),
            up_id,
            up_token,
            finished: false,
        }
    }

    /// Record a call before it is sent (its upstream id is not known yet): rmcp may yield
    /// between queueing a request and returning its id, and the server may ask in between.
    /// [`Flights::bind_owned`] files it under its id once sent.
    pub(crate) fn register_pending(&self, flight: Flight) -> u64 {
        let mut table = self.lock();
        let key = table.next_pending;
        table.next_pending += 1;
        table.pending.insert(key, Arc::new(flight));
        key
    }

    /// The pending call `key` was sent as `up_id` with `up_token`: as [`Flights::register`],
    /// with a guard that owns `flights` (this table), for a call whose waiting may move to a task
    /// of its own.
    pub(crate) fn bind_owned(
        flights: &Arc<Self>,
        key: u64,
        up_peer: &Peer<RoleClient>,
        up_id: RequestId,
        up_token: ProgressToken,
    ) -> Option<OwnedFlightGuard> {
        flights
            .file(key, &up_id, &up_token)
            .then(|| OwnedFlightGuard {
                flights: Arc::clone(flights),
                up_peer: up_peer.clone(),
                up_id,
                up_token,
                finished: false,
            })
    }

    /// Move the pending call `key` under its upstream id and token (`false`: no such call).
    fn file(&self, key: u64, up_id: &RequestId, up_token: &ProgressToken) -> bool {
        let mut table = self.lock();
        let Some(flight) = table.pending.remove(&key) else {
            return false;
        };
        table.by_id.insert(up_id.clone(), up_token.clone());
        table.by_token.insert(up_token.clone(), flight);
        true
    }

    /// The pending call `key` was never sent.
    pub(crate) fn forget_pending(&self, key: u64) {
        self.lock().pending.remove(&key);
    }

    pub(crate) fn by_token(&self, token: &ProgressToken) -> Option<Arc<Flight>> {
        self.lock().by_token.get(token).cloned()
    }

    pub(crate) fn by_id(&self, id: &RequestId) -> Option<Arc<Flight>> {
        let table = self.lock();
        table
            .by_id
            .get(id)
            .and_then(|token| table.by_token.get(token))
            .cloned()
    }

    /// The flights whose session passes `filter`.
    pub(crate) fn matching(&self, filter: impl Fn(&Flight) -> bool) -> Vec<Arc<Flight>> {
        let table = self.lock();
        table
            .by_token
            .values()
            .chain(table.pending.values())
            .filter(|f| filter(f))
            .cloned()
            .collect()
    }

    fn remove(&self, id: &RequestId, token: &ProgressToken) {
        let mut table = self.lock();
        table.by_id.remove(id);
        table.by_token.remove(token);
    }
}

/// Removes its flight on drop and, unless finished, cancels the call upstream: raw requests
/// do not cancel themselves when dropped (PASSTHROUGH.md §1.3).
#[derive(Debug)]
pub(crate) struct FlightGuard<'a> {
    flights: &'a Flights,
    up_peer: Peer<RoleClient>,
    up_id: RequestId,
    up_token: ProgressToken,
    finished: bool,
}

impl FlightGuard<'_> {
    /// The upstream answered: nothing to cancel.
    pub(crate) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        release(
            self.flights,
            &self.up_peer,
            &self.up_id,
            &self.up_token,
            self.finished,
        );
    }
}

/// [`FlightGuard`] owning its table (see [`Flights::bind_owned`]).
#[derive(Debug)]
pub(crate) struct OwnedFlightGuard {
    flights: Arc<Flights>,
    up_peer: Peer<RoleClient>,
    up_id: RequestId,
    up_token: ProgressToken,
    finished: bool,
}

impl OwnedFlightGuard {
    /// The upstream answered: nothing to cancel.
    pub(crate) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for OwnedFlightGuard {
    fn drop(&mut self) {
        release(
            &self.flights,
            &self.up_peer,
            &self.up_id,
            &self.up_token,
            self.finished,
        );
    }
}

/// A call's entry goes; unless it was answered, the server is told it is cancelled.
fn release(
    flights: &Flights,
    up_peer: &Peer<RoleClient>,
    up_id: &RequestId,
    up_token: &ProgressToken,
    finished: bool,
) {
    flights.remove(up_id, up_token);
    if !finished {
        let peer = up_peer.clone();
        let param = CancelledNotificationParam::new(
            Some(up_id.clone()),
            Some("the client cancelled the request".into()),
        );
        tokio::spawn(async move {
            let _ = peer.notify_cancelled(param).await;
        });
    }
}
