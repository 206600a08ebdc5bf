//! Limits counted in the store (`--store`): `callsPerMinute`, `maxConcurrent` and
//! `maxSessions` of each client with the meaning they have on one replica, for the whole fleet.
//! Behind the cargo feature `store`.
//!
//! - A call is admitted by one script, in one round trip (see [`scripts::ADMIT_CALL`]): its
//!   place among `maxConcurrent` (a lease in the client's sorted set of calls) and one of its
//!   `callsPerMinute` (GCRA, as `governor` counts on one replica: 30 in a burst for
//!   `callsPerMinute: 30`, whichever replicas they reach). The place is given back when the call
//!   ends, after its answer has gone.
//! - A session takes a lease in the client's sorted set of sessions
//!   ([`scripts::RESERVE_SESSION`]); it is given back when the session ends.
//! - Leases of a replica that dies expire within [`LEASE_TTL`] (see `leases.rs`).
//! - When the store cannot be reached (or does not answer within the store's round-trip
//!   bound), what it must count is refused with [`LimitError::Unavailable`] (503 and
//!   Retry-After at the HTTP front), counted in `pegboard_store_errors_total`: never let
//!   through uncounted, never a hang.
//!
//! Keys: `PREFIX:limits:CLIENT:rate`, `...:calls`, `...:sessions` (the client's name as the
//! config spells it).

mod leases;
mod scripts;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use leases::Leases;

use super::errors::LimitError;
use super::shared::{CallLimits, Pending, SharedLimits, SharedPermit};
use crate::store::{RETRY_AFTER_SECS, Store};

/// How long a lease lives unless renewed: the longest a dead replica's calls and sessions keep
/// counting against their client.
pub(crate) const LEASE_TTL: Duration = Duration::from_secs(15);

/// One minute in µs: the window of `callsPerMinute`.
const MINUTE_US: u64 = 60_000_000;

/// The fleet's limits in `store` (one per gateway, shared by every client that has limits).
#[derive(Debug, Clone)]
pub(crate) struct FleetLimits {
    store: Store,
    leases: Arc<Leases>,
}

impl FleetLimits {
    /// Count limits in `store`; this replica's leases live [`LEASE_TTL`] unless renewed. Must
    /// be called inside a Tokio runtime (the renewing task starts here).
    pub(crate) fn new(store: Store) -> Self {
        Self::with_lease_ttl(store, LEASE_TTL)
    }

    /// [`FleetLimits::new`] with another lease TTL (tests).
    pub(crate) fn with_lease_ttl(store: Store, ttl: Duration) -> Self {
        Self {
            leases: Leases::start(store.clone(), ttl),
            store,
        }
    }

    fn key(&self, client: &str, what: &str) -> Arc<str> {
        Arc::from(self.store.key("limits", &format!("{client}:{what}")))
    }

    fn unavailable(client: &str, limits: &'static str, reason: String) -> LimitError {
        LimitError::Unavailable {
            client: client.to_string(),
            limits,
            reason,
            retry_after: Duration::from_secs(RETRY_AFTER_SECS),
        }
    }

    async fn admit(&self, client: &str, limits: CallLimits) -> Result<SharedPermit, LimitError> {
        let rate_key = self.key(client, "rate");
        let calls_key = self.key(client, "calls");
        // At least 1 µs (0 would read as "no rate"): over 60,000,000 calls a minute, the
        // store counts 60,000,000.
        let (interval_us, burst) = match limits.per_minute {
            Some(n) => ((MINUTE_US / u64::from(n.get())).max(1), n.get()),
            None => (0, 0),
        };
        let limit = limits.concurrent.unwrap_or(0);
        let lease = self.leases.new_name();
        let mut invocation = scripts::ADMIT_CALL.key(&*rate_key);
        invocation
            .key(&*calls_key)
            .arg(interval_us)
            .arg(burst)
            .arg(limit)
            .arg(&*lease)
            .arg(self.leases.ttl_ms());
        let mut connection = self.store.connection();
        let answer: Vec<u64> = self
            .store
            .round_trip("counting a call against its client's limits", async {
                invocation.invoke_async(&mut connection).await
            })
            .await
            .map_err(|e| Self::unavailable(client, which(limits), e.to_string()))?;
        match answer.as_slice() {
            [0] if limit > 0 => Ok(SharedPermit::new(self.leases.held(calls_key, lease))),
            [0] => Ok(SharedPermit::none()),
            [1] => Err(LimitError::Concurrency {
                client: client.to_string(),
                limit,
            }),
            [2, wait_us] => Err(LimitError::Rate {
                client: client.to_string(),
                limit: burst,
                retry_after: Duration::from_micros(*wait_us),
            }),
            other => {
                let error = crate::store::StoreError::Unreadable {
                    key: calls_key.to_string(),
                    reason: format!("the call script answered {other:?}"),
                };
                self.store.failed(&error);
                Err(Self::unavailable(client, which(limits), error.to_string()))
            }
        }
    }

    async fn reserve(
        &self,
        client: &str,
        max: usize,
        replacing: Option<SharedPermit>,
        adopting: Option<&str>,
    ) -> Result<SharedPermit, LimitError> {
        let key = self.key(client, "sessions");
        let lease = adopting.map_or_else(|| self.leases.new_name(), Arc::from);
        let replaced = replacing.and_then(SharedPermit::disarm).unwrap_or_default();
        let mut invocation = scripts::RESERVE_SESSION.key(&*key);
        invocation
            .arg(max)
            .arg(&*lease)
            .arg(self.leases.ttl_ms())
            .arg(&replaced);
        let mut connection = self.store.connection();
        let reserved: i64 = self
            .store
            .round_trip("counting a new session against its client's limit", async {
                invocation.invoke_async(&mut connection).await
            })
            .await
            .map_err(|e| Self::unavailable(client, "`maxSessions`", e.to_string()))?;
        if reserved == 1 {
            Ok(SharedPermit::new(self.leases.held(key, lease)))
        } else {
            Err(LimitError::ClientSessions {
                client: client.to_string(),
                limit: max,
            })
        }
    }
}

/// The limits a call is counted against, for messages.
fn which(limits: CallLimits) -> &'static str {
    match (limits.per_minute, limits.concurrent) {
        (Some(_), Some(_)) => "`callsPerMinute` and `maxConcurrent`",
        (Some(_), None) => "`callsPerMinute`",
        _ => "`maxConcurrent`",
    }
}

impl SharedLimits for FleetLimits {
    fn admit_call<'a>(
        &'a self,
        client: &'a str,
        limits: CallLimits,
    ) -> Pending<'a, Result<SharedPermit, LimitError>> {
        Box::pin(self.admit(client, limits))
    }

    fn reserve_session<'a>(
        &'a self,
        client: &'a str,
        max: usize,
        replacing: Option<SharedPermit>,
        adopting: Option<&'a str>,
    ) -> Pending<'a, Result<SharedPermit, LimitError>> {
        Box::pin(self.reserve(client, max, replacing, adopting))
    }
}
