//! Each server's state for the metrics and the status page, followed from the board: up (with
//! its tools), restarting, waiting for a login, failed (and why), removed. The board tells every
//! change; where each server is comes from the fleet. Messages over a server's size limit are
//! counted through the byte layer's hook (`crate::io::over_limit`), set here for as long as
//! this runs.

use std::collections::HashMap;
use std::sync::Arc;

use pegboard::ServiceState;

use super::Gateway;
use crate::io::over_limit::{OverLimitHook, on_over_limit};
use crate::telemetry::{ServerState, Telemetry};

/// Keep `telemetry`'s view of the servers current, until dropped.
pub(super) async fn observe(gateway: &Gateway, telemetry: &Arc<Telemetry>) {
    let over_limit: Arc<OverLimitHook> = {
        let telemetry = Arc::clone(telemetry);
        Arc::new(move |server: &str| telemetry.message_over_limit(server))
    };
    on_over_limit(&over_limit);
    let mut changes = gateway.board.subscribe();
    // Where each server was on the board: a new index is a restart.
    let mut placed: HashMap<String, usize> = HashMap::new();
    loop {
        update(gateway, telemetry, &mut placed).await;
        if changes.changed().await.is_err() {
            return;
        }
    }
}

async fn update(gateway: &Gateway, telemetry: &Telemetry, placed: &mut HashMap<String, usize>) {
    let placement = match gateway.fleet.lock().await.as_ref() {
        Some(fleet) => fleet.placement(),
        // Not started yet: every server is starting (their first state).
        None => return,
    };
    let services = gateway.board.services();
    let started = gateway.started().unwrap_or_default();
    let pending = crate::oauth::pending();
    for (name, index, supervised) in &placement {
        let service = index.and_then(|i| services.iter().find(|s| s.index == i));
        match service {
            Some(service) if service.state == ServiceState::Running => {
                let restarted = placed
                    .insert(name.clone(), service.index)
                    .is_some_and(|before| before != service.index);
                if restarted {
                    telemetry.server_restarted(name);
                }
                telemetry.server_state(name, ServerState::Up, None);
                telemetry.server_tools(name, service.tools);
                if restarted {
                    // After the record, so whoever reads this line finds it counted.
                    tracing::debug!("{name}: up again after a restart (recorded in the metrics)");
                }
            }
            _ => {
                telemetry.server_tools(name, 0);
                let waits_for_login = pending
                    .is_pending(name)
                    .then(|| format!("run `pegboard login {name}`"));
                let failed = started
                    .iter()
                    .find(|s| &s.name == name)
                    .and_then(|s| s.result.as_ref().err());
                match (waits_for_login, *supervised, failed) {
                    (Some(hint), _, _) => {
                        telemetry.server_state(name, ServerState::NeedsLogin, Some(&hint));
                    }
                    (None, true, _) => telemetry.server_state(
                        name,
                        ServerState::Restarting,
                        Some("it stopped; restarting with backoff"),
                    ),
                    (None, false, Some(why)) => {
                        telemetry.server_state(name, ServerState::Failed, Some(why));
                    }
                    (None, false, None) => telemetry.server_state(
                        name,
                        ServerState::Failed,
                        Some("it stopped (not restarted: --no-restart)"),
                    ),
                }
            }
        }
    }
    placed.retain(|name, _| {
        let kept = placement.iter().any(|(n, _, _)| n == name);
        if !kept {
            telemetry.server_removed(name);
        }
        kept
    });
}
