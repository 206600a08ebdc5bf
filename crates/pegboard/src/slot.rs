//! A service as the board stores it, and what the board tells about it.

use std::{
    sync::{Mutex, atomic::AtomicU64},
    time::Duration,
};

use rmcp::{Peer, RoleClient};
use tokio::task::AbortHandle;

use crate::{BoxedService, ServiceOptions};

/// A stored service. Shared as `Arc`: a call in flight holds one, so the service outlives its
/// removal from the board until the call is answered; it shuts down when the last holder drops it.
pub(crate) struct ServiceSlot {
    pub(crate) namespace: Option<std::sync::Arc<str>>,
    /// Calls go through a cloned `Peer`, not the `RunningService`: futures through the boxed
    /// `DynService` are not `Send` enough for `tokio::spawn` (see DESIGN.md, "A trap in rmcp 3.x").
    pub(crate) peer: Peer<RoleClient>,
    /// Kept so the service runs; dropping it cancels the connection (and stops a child process).
    pub(crate) running: Mutex<Option<BoxedService>>,
    pub(crate) options: ServiceOptions,
    /// Bumped by each refresh; a refresh that finds it moved on was overtaken and drops its result.
    pub(crate) refresh_generation: AtomicU64,
    pub(crate) watcher: Mutex<Option<AbortHandle>>,
}

impl ServiceSlot {
    pub(crate) fn call_timeout(&self) -> Option<Duration> {
        self.options.call_timeout
    }

    pub(crate) fn state(&self) -> ServiceState {
        if self.peer.is_transport_closed() {
            ServiceState::Closed
        } else {
            ServiceState::Running
        }
    }

    /// Take the running service out, to close it now rather than when the last holder drops.
    pub(crate) fn take_running(&self) -> Option<BoxedService> {
        self.stop_watching();
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    pub(crate) fn stop_watching(&self) {
        if let Some(handle) = self
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            handle.abort();
        }
    }
}

impl Drop for ServiceSlot {
    fn drop(&mut self) {
        self.stop_watching();
    }
}

/// Whether a service still answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServiceState {
    /// Its transport is open.
    Running,
    /// Its transport is closed: the process exited or the connection dropped. Calls fail at once
    /// with [`PegBoardError::ServiceClosed`](crate::PegBoardError::ServiceClosed).
    Closed,
}

/// One stored service, as [`PegBoard::services`](crate::PegBoard::services) reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceInfo {
    /// The index it is stored under (stable: removing another service never shifts it).
    pub index: usize,
    /// The namespace it was added under.
    pub namespace: Option<String>,
    /// Running or closed.
    pub state: ServiceState,
    /// How many tools on the board route to it.
    pub tools: usize,
}
