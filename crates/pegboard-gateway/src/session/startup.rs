//! Serving while servers are still starting.
//!
//! `pegboard serve` answers `initialize` at once and starts its servers in the background: each one
//! joins the board when it is up (sessions get `notifications/tools/list_changed` from the board's
//! own change feed, as for any other change), and a hung server costs one startup timeout there, not
//! a delay for every client.
//!
//! A client that asks `tools/list` right after `initialize` would then see a half-filled board for
//! no better reason than having been quick. So for a grace period (`--wait`, [`DEFAULT_WAIT`])
//! after startup began, `tools/list` and a `tools/call` of a tool not (yet) on the board wait until
//! every server has started or failed, or the grace period is over, whichever comes first. The wait
//! is on an event ([`Starting`] marks the startup settled), never a poll. `prompts/list`,
//! `prompts/get`, `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe`, `completion/complete` and `server/discover` (whose `supportedVersions`
//! come from the servers) wait the same way: a client that opens a session for one request (the
//! MCP Inspector's CLI does) must find the prompt or resource it names.
//!
//! `initialize` itself never waits. A session's capabilities are fixed by its `initialize`, so one
//! that begins while servers are still starting is offered logging, prompts, resources and
//! completions (a server still to come may bring them; until one does, their lists are empty), and
//! its protocol generation is negotiated against the servers already on the board.
//!
//! A [`Gateway`](crate::Gateway) begins a startup when it is built ([`Startup::begin`]) and
//! finishes it when every server has started or failed ([`Starting::finish`]).

use std::time::Duration;

use pegboard::PegBoard;
use tokio::sync::watch;
use tokio::time::Instant;

/// The default grace period of `pegboard serve --wait`.
///
/// Long enough for what most servers need to start and list their tools (a native binary: well
/// under a second; a cached `npx`/`uvx` package: one to a few seconds, more on a loaded machine),
/// so a client that lists at once gets the full board in the common case. Short enough to stay well
/// inside MCP clients' request timeouts (the TypeScript SDK's default is 60 s) and at a third of the default
/// startup timeout (30 s), so a hung server delays that first answer by at most this, once.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

/// Where the gateway's startup is, as seen by the sessions: cheap to clone, shared by all of them.
#[derive(Clone, Debug)]
pub struct Startup {
    /// `true` once every server has started or failed.
    settled: watch::Receiver<bool>,
    /// The end of the grace period; `None`: wait however long startup takes.
    until: Option<Instant>,
}

/// The starting side of a [`Startup`]: [`finish`](Self::finish) it when every server has started
/// or failed. Dropping it counts as finishing, so no session is ever left waiting on a startup that
/// was abandoned.
#[derive(Debug)]
pub struct Starting {
    settled: watch::Sender<bool>,
}

impl Startup {
    /// A startup that begins now; requests wait for it at most `wait` from now (zero: never).
    pub fn begin(wait: Duration) -> (Self, Starting) {
        let (tx, rx) = watch::channel(false);
        let startup = Self {
            settled: rx,
            until: Instant::now().checked_add(wait),
        };
        (startup, Starting { settled: tx })
    }

    /// A startup already over: nothing ever waits (a board filled before serving).
    pub fn settled() -> Self {
        let (tx, rx) = watch::channel(true);
        drop(tx);
        Self {
            settled: rx,
            until: Some(Instant::now()),
        }
    }

    /// Whether every server has started or failed.
    pub fn is_settled(&self) -> bool {
        *self.settled.borrow()
    }

    /// Whether the startup wait is over: every server has started or failed, or the grace period
    /// has passed (what a readiness probe reports).
    pub fn is_over(&self) -> bool {
        self.is_settled() || self.until.is_some_and(|until| Instant::now() >= until)
    }

    /// Wait until every server has started or failed, or the grace period is over, whichever comes
    /// first. Returns at once when either has happened.
    pub async fn wait(&self) {
        if self.is_over() {
            return;
        }
        let mut settled = self.settled.clone();
        let settling = settled.wait_for(|done| *done);
        match self.until {
            // An error means the sender is gone, which also settles it (see `Starting`).
            Some(until) => {
                if tokio::time::timeout_at(until, settling).await.is_err() {
                    tracing::debug!("answering before every server has started: --wait is over");
                }
            }
            None => {
                let _ = settling.await;
            }
        }
    }

    /// Before calling `tool`: [`wait`](Self::wait) if it is not on `board` (yet), so a client that
    /// calls a tool right after `initialize` is not told it does not exist while its server starts.
    pub async fn wait_for_tool(&self, board: &PegBoard, tool: &str) {
        if board.get_tool(tool).is_none() {
            self.wait().await;
        }
    }
}

impl Default for Startup {
    fn default() -> Self {
        Self::settled()
    }
}

impl Starting {
    /// Every server has started or failed: wake whoever waits.
    pub fn finish(self) {
        drop(self);
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        self.settled.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_ends_when_the_startup_finishes() {
        let (startup, starting) = Startup::begin(Duration::from_secs(3600));
        let waiter = tokio::spawn({
            let startup = startup.clone();
            async move { startup.wait().await }
        });
        assert!(!startup.is_settled());
        starting.finish();
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the wait did not end with the startup")
            .expect("waiter");
        assert!(startup.is_settled());
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_with_the_grace_period() {
        let (startup, _starting) = Startup::begin(Duration::from_secs(5));
        let began = Instant::now();
        startup.wait().await;
        // Paused time: the clock only moves to the next timer, the grace period's end.
        assert_eq!(began.elapsed(), Duration::from_secs(5));
        assert!(!startup.is_settled());
        // Once it is over, nothing waits any more.
        startup.wait().await;
        assert_eq!(began.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_wait_never_waits() {
        let (startup, _starting) = Startup::begin(Duration::ZERO);
        let began = Instant::now();
        startup.wait().await;
        assert_eq!(began.elapsed(), Duration::ZERO);
    }

    #[tokio::test]
    async fn an_abandoned_startup_releases_its_waiters() {
        let (startup, starting) = Startup::begin(Duration::from_secs(3600));
        drop(starting);
        tokio::time::timeout(Duration::from_secs(10), startup.wait())
            .await
            .expect("a dropped Starting must settle the startup");
    }

    #[tokio::test(start_paused = true)]
    async fn a_settled_startup_never_waits() {
        let began = Instant::now();
        Startup::settled().wait().await;
        Startup::default()
            .wait_for_tool(&PegBoard::new(), "x-y")
            .await;
        assert_eq!(began.elapsed(), Duration::ZERO);
    }
}
