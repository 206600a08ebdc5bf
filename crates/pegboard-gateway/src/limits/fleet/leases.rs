//! Leases: the places this replica holds in the store's sorted sets (a call in progress, an
//! open session), each with an expiry. While this replica lives it moves the expiry of every
//! lease it holds forward (every third of the TTL, one script per set); a lease is given back
//! when its permit is dropped. A replica that dies gives nothing back and renews nothing, so
//! its leases expire within one TTL and no count leaks.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use super::scripts::RENEW;
use crate::limits::shared::Place;
use crate::store::Store;

/// The leases this replica holds, by set.
#[derive(Debug)]
pub(super) struct Leases {
    store: Store,
    ttl: Duration,
    /// This replica's part of every lease's name (unique per process).
    replica: String,
    next: AtomicU64,
    held: Mutex<HashMap<Arc<str>, HashSet<Arc<str>>>>,
}

/// One lease, given back when dropped (unless [`Place::disarm`]ed).
#[derive(Debug)]
pub(super) struct Lease {
    leases: Arc<Leases>,
    set: Arc<str>,
    name: Arc<str>,
    armed: bool,
}

impl Leases {
    /// The leases of this replica in `store`, each living `ttl` unless renewed; the task that
    /// renews them runs until the returned value is dropped.
    pub(super) fn start(store: Store, ttl: Duration) -> Arc<Self> {
        let leases = Arc::new(Self {
            store,
            ttl,
            replica: uuid::Uuid::new_v4().simple().to_string(),
            next: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
        });
        tokio::spawn(renew(Arc::downgrade(&leases), ttl / 3));
        leases
    }

    /// The TTL of a lease, in ms (for the scripts).
    pub(super) fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// A new lease's name: this replica's id and a counter.
    pub(super) fn new_name(&self) -> Arc<str> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Arc::from(format!("{}:{n}", self.replica))
    }

    /// The lease `name` in `set` was taken: hold it (renewed until dropped).
    pub(super) fn held(self: &Arc<Self>, set: Arc<str>, name: Arc<str>) -> Lease {
        self.lock()
            .entry(Arc::clone(&set))
            .or_default()
            .insert(Arc::clone(&name));
        Lease {
            leases: Arc::clone(self),
            set,
            name,
            armed: true,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, HashSet<Arc<str>>>> {
        // Each update leaves the map whole before it could panic.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn forget(&self, set: &str, name: &str) {
        let mut held = self.lock();
        if let Some(names) = held.get_mut(set) {
            names.remove(name);
            if names.is_empty() {
                held.remove(set);
            }
        }
    }

    /// Every lease held, by set (a snapshot, for one round of renewals).
    fn snapshot(&self) -> Vec<(Arc<str>, Vec<Arc<str>>)> {
        self.lock()
            .iter()
            .map(|(set, names)| (Arc::clone(set), names.iter().cloned().collect()))
            .collect()
    }

    /// Leases held now (tests).
    #[cfg(test)]
    pub(super) fn count(&self) -> usize {
        self.lock().values().map(HashSet::len).sum()
    }
}

impl Place for Lease {
    fn disarm(&mut self) -> String {
        self.armed = false;
        self.leases.forget(&self.set, &self.name);
        self.name.to_string()
    }

    fn renamed(
        self: Box<Self>,
        name: String,
    ) -> crate::limits::shared::Pending<'static, Box<dyn Place>> {
        Box::pin(rename(self, name))
    }

    fn release(mut self: Box<Self>) -> crate::limits::shared::Pending<'static, ()> {
        self.armed = false;
        self.leases.forget(&self.set, &self.name);
        Box::pin(give_back(
            self.leases.store.clone(),
            Arc::clone(&self.set),
            Arc::clone(&self.name),
        ))
    }
}

/// The lease `lease` under the name `name` (see [`Place::renamed`]).
async fn rename(mut lease: Box<Lease>, name: String) -> Box<dyn Place> {
    let store = lease.leases.store.clone();
    let mut invocation = super::scripts::RENAME.key(&*lease.set);
    invocation
        .arg(&*lease.name)
        .arg(&name)
        .arg(lease.leases.ttl_ms());
    let mut connection = store.connection();
    let renamed = store
        .round_trip("naming a session's place among its client's limit", async {
            invocation.invoke_async::<i64>(&mut connection).await
        })
        .await;
    if renamed.is_ok() {
        lease.leases.forget(&lease.set, &lease.name);
        let name: Arc<str> = Arc::from(name);
        lease
            .leases
            .lock()
            .entry(Arc::clone(&lease.set))
            .or_default()
            .insert(Arc::clone(&name));
        lease.name = name;
    }
    lease
}

/// `ZREM` the lease `name` from `set`: one round trip. Not given back (the store cannot be
/// reached), it expires by itself within its TTL.
async fn give_back(store: Store, set: Arc<str>, name: Arc<str>) {
    let mut connection = store.connection();
    let _ = store
        .round_trip("giving back a place among a client's limits", async move {
            redis::cmd("ZREM")
                .arg(&*set)
                .arg(&*name)
                .query_async::<i64>(&mut connection)
                .await
        })
        .await;
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.leases.forget(&self.set, &self.name);
        // Dropped without [`Place::release`] (a session that ended, a call dropped before its
        // end): given back by a task of its own.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(give_back(
                self.leases.store.clone(),
                Arc::clone(&self.set),
                Arc::clone(&self.name),
            ));
        }
    }
}

/// Renew every lease `leases` holds, every `every`, until it is dropped.
async fn renew(leases: Weak<Leases>, every: Duration) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(leases) = leases.upgrade() else {
            return;
        };
        let ttl_ms = leases.ttl_ms();
        for (set, names) in leases.snapshot() {
            let mut invocation = RENEW.key(&*set);
            invocation.arg(ttl_ms);
            for name in &names {
                invocation.arg(&**name);
            }
            let mut connection = leases.store.connection();
            // A failure is counted and logged by the store; the next round tries again, and a
            // lease not renewed in time expires (its place is freed, never held forever).
            let _ = leases
                .store
                .round_trip(
                    "renewing this replica's places among clients' limits",
                    async { invocation.invoke_async::<i64>(&mut connection).await },
                )
                .await;
        }
    }
}
