//! Restart servers that die while `pegboard serve` runs, with backoff, and put their tools back.
//!
//! One task per server that started: it waits until the board says the service closed (the process
//! exited or the connection dropped), removes it (clients get `tools/list_changed`), then reconnects with
//! an exponential backoff (1 s doubling to 60 s; back to 1 s once a run lasted a minute: `backoff.rs`) and
//! re-registers.
//!
//! Each task has its own [`Supervised`] handle, so a config reload can stop one server's supervisor
//! without touching the others.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pegboard::PegBoard;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::connect::{self, StderrTail};

mod backoff;

use backoff::{BACKOFF_MIN, Backoff};

/// Now, on tokio's clock (which a test can pause and move), as the backoff policy takes it.
fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// Where a supervised server is on the board right now: `None` while it is down (between its removal and a
/// successful restart). Shared between the supervisor, which changes it on every restart, and its owner.
#[derive(Clone, Default)]
struct SharedIndex(Arc<Mutex<Option<usize>>>);

impl SharedIndex {
    fn get(&self) -> Option<usize> {
        // Only plain values are stored: a panic while holding the lock cannot leave it half-written.
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, index: Option<usize>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = index;
    }
}

/// The handle of one server's supervisor.
pub struct Supervised {
    ct: CancellationToken,
    task: JoinHandle<()>,
    index: SharedIndex,
}

impl Supervised {
    /// Whether the server is on the board now (not down, waiting for a restart).
    pub fn is_up(&self) -> bool {
        self.index.get().is_some()
    }

    /// Where the server is on the board now (`None`: down, waiting for a restart or a login).
    pub fn index(&self) -> Option<usize> {
        self.index.get()
    }

    /// Stop the supervisor and wait until it has stopped; returns where the server is on the board then,
    /// for the caller to remove it. Once this returns nothing will register the server again.
    pub async fn stop(self) -> Option<usize> {
        self.ct.cancel();
        if let Err(e) = self.task.await {
            tracing::warn!("a supervisor task ended abnormally: {e}");
        }
        self.index.get()
    }
}

/// The supervisors of one `pegboard serve`: starts one per server, and stops them all at the end.
pub struct Supervisors {
    board: PegBoard,
    handshake_timeout: Duration,
    /// Parent of every supervisor's token: cancelling it stops them all at once.
    ct: CancellationToken,
    /// A clone lives in every supervisor task until it ends, so [`stop_all`](Self::stop_all) can wait for
    /// all of them, also ones whose [`Supervised`] handle was dropped (a reload cut short by shutdown).
    alive: mpsc::Sender<()>,
    all_ended: mpsc::Receiver<()>,
}

impl Supervisors {
    /// No supervisors yet; servers restarted by them get `handshake_timeout` to answer.
    pub fn new(board: &PegBoard, handshake_timeout: Duration) -> Self {
        // Nothing is ever sent: the channel only tells when the last sender (task) is gone.
        let (alive, all_ended) = mpsc::channel(1);
        Self {
            board: board.clone(),
            handshake_timeout,
            ct: CancellationToken::new(),
            alive,
            all_ended,
        }
    }

    /// Start supervising `server`, which is on the board at `index`.
    pub fn spawn(
        &self,
        server: &ServerConfig,
        index: usize,
        stderr: Option<StderrTail>,
    ) -> Supervised {
        self.spawn_job(server, Some(index), stderr)
    }

    fn spawn_job(
        &self,
        server: &ServerConfig,
        index: Option<usize>,
        stderr: Option<StderrTail>,
    ) -> Supervised {
        let ct = self.ct.child_token();
        let shared = SharedIndex::default();
        shared.set(index);
        let job = Supervisor {
            board: self.board.clone(),
            server: server.clone(),
            index: index.unwrap_or(usize::MAX),
            shared: shared.clone(),
            stderr,
            handshake_timeout: self.handshake_timeout,
            ct: ct.clone(),
        };
        let alive = self.alive.clone();
        let task = tokio::spawn(async move {
            job.run().await;
            drop(alive);
        });
        Supervised {
            ct,
            task,
            index: shared,
        }
    }

    /// Supervise `server`, which is not on the board because it needs a login: it is started
    /// as soon as its credentials are stored (`pegboard login`, in any process), then supervised
    /// as usual.
    pub fn spawn_waiting_for_login(&self, server: &ServerConfig) -> Supervised {
        crate::oauth::pending().mark(server, Vec::new());
        self.spawn_job(server, None, None)
    }

    /// Stop every supervisor and wait until all have ended. Call it before shutting the board down, so
    /// nothing is restarted during shutdown.
    pub async fn stop_all(self) {
        let Self {
            ct,
            alive,
            mut all_ended,
            ..
        } = self;
        ct.cancel();
        drop(alive);
        // `None` once every task has dropped its sender, that is, has ended.
        while all_ended.recv().await.is_some() {}
    }
}

