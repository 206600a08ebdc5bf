//! [`SessionGuard`]: a downstream session, counted while it is open and timed when it closes.

use std::sync::Arc;
use std::time::Instant;

use super::shared::Core;

/// An open downstream session: counted in `pegboard_sessions` until dropped, then its duration
/// goes to `mcp_server_session_duration_seconds`.
#[derive(Debug)]
#[must_use = "the session counts as open until this is dropped"]
pub struct SessionGuard {
    core: Arc<Core>,
    opened: Instant,
}

impl SessionGuard {
    pub(crate) fn open(core: &Arc<Core>) -> Self {
        core.metrics.session_opened();
        Self {
            core: Arc::clone(core),
            opened: Instant::now(),
        }
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        let lasted = self.opened.elapsed();
        self.core.metrics.session_closed(lasted);
        // After the record, so whoever reads this line finds the session counted.
        tracing::debug!(
            "session closed after {:.3} s (recorded in the metrics)",
            lasted.as_secs_f64()
        );
    }
}
