//! A service as the board stores it, and what the board tells about it.

use std::{
    fmt,
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use std::{collections::HashMap, sync::Arc};

use arc_swap::ArcSwap;
use arcstr::ArcStr;
use rmcp::{Peer, RoleClient, service::RunningServiceCancellationToken};
use tokio::{sync::watch, task::AbortHandle};

use crate::{BoxedService, ServiceOptions};

/// A stored service. Shared as `Arc`: a call in flight holds one, so the service outlives its
/// removal from the board until the call is answered; it shuts down when the last holder drops it.
pub(crate) struct ServiceSlot {
    pub(crate) namespace: Option<std::sync::Arc<str>>,
    /// Calls go through a cloned `Peer`, not the `RunningService`: futures through the boxed
    /// `DynService` are not `Send` enough for `tokio::spawn` (see DESIGN.md, "A trap in rmcp 3.x").
    pub(crate) peer: Peer<RoleClient>,
    /// Stops the service; taken and used when the slot goes (or at shutdown). The
    /// `RunningService` itself is owned by a task that awaits its end and flips `ended`.
    pub(crate) stop: Mutex<Option<RunningServiceCancellationToken>>,
    /// Becomes `true` when the service's connection has ended, for whatever reason.
    pub(crate) ended: watch::Receiver<bool>,
    pub(crate) options: ServiceOptions,
    /// Refresh tickets, in the order refreshes started.
    refresh_started: AtomicU64,
    /// The ticket of the newest refresh that committed (written under the board's write lock).
    /// A refresh commits only if no newer one has; a failed refresh never moves it, so it never
    /// makes an older good refresh look overtaken.
    refresh_committed: AtomicU64,
    /// Set when the namespace it was added under is removed while another namespace's tool still
    /// routes to it: it stays for that tool, but is no longer listed or re-listed.
    withdrawn: AtomicBool,
    watcher: Mutex<Option<AbortHandle>>,
    /// Board name -> reason, of the tools its [`ListingFilter`](crate::ListingFilter) withheld at
    /// the last listing that committed. Read only when a name is not on the board.
    withheld: ArcSwap<Withholding>,
}

/// Board name -> why the tool is off the board.
pub(crate) type Withholding = HashMap<ArcStr, Arc<str>>;

impl ServiceSlot {
    /// The server's one-line summary from its handshake: see [`ServiceInfo::summary`].
    pub(crate) fn summary(&self) -> Option<String> {
        let info = self.peer.peer_info()?;
        let first_line = info
            .instructions
            .as_deref()
            .and_then(|text| text.lines().map(str::trim).find(|line| !line.is_empty()));
        if let Some(line) = first_line {
            return Some(line.to_string());
        }
        let server = info.server_info.as_ref()?;
        let mut line = format!(
            "{} {}",
            server.title.as_deref().unwrap_or(&server.name),
            server.version
        );
        if let Some(description) = &server.description {
            line.push_str(": ");
            line.push_str(description);
        }
        Some(line)
    }
}

impl fmt::Debug for ServiceSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceSlot")
            .field("namespace", &self.namespace)
            .field("state", &self.state())
            .field("withdrawn", &self.is_withdrawn())
            .finish_non_exhaustive()
    }
}

impl ServiceSlot {
    pub(crate) fn call_timeout(&self) -> Option<Duration> {
        self.options.call_timeout
    }

    /// Store a service: a task owns it and reports its end through [`ServiceSlot::closed`].
    pub(crate) fn new(
        namespace: Option<std::sync::Arc<str>>,
        service: BoxedService,
        options: ServiceOptions,
        withheld: Withholding,
    ) -> Self {
        let peer = service.peer().clone();
        let stop = service.cancellation_token();
        let (ended_tx, ended) = watch::channel(false);
        tokio::spawn(async move {
            let reason = service.waiting().await;
            tracing::debug!(?reason, "service connection ended");
            ended_tx.send_replace(true);
        });
        Self {
            namespace,
            peer,
            stop: Mutex::new(Some(stop)),
            ended,
            options,
            refresh_started: AtomicU64::new(0),
            refresh_committed: AtomicU64::new(0),
            withdrawn: AtomicBool::new(false),
            watcher: Mutex::new(None),
            withheld: ArcSwap::from_pointee(withheld),
        }
    }

    pub(crate) fn state(&self) -> ServiceState {
        if *self.ended.borrow() || self.peer.is_transport_closed() {
            ServiceState::Closed
        } else {
            ServiceState::Running
        }
    }

    /// Ask the service to stop now (closing its transport: a child process gets EOF, then a
    /// signal), rather than when the last holder of the slot lets go.
    pub(crate) fn stop(&self) {
        self.stop_watching();
        if let Some(stop) = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            stop.cancel();
        }
    }

    /// A future that resolves once the service's connection has ended. It holds only the
    /// signal, not the slot, so waiting never keeps the service alive.
    pub(crate) fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut ended = self.ended.clone();
        async move {
            // An error means the owning task is gone, which it only is once the service ended.
            let _ = ended.wait_for(|ended| *ended).await;
        }
    }

    /// A ticket for a refresh that starts now.
    pub(crate) fn start_refresh(&self) -> u64 {
        self.refresh_started.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether a refresh with this ticket may commit: no newer refresh has. Call under the
    /// board's write lock, and [`ServiceSlot::committed_refresh`] before releasing it.
    pub(crate) fn may_commit_refresh(&self, ticket: u64) -> bool {
        ticket > self.refresh_committed.load(Ordering::SeqCst)
    }

    pub(crate) fn committed_refresh(&self, ticket: u64) {
        self.refresh_committed.store(ticket, Ordering::SeqCst);
    }

    pub(crate) fn withdraw(&self) {
        self.withdrawn.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_withdrawn(&self) -> bool {
        self.withdrawn.load(Ordering::SeqCst)
    }

    /// Why the tool the board would call `name` is withheld, if it is.
    pub(crate) fn withheld(&self, name: &str) -> Option<Arc<str>> {
        self.withheld.load().get(name).cloned()
    }

    /// What the last committed listing withheld (call under the board's write lock).
    pub(crate) fn set_withheld(&self, withheld: Withholding) {
        let unchanged = **self.withheld.load() == withheld;
        if !unchanged {
            self.withheld.store(Arc::new(withheld));
        }
    }

    pub(crate) fn set_watcher(&self, handle: AbortHandle) {
        *self.watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
    }

    pub(crate) fn stop_watching(&self) {
        if let Some(handle) = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            handle.abort();
        }
    }
}

impl Drop for ServiceSlot {
    fn drop(&mut self) {
        // The last holder is gone (the board let go, and no call is in flight): stop the service.
        self.stop();
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
    /// What the server says it is, in one line: the first line of its `instructions`, else its
    /// `serverInfo` (title or name, version, description). `None` before the handshake.
    pub summary: Option<String>,
}
