//! A test client that counts the gateway's `notifications/tools/list_changed`, so a test waits
//! on them instead of polling on a timer.

use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::watch;

/// The client handler (see the module docs).
#[derive(Clone)]
pub struct ListChanges(watch::Sender<u64>);

impl ClientHandler for ListChanges {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.send_modify(|n| *n += 1);
    }
}

/// A client served by [`ListChanges`].
pub type Client = RunningService<RoleClient, ListChanges>;

/// Connect over `transport` (the handshake within `within`); the client and the count of
/// `list_changed` notifications to wait on.
pub async fn connect<T, E, A>(
    transport: T,
    within: Duration,
) -> Result<(Client, watch::Receiver<u64>)>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (tx, changes) = watch::channel(0);
    let client = tokio::time::timeout(within, ListChanges(tx).serve(transport))
        .await
        .context("the handshake timed out")??;
    Ok((client, changes))
}

/// Wait until `ready` answers `Some`, trying it again at each `list_changed`, until `within`
/// is over (then the error says `what`).
pub async fn after_changes<T>(
    changes: &mut watch::Receiver<u64>,
    within: Duration,
    what: &str,
    mut ready: impl AsyncFnMut() -> Option<T>,
) -> Result<T> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        changes.mark_unchanged();
        if let Some(found) = ready().await {
            return Ok(found);
        }
        tokio::time::timeout_at(deadline, changes.changed())
            .await
            .with_context(|| format!("{what}: no list_changed brought it"))?
            .with_context(|| format!("{what}: the session closed"))?;
    }
}