/// Clears the server's "waits for a login" mark when dropped.
struct ForgetPending(String);

impl Drop for ForgetPending {
    fn drop(&mut self) {
        crate::oauth::pending().clear(&self.0);
    }
}

/// What a supervisor does next.
enum Next {
    /// Wait for the running server to stop.
    WaitClosed,
    /// Start it again after the backoff; the board names of the tools it had.
    Restart(Vec<String>),
    /// Wait for a login, then start it.
    WaitLogin,
}

struct Supervisor {
    board: PegBoard,
    server: ServerConfig,
    index: usize,
    /// `index` as the owner sees it; kept equal to it while the server is on the board.
    shared: SharedIndex,
    stderr: Option<StderrTail>,
    handshake_timeout: Duration,
    ct: CancellationToken,
}

impl Supervisor {
    async fn run(mut self) {
        let name = self.server.name.clone();
        // However the supervisor ends (a reload removed the entry, shutdown), the server no
        // longer waits for a login here.
        let _forget = ForgetPending(name.clone());
        let mut backoff = Backoff::new(now());
        // Not on the board: it waits for a login (`spawn_waiting_for_login`).
        let mut next = if self.shared.get().is_some() {
            Next::WaitClosed
        } else {
            Next::WaitLogin
        };
        loop {
            next = match next {
                Next::WaitClosed => {
                    if !self.wait_closed().await {
                        return;
                    }
                    let tools = crate::oauth::tools_of(&self.board, self.index);
                    let tail = match &self.stderr {
                        Some(t) => {
                            let _ = t.wait_closed(Duration::from_millis(300)).await;
                            t.render()
                        }
                        None => String::new(),
                    };
                    let wait = backoff.stopped(now());
                    let removed = self.board.remove_service(self.index).unwrap_or(0);
                    self.shared.set(None);
                    tracing::warn!(
                        "{name}: stopped (process exited or connection dropped); {removed} tool{} removed, restarting in \
                         {}s{tail}",
                        if removed == 1 { "" } else { "s" },
                        wait.as_secs()
                    );
                    Next::Restart(tools)
                }
                Next::Restart(tools) => {
                    tokio::select! {
                        () = self.ct.cancelled() => return,
                        () = tokio::time::sleep(backoff.wait()) => {}
                    }
                    // The next wait (after a failed try, or after the next short run) is twice as long.
                    backoff.trying();
                    // When the try starts (the backoff test times the schedule by this line).
                    tracing::debug!(server = %name, "restart: starting it again");
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
                            backoff.started(now());
                            Next::WaitClosed
                        }
                        // No more backoff: it starts again once a login stores credentials.
                        Err(e) if crate::oauth::needs_login(&e).is_some() => {
                            crate::io::stderr::line(format_args!("{name}: {e:#}"));
                            crate::oauth::pending().mark(&self.server, tools);
                            Next::WaitLogin
                        }
                        Err(e) => {
                            tracing::warn!(
                                "{name}: restart failed: {e:#}; next try in {}s",
                                backoff.wait().as_secs()
                            );
                            Next::Restart(tools)
                        }
                    }
                }
                Next::WaitLogin => {
                    let ct = self.ct.clone();
                    let attempt = tokio::select! {
                        () = ct.cancelled() => return,
                        r = async {
                            crate::oauth::wait_for_login(&self.server).await;
                            self.restart().await
                        } => r,
                    };
                    match attempt {
                        Ok(tools) => {
                            crate::oauth::pending().clear(&name);
                            tracing::info!(
                                "{name}: logged in, {tools} tool{}",
                                if tools == 1 { "" } else { "s" }
                            );
                            backoff.logged_in(now());
                            Next::WaitClosed
                        }
                        Err(e) if crate::oauth::needs_login(&e).is_some() => {
                            // The stored credentials were refused at once: wait for the next login,
                            // not in a loop.
                            tokio::select! {
                                () = self.ct.cancelled() => return,
                                () = tokio::time::sleep(BACKOFF_MIN) => {}
                            }
                            Next::WaitLogin
                        }
                        Err(e) => {
                            tracing::warn!(
                                "{name}: start after the login failed: {e:#}; next try in {}s",
                                backoff.wait().as_secs()
                            );
                            Next::Restart(Vec::new())
                        }
                    }
                }
            };
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
        // No await between the registration and here: a cancellation cannot slip in and leave the owner
        // unaware of a service that is on the board.
        self.index = added.index;
        self.shared.set(Some(added.index));
        self.stderr = stderr;
        Ok(added.tools)
    }
}
