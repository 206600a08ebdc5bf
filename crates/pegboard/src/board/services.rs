//! The services behind the board: liveness, removal, shutdown.

use std::{borrow::Cow, convert::Infallible, sync::Arc, time::Duration};

use super::PegBoard;
use crate::{
    PegBoardError,
    registry::{Registry, ServiceId},
    slot::ServiceSlot,
};

/// The longest `shutdown` waits for one service to end.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(8);

impl PegBoard {
    /// Resolves when the connection of the service at `index` ends (its process exited, its
    /// connection dropped, or it was shut down): what a supervisor awaits to restart it.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`] if no service is stored at `index`.
    pub async fn wait_closed(&self, index: usize) -> Result<(), PegBoardError> {
        // Hold only the closed signal, not the slot: waiting must not keep the service alive.
        let closed = self
            .snapshot()
            .service(ServiceId::new(index))
            .ok_or(PegBoardError::UnknownService { index })?
            .closed();
        closed.await;
        Ok(())
    }

    /// Remove the service at `index` and every tool routed to it; returns the number of tools
    /// removed. The service shuts down once no call is in flight on it.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`].
    pub fn remove_service(&self, index: usize) -> Result<usize, PegBoardError> {
        let id = ServiceId::new(index);
        self.transaction(|draft| {
            if draft.service(id).is_none() {
                return Err(PegBoardError::UnknownService { index });
            }
            Ok(take(draft, |i, _| i == id))
        })
        .map(|(_, removed)| removed)
    }

    /// Remove every service whose transport has closed, with its tools, in one step; returns
    /// their indices.
    pub fn remove_closed_services(&self) -> Vec<usize> {
        let Ok((taken, _)) = self.transaction(|draft| {
            let any_closed = draft
                .stored()
                .any(|(_, slot)| slot.state() == crate::ServiceState::Closed);
            if !any_closed {
                return Ok::<_, Infallible>((Vec::new(), 0));
            }
            Ok(take(draft, |_, slot| {
                slot.state() == crate::ServiceState::Closed
            }))
        });
        taken
    }

    /// Close every service (child processes are stopped and reaped) and empty the board. The
    /// board then takes no new services ([`PegBoardError::ShutDown`]).
    ///
    /// Calls in flight end with an error. Waits at most a few seconds per service, all services
    /// in parallel.
    pub async fn shutdown(&self) {
        let Ok(slots) = self.transaction(|draft| {
            let slots: Vec<Arc<ServiceSlot>> = draft.services.iter().flatten().cloned().collect();
            *draft = Cow::Owned(Registry {
                generation: draft.generation,
                shut_down: true,
                ..Registry::default()
            });
            Ok::<_, Infallible>(slots)
        });
        let mut closing = tokio::task::JoinSet::new();
        for slot in slots {
            slot.stop();
            closing.spawn(async move {
                // rmcp gives a child process 3 s to exit on EOF, then signals it: 8 s covers that.
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, slot.closed()).await;
            });
        }
        while closing.join_next().await.is_some() {}
    }
}

/// Take the services `remove` picks, and every tool routed to them, out of the draft; returns
/// their indices and the number of tools removed. Their watchers stop at once; each service
/// shuts down when the last call in flight on it lets go.
fn take(
    draft: &mut Cow<'_, Registry>,
    remove: impl Fn(ServiceId, &ServiceSlot) -> bool,
) -> (Vec<usize>, usize) {
    let (taken, removed) = draft.to_mut().take_services(remove);
    let indices = taken
        .iter()
        .map(|(id, slot)| {
            slot.stop_watching();
            id.index()
        })
        .collect();
    (indices, removed)
}
