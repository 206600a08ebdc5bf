//! A call or a session refused by a client's limits: each names the client, the limit and what
//! to do, for the error the front sends.

use std::time::Duration;

/// Why a client's request is refused by its limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// `maxConcurrent` calls already in progress.
    #[error(
        "client `{client}` already has {limit} calls in progress, its limit (`maxConcurrent` in the \
         gateway's config); wait for one to finish and retry"
    )]
    Concurrency {
        /// The client's name.
        client: String,
        /// Its `maxConcurrent`.
        limit: usize,
    },
    /// `callsPerMinute` used up.
    #[error(
        "client `{client}` made {limit} calls within the last minute, its limit (`callsPerMinute` in \
         the gateway's config); retry in {:.1} s",
        retry_after.as_secs_f64()
    )]
    Rate {
        /// The client's name.
        client: String,
        /// Its `callsPerMinute`.
        limit: u32,
        /// When the next call will be accepted.
        retry_after: Duration,
    },
    /// `maxSessions` of this client already open.
    #[error(
        "client `{client}` already has {limit} sessions open, its limit (`maxSessions` in the \
         gateway's config); end a session (HTTP DELETE) or wait for an idle one to expire"
    )]
    ClientSessions {
        /// The client's name.
        client: String,
        /// Its session limit.
        limit: usize,
    },
    /// The gateway's `--max-sessions` reached and every session is busy.
    #[error("the gateway holds {limit} sessions (--max-sessions) and none is idle; retry later")]
    GatewaySessions {
        /// The global cap.
        limit: usize,
    },
    /// The client's limits are counted in the store (`--store`), which cannot be reached now:
    /// the request is refused rather than let through uncounted.
    #[error(
        "client `{client}`'s {limits} are counted in the store, which cannot be reached now \
         ({reason}); retry in {} s",
        retry_after.as_secs().max(1)
    )]
    Unavailable {
        /// The client's name.
        client: String,
        /// Which limits ("`callsPerMinute`", "`maxSessions`", ...).
        limits: &'static str,
        /// What the store said.
        reason: String,
        /// When to try again.
        retry_after: Duration,
    },
}

impl LimitError {
    /// When to try again, for a `Retry-After` header: the rate window's wait, else `None`.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LimitError::Rate { retry_after, .. } | LimitError::Unavailable { retry_after, .. } => {
                Some(*retry_after)
            }
            _ => None,
        }
    }
}
