//! A client's limits as the config sets them (`maxSessions`, `maxConcurrent`, `callsPerMinute`).

use std::num::NonZeroU32;

/// Per-client limits; `None` is "no limit of this kind" (`max_sessions`: the fair share of the
/// global cap, see [`fair_share`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitSettings {
    /// Open HTTP sessions at most (`maxSessions`).
    pub max_sessions: Option<usize>,
    /// Calls in progress at once at most (`maxConcurrent`).
    pub max_concurrent: Option<usize>,
    /// Calls per minute at most (`callsPerMinute`), as a burst of that many refilled evenly over
    /// the minute.
    pub calls_per_minute: Option<NonZeroU32>,
}

/// The sessions a client may hold when its entry sets no `maxSessions`: the global cap
/// (`--max-sessions`) divided evenly among the `clients` (at least one each), so that no client
/// can take every session and lock the others out.
pub fn fair_share(global_max: usize, clients: usize) -> usize {
    (global_max / clients.max(1)).max(1)
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn fair_share() {
        use crate::limits::fair_share;
        assert_eq!(fair_share(1000, 3), 333);
        assert_eq!(fair_share(2, 5), 1);
        assert_eq!(fair_share(1000, 0), 1000);
    }
}
