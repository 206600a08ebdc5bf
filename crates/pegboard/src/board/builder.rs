//! [`PegBoardBuilder`]: a board with other naming, timeouts or limits than the defaults.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use super::{DEFAULT_CALL_TIMEOUT, DEFAULT_DISCOVERY_TIMEOUT, Inner, PegBoard};
use crate::{NamingPolicy, discovery::DiscoveryLimits, registry::Registry};

const DEFAULT_MAX_PAGES: usize = 1_000;
const DEFAULT_MAX_TOOLS: usize = 10_000;

/// Builds a [`PegBoard`] with other naming or timeouts than the defaults.
///
/// ```
/// use std::time::Duration;
/// use pegboard::{NamingPolicy, PegBoard};
///
/// let board = PegBoard::builder()
///     .naming(NamingPolicy::default().with_separator("__"))
///     .call_timeout(Duration::from_secs(20))
///     .discovery_timeout(Duration::from_secs(5))
///     .build();
/// assert_eq!(board.naming().separator(), "__");
/// ```
#[derive(Clone, Debug)]
pub struct PegBoardBuilder {
    naming: NamingPolicy,
    call_timeout: Option<Duration>,
    limits: DiscoveryLimits,
}

impl Default for PegBoardBuilder {
    fn default() -> Self {
        Self {
            naming: NamingPolicy::default(),
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            limits: DiscoveryLimits {
                timeout: Some(DEFAULT_DISCOVERY_TIMEOUT),
                max_pages: DEFAULT_MAX_PAGES,
                max_tools: DEFAULT_MAX_TOOLS,
            },
        }
    }
}

impl Default for Inner {
    fn default() -> Self {
        PegBoardBuilder::default().inner()
    }
}

impl PegBoardBuilder {
    /// How namespaces and tool names are combined (default: [`NamingPolicy::default`]).
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.naming = naming;
        self
    }

    /// Default timeout of each call (default 60 s).
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// Let calls wait as long as the service takes.
    #[must_use]
    pub fn no_call_timeout(mut self) -> Self {
        self.call_timeout = None;
        self
    }

    /// Timeout for listing a service's tools, all pages together (default 30 s).
    #[must_use]
    pub fn discovery_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = Some(timeout);
        self
    }

    /// The most tools the board takes from one service (default 10,000) and the most pages it
    /// asks for (default 1,000).
    #[must_use]
    pub fn max_tools_per_service(mut self, max_tools: usize, max_pages: usize) -> Self {
        self.limits.max_tools = max_tools;
        self.limits.max_pages = max_pages.max(1);
        self
    }

    /// The board.
    pub fn build(self) -> PegBoard {
        PegBoard {
            inner: Arc::new(self.inner()),
        }
    }

    fn inner(self) -> Inner {
        Inner {
            state: ArcSwap::from_pointee(Registry::default()),
            write: Mutex::new(()),
            changes: watch::Sender::new(0),
            naming: self.naming,
            call_timeout: self.call_timeout,
            limits: self.limits,
        }
    }
}
