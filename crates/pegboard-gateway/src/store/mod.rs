//! The store: the fleet's shared state on Redis 7 or Valkey (`--store redis://HOST:PORT/DB`), so
//! that what must outlive one replica (a session, fleet-wide limits, upstream credentials) is
//! there for any replica. Behind the cargo feature `store`: without it none of this is compiled.
//!
//! [`Store`] is one multiplexed connection (redis-rs's `ConnectionManager`, which reconnects by
//! itself), cloned by everyone who uses it. Every round trip goes through [`Store::round_trip`]:
//! bounded by [`ROUND_TRIP`] so a store that is down or stuck never hangs a request, and counted
//! in `pegboard_store_errors_total` and logged when it fails. A replica serves what it holds
//! without asking the store; it asks only for what it does not hold (see `sessions`).
//!
//! Keys are `PREFIX:KIND:ID` ([`Store::key`]); the prefix is the config's `store.prefix`.

mod error;
pub(crate) mod listed;
pub(crate) mod sessions;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use error::StoreError;

use crate::config::{StoreSettings, StoreUrl};

/// The longest a store round trip may take before it is given up (and counted as an error).
pub(crate) const ROUND_TRIP: Duration = Duration::from_secs(2);

/// How long a client is asked to wait before it retries what needed the store (`Retry-After`).
pub(crate) const RETRY_AFTER_SECS: u64 = 1;

/// The handle on the store: cheap to clone, shared by the whole gateway.
#[derive(Clone)]
pub(crate) struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    connection: ConnectionManager,
    url: StoreUrl,
    prefix: Box<str>,
    /// `pegboard_store_errors_total`: the telemetry's counter when metrics are on.
    errors: Arc<AtomicU64>,
    round_trip: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("url", &self.inner.url)
            .field("prefix", &self.inner.prefix)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// The store of `settings`, not connected yet: the first round trip connects (so a gateway
    /// starts while its store is down, and serves what needs no store). `errors` is the counter
    /// behind `pegboard_store_errors_total` (a private one when metrics are off). Must be called
    /// inside a Tokio runtime.
    ///
    /// # Errors
    /// [`StoreError::Setup`] when the client refuses the URL.
    pub(crate) fn open(
        settings: &StoreSettings,
        errors: Option<Arc<AtomicU64>>,
    ) -> Result<Self, StoreError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::NoRuntime {
                url: settings.url.to_string(),
            });
        }
        if settings.url.is_tls() {
            // rustls with ring, as everywhere in the gateway (`io/http_client.rs`).
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let setup = |source| StoreError::Setup {
            url: settings.url.to_string(),
            source,
        };
        let client = redis::Client::open(settings.url.connect_string()).map_err(setup)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(ROUND_TRIP))
            .set_response_timeout(Some(ROUND_TRIP))
            // A reconnect is tried on the next request after a failure, a few times quickly;
            // a round trip never waits longer than ROUND_TRIP for it anyway.
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client, config).map_err(setup)?;
        Ok(Self {
            inner: Arc::new(Inner {
                connection,
                url: settings.url.clone(),
                prefix: settings.prefix.clone().into_boxed_str(),
                errors: errors.unwrap_or_default(),
                round_trip: ROUND_TRIP,
            }),
        })
    }

    /// The multiplexed connection (a clone: clones share one socket and reconnect together).
    pub(crate) fn connection(&self) -> ConnectionManager {
        self.inner.connection.clone()
    }

    /// What every key starts with (the config's `store.prefix`).
    pub(crate) fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// The key of `id` among the entries of `kind`: `PREFIX:KIND:ID`.
    pub(crate) fn key(&self, kind: &str, id: &str) -> String {
        let mut key = String::with_capacity(self.inner.prefix.len() + kind.len() + id.len() + 2);
        key.push_str(&self.inner.prefix);
        key.push(':');
        key.push_str(kind);
        key.push(':');
        key.push_str(id);
        key
    }

    /// The store's address, its password hidden: for messages.
    pub(crate) fn url(&self) -> &StoreUrl {
        &self.inner.url
    }

    /// Store errors so far (what `pegboard_store_errors_total` shows).
    pub(crate) fn errors(&self) -> u64 {
        self.inner.errors.load(Ordering::Relaxed)
    }

    /// Count and log a failure of the store (one made here, or found by a caller: an entry it
    /// could not read).
    pub(crate) fn failed(&self, error: &StoreError) {
        self.inner.errors.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("{error}");
    }

    /// Run one round trip (`what`, for messages, says what for: "adopting a session"), bounded
    /// by [`ROUND_TRIP`]; a failure is counted and logged before it is returned.
    ///
    /// # Errors
    /// [`StoreError::Failed`] or [`StoreError::Timeout`].
    pub(crate) async fn round_trip<T>(
        &self,
        what: &'static str,
        exchange: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        let error = match tokio::time::timeout(self.inner.round_trip, exchange).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(source)) => StoreError::Failed {
                url: self.inner.url.to_string(),
                what,
                source,
            },
            Err(_) => StoreError::Timeout {
                url: self.inner.url.to_string(),
                what,
                after: self.inner.round_trip,
            },
        };
        self.failed(&error);
        Err(error)
    }

    /// [`round_trip`](Self::round_trip) for an exchange that may be sent twice (a read): when
    /// the connection turns out broken (the store restarted since the last use), it is sent
    /// once more on the connection the manager opens again, within the same bound, rather than
    /// failing a request the store could answer.
    ///
    /// # Errors
    /// As [`round_trip`](Self::round_trip).
    pub(crate) async fn round_trip_again<T, F>(
        &self,
        what: &'static str,
        exchange: impl Fn() -> F,
    ) -> Result<T, StoreError>
    where
        F: Future<Output = redis::RedisResult<T>>,
    {
        let twice = async {
            match exchange().await {
                Err(e) if e.is_connection_dropped() || e.is_io_error() => {
                    tracing::debug!("the store's connection broke ({e}); sending again");
                    exchange().await
                }
                done => done,
            }
        };
        self.round_trip(what, twice).await
    }

    /// One `PING`: whether the store answers now (the startup check; a failure is counted).
    ///
    /// # Errors
    /// As [`round_trip`](Self::round_trip).
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        let mut connection = self.connection();
        self.round_trip("checking it answers (PING)", async move {
            redis::cmd("PING")
                .query_async::<String>(&mut connection)
                .await
        })
        .await
        .map(drop)
    }
}

#[cfg(test)]
mod tests;
