//! [`PegBoard`]: the registry of tools and the router of calls.
//!
//! One concern per file: [`builder`] (construction and limits), [`reads`] (lock-free lookups),
//! [`writes`] (adding services and tools, removing tools and namespaces), [`services`]
//! (liveness, removal, shutdown), [`calls`] (routing a call), [`refresh`] (re-listing a
//! service, following `tools/list_changed`). Every write goes through [`PegBoard::transaction`].

use std::{
    borrow::Cow,
    fmt,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::{NamingPolicy, discovery::DiscoveryLimits, registry::Registry};

mod builder;
mod calls;
mod catalog;
mod completion;
mod peers;
mod pending;
mod prompts;
mod reads;
mod refresh;
mod resources;
mod search;
mod services;
mod writes;

pub use builder::PegBoardBuilder;
pub use peers::ToolTarget;
pub use prompts::PromptTarget;
pub use reads::Route;
pub use resources::ResourceTarget;
pub use writes::Added;

/// Default timeout of a tool call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Default timeout of listing a service's tools (all pages together).
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// The tools of many MCP services on one board, each service under its namespace.
///
/// `PegBoard` is a handle: clones are cheap and all clones are the same board, so share it
/// between tasks as it is (or in an `Arc`, as you like). Reads (`get_tool`, `select_tools`,
/// `list_all_tools`, ...) take no lock: they load an immutable snapshot, so they never wait for
/// writers or for each other, and every read sees one consistent board. Writes (`add_service`,
/// `register_tool`, `unregister_*`) are serialised, build the next snapshot and swap it in: all of
/// a write lands, or none of it, and watchers ([`subscribe`](Self::subscribe)) hear of it once.
///
/// ```
/// # use std::sync::Arc;
/// use pegboard::{PegBoard, Tool};
///
/// let mut pegboard = PegBoard::new();
/// assert_eq!(pegboard.tool_count(), 0);
/// // A hand-registered tool needs a service to route to; see `add_service` for the usual way.
/// let schema = Arc::new(serde_json::Map::new());
/// let err = pegboard.register_tool(Some("web"), Tool::new("search", "Search", schema), 0).unwrap_err();
/// assert!(matches!(err, pegboard::PegBoardError::UnknownService { index: 0 }));
/// ```
#[derive(Clone, Default)]
pub struct PegBoard {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    state: ArcSwap<Registry>,
    /// Serialises writers; never held across an `.await`.
    write: Mutex<()>,
    changes: watch::Sender<u64>,
    naming: NamingPolicy,
    call_timeout: Option<Duration>,
    limits: DiscoveryLimits,
}

impl fmt::Debug for PegBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PegBoard")
            .field("state", &**self.snapshot())
            .field("naming", &self.inner.naming)
            .field("call_timeout", &self.inner.call_timeout)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl PegBoard {
    /// An empty board with the default naming policy (`namespace-tool`, LLM-safe) and timeouts.
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// assert_eq!((board.tool_count(), board.service_count(), board.namespace_count()), (0, 0, 0));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The board's call timeout (`None`: calls may take as long as they take); a service may
    /// have its own ([`ServiceOptions::call_timeout`](crate::ServiceOptions::call_timeout)).
    ///
    /// ```
    /// let board = pegboard::PegBoard::builder().no_call_timeout().build();
    /// assert_eq!(board.call_timeout(), None);
    /// ```
    pub fn call_timeout(&self) -> Option<Duration> {
        self.inner.call_timeout
    }

    /// A builder for a board with other naming or timeouts.
    pub fn builder() -> PegBoardBuilder {
        PegBoardBuilder::default()
    }

    /// An empty board with this naming policy.
    ///
    /// ```
    /// let board = pegboard::PegBoard::with_naming(pegboard::NamingPolicy::verbatim());
    /// assert!(!board.naming().is_llm_safe());
    /// ```
    pub fn with_naming(naming: NamingPolicy) -> Self {
        Self::builder().naming(naming).build()
    }

    /// The naming policy in force.
    pub fn naming(&self) -> &NamingPolicy {
        &self.inner.naming
    }

    /// A receiver that changes whenever the set of tools on the board changes (its value is the
    /// board's generation), once per write. The gateway uses it to send `tools/list_changed`
    /// downstream; tests wait on it instead of sleeping.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// The board's generation: it grows with every change of the tools on the board (the value
    /// [`PegBoard::subscribe`] sees). Something derived from the tools, kept with the generation
    /// it was built at, is current while this returns the same number.
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// assert_eq!(board.generation(), board.generation());
    /// ```
    pub fn generation(&self) -> u64 {
        *self.inner.changes.borrow()
    }

    fn snapshot(&self) -> arc_swap::Guard<Arc<Registry>> {
        self.inner.state.load()
    }

    /// The one way the board changes. `write` gets a copy-on-write view of the current
    /// registry: it reads through it freely, and its first `to_mut()` clones the registry into
    /// the next one. If `write` returns `Ok` having changed something, the next registry is
    /// reindexed, swapped in whole, and watchers are told once; on `Err`, or if nothing was
    /// changed, the board stays exactly as it was. Writers are serialised; `write` must not block.
    fn transaction<T, E>(
        &self,
        write: impl FnOnce(&mut Cow<'_, Registry>) -> Result<T, E>,
    ) -> Result<T, E> {
        // The guarded data is `()`: a writer that panicked left no half-made state behind
        // (snapshots are swapped in whole), so a poisoned lock is safe to take.
        let _writing = self
            .inner
            .write
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.snapshot();
        let mut draft = Cow::Borrowed(&**current);
        let value = write(&mut draft)?;
        if let Cow::Owned(mut next) = draft {
            next.reindex();
            let generation = next.generation;
            self.inner.state.store(Arc::new(next));
            self.inner.changes.send_replace(generation);
        }
        Ok(value)
    }
}
