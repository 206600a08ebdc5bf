//! The calls in flight on one upstream connection, by upstream request id and progress token.
//!
//! Upstream ids and tokens come from per-connection counters, so two downstream sessions that
//! both use progress token `0` never meet here: each call is its own entry.
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

// Every call adds and removes entries here; the ids and tokens are the gateway's own counters.
use foldhash::fast::RandomState;

use rmcp::{
    Peer, RoleClient, RoleServer,
    model::{CancelledNotificationParam, ProgressNotificationParam, ProgressToken, RequestId},
};

/// One downstream call being answered by the upstream.
#[derive(Debug)]
pub struct Flight {
    /// The downstream session's connection.
    pub ds_peer: Peer<RoleServer>,
    /// The downstream request id (server-to-client requests are tied to it).
    pub ds_id: RequestId,
    /// The progress token the downstream asked with, if any.
    pub ds_token: Option<ProgressToken>,
    /// Whether the session can be asked anything (not in `--stateless` mode).
    pub can_ask: bool,
    /// A 2026-07-28 client's call on a server of an older protocol: the server's requests go
    /// back to the client as `input_required` (see `bridge.rs`).
    pub(crate) bridge: Option<crate::bridge::Inlet>,
    /// The last progress value forwarded: notifications are handled on separate tasks, so a
    /// late one must not go out after a newer one.
    last_progress: Mutex<Option<f64>>,
}

impl Flight {
    /// A flight for the downstream request `ds_id` of `ds_peer`.
    pub fn new(
        ds_peer: Peer<RoleServer>,
        ds_id: RequestId,
        ds_token: Option<ProgressToken>,
        can_ask: bool,
    ) -> Self {
        Self {
            ds_peer,
            ds_id,
            ds_token,
            can_ask,
            bridge: None,
            last_progress: Mutex::new(None),
        }
    }

    /// The server's requests during this call go through `inlet`.
    pub(crate) fn bridged(mut self, inlet: crate::bridge::Inlet) -> Self {
        self.bridge = Some(inlet);
        self
    }

    /// Forward an upstream progress notification under the downstream's own token.
    pub(crate) async fn forward_progress(&self, mut progress: ProgressNotificationParam) {
        let Some(token) = &self.ds_token else { return };
        {
            let mut last = self
                .last_progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|l| progress.progress <= l) {
                return;
            }
            *last = Some(progress.progress);
        }
        progress.progress_token = token.clone();
        if let Err(e) = self.ds_peer.notify_progress(progress).await {
            tracing::debug!("could not forward progress downstream: {e}");
        }
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
pub struct Flights {
    table: Mutex<Table>,
}

impl Flights {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Record a call sent upstream as `up_id` with `up_token`; the guard removes it, and sends
    /// `notifications/cancelled` upstream unless [`FlightGuard::finish`] was called.
    pub fn register(
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
    /// with a guard that owns `hub` (this table's), for a call whose waiting may move to a task
    /// of its own.
    pub(crate) fn bind_owned(
        hub: &Arc<super::Hub>,
        key: u64,
        up_peer: &Peer<RoleClient>,
        up_id: RequestId,
        up_token: ProgressToken,
    ) -> Option<OwnedFlightGuard> {
        hub.flights()
            .file(key, &up_id, &up_token)
            .then(|| OwnedFlightGuard {
                hub: hub.clone(),
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
pub struct FlightGuard<'a> {
    flights: &'a Flights,
    up_peer: Peer<RoleClient>,
    up_id: RequestId,
    up_token: ProgressToken,
    finished: bool,
}

impl FlightGuard<'_> {
    /// The upstream answered: nothing to cancel.
    pub fn finish(mut self) {
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

/// [`FlightGuard`] owning its hub (see [`Flights::bind_owned`]).
#[derive(Debug)]
pub(crate) struct OwnedFlightGuard {
    hub: Arc<super::Hub>,
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
            self.hub.flights(),
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
