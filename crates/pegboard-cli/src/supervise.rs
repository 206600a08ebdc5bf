//! Restart servers that die while `pegboard serve` runs, with backoff, and put their tools back.
//!
//! One task per server that started: it waits until the board says the service closed (the process
//! exited or the connection dropped), removes it (clients get `tools/list_changed`), then reconnects with
//! an exponential backoff (1 s doubling to 60 s; back to 1 s once a run lasted a minute) and re-registers.

use std::time::{Duration, Instant};

use pegboard::PegBoard;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ServerConfig};
use crate::connect::{self, Started, StderrTail};

/// First wait before a restart.
const BACKOFF_MIN: Duration = Duration::from_secs(1);
/// Longest wait between restarts.
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A run this long resets the backoff.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// Start one supervisor per server that is on the board. Cancel `ct` (and await the set) before
/// shutting the board down, so nothing is restarted during shutdown.
pub fn spawn_all(
    board: &PegBoard,
    config: &Config,
    started: &Started,
    handshake_timeout: Duration,
    ct: &CancellationToken,
) -> JoinSet<()> {
    let mut set = JoinSet::new();
    for (outcome, server) in started.outcomes.iter().zip(&config.servers) {
        let Some(index) = outcome.index else { continue };
        let job = Supervisor {
            board: board.clone(),
            server: server.clone(),
            index,
            stderr: outcome.stderr.clone(),
            handshake_timeout,
            ct: ct.clone(),
        };
        set.spawn(job.run());
    }
    set
}

struct Supervisor {
    board: PegBoard,
    server: ServerConfig,
    index: usize,
    stderr: Option<StderrTail>,
    handshake_timeout: Duration,
    ct: CancellationToken,
}

impl Supervisor {
    async fn run(mut self) {
        let name = self.server.name.clone();
        let mut backoff = BACKOFF_MIN;
        let mut up_since = Instant::now();
        loop {
            if !self.wait_closed().await {
                return;
            }
            let tail = match &self.stderr {
                Some(t) => {
                    let _ = t.wait_closed(Duration::from_millis(300)).await;
                    t.render()
                }
                None => String::new(),
            };
            if up_since.elapsed() >= HEALTHY_RUN {
                backoff = BACKOFF_MIN;
            }
            let removed = self.board.remove_service(self.index).unwrap_or(0);
            tracing::warn!(
                "{name}: stopped (process exited or connection dropped); {removed} tool{} removed, restarting in \
                 {}s{tail}",
                if removed == 1 { "" } else { "s" },
                backoff.as_secs()
            );
            loop {
                tokio::select! {
                    () = self.ct.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                // The next wait (after a failed try, or after the next short run) is twice as long.
                backoff = (backoff * 2).min(BACKOFF_MAX);
                let ct = self.ct.clone();
                let attempt = tokio::select! {
                    () = ct.cancelled() => return,
                    r = self.restart() => r,
                };
                match attempt {
                    Ok(tools) => {
                        tracing::info!(
                            "{name}: restarted, {tools} tool{}",
                            if tools == 1 { "" } else { "s" }
                        );
                        up_since = Instant::now();
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(
                            "{name}: restart failed: {e:#}; next try in {}s",
                            backoff.as_secs()
                        );
                    }
                }
            }
        }
    }

    /// Wait until the service is closed (true) or we are cancelled (false).
    async fn wait_closed(&self) -> bool {
        tokio::select! {
            () = self.ct.cancelled() => false,
            // Closed, or removed by someone else (UnknownService): either way it needs restarting.
            _ = self.board.wait_closed(self.index) => true,
        }
    }

    async fn restart(&mut self) -> anyhow::Result<usize> {
        let conn = connect::connect(&self.server, self.handshake_timeout).await?;
        let stderr = conn.stderr.clone();
        let added = connect::register(&self.board, &self.server, conn).await?;
        self.index = added.index;
        self.stderr = stderr;
        Ok(added.tools)
    }
}
