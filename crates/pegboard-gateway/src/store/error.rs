//! [`StoreError`]: why a round trip to the store failed, in words for whoever reads the log.

use std::time::Duration;

/// Why the store could not be used. Every one is counted in `pegboard_store_errors_total` and
/// logged; what needed the store is answered 503 with Retry-After, and the client retries.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The client refused the URL (it was checked before, so this is rare: a TLS setup, say).
    #[error("the store {url} cannot be used: {source}")]
    Setup {
        /// The store, its password hidden.
        url: String,
        /// What redis-rs said.
        #[source]
        source: redis::RedisError,
    },
    /// Opened outside a Tokio runtime (the connection's tasks need one).
    #[error("the store {url} must be opened inside a Tokio runtime")]
    NoRuntime {
        /// The store, its password hidden.
        url: String,
    },
    /// The store answered with an error, or the connection broke.
    #[error(
        "the store {url} failed while {what}: {source} (is it running and reachable? the gateway reconnects by itself)"
    )]
    Failed {
        /// The store, its password hidden.
        url: String,
        /// What the gateway was doing.
        what: &'static str,
        /// What redis-rs said.
        #[source]
        source: redis::RedisError,
    },
    /// No answer in time: the round trip was given up (the store may be down or overloaded).
    #[error(
        "the store {url} did not answer within {after:?} while {what} (is it running and reachable? the gateway reconnects by itself)"
    )]
    Timeout {
        /// The store, its password hidden.
        url: String,
        /// What the gateway was doing.
        what: &'static str,
        /// The bound.
        after: Duration,
    },
    /// What the store holds under a key could not be read back (another program wrote it, or
    /// another version of the gateway).
    #[error(
        "the store's entry {key} is not what this gateway wrote ({reason}); it is ignored (delete it, or give this gateway its own `store.prefix`)"
    )]
    Unreadable {
        /// The key.
        key: String,
        /// What was wrong with it.
        reason: String,
    },
}
