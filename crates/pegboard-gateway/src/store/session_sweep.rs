//! The sweep of the store's sessions held here: every quarter of the idle time it restates
//! their TTL from their last use (one pipelined round trip for all of them) and writes back whole
//! any whose write failed while the store was down, or that the store no longer has (it
//! restarted empty). See `store/sessions.rs`.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{StoredSessions, locked, ttl_of};

/// The sweep never runs more often than this (a very short `--session-idle`)...
const MIN_SWEEP: Duration = Duration::from_millis(250);
/// ...nor less often than this (a very long one): a store that restarted empty gets its
/// sessions back within this long.
const MAX_SWEEP: Duration = Duration::from_secs(5);
/// The next sweep after one that left something unwritten (the store is down).
const RETRY_SWEEP: Duration = Duration::from_secs(1);

impl StoredSessions {
    /// One sweep: restate the TTL of every session held here (the idle time left since its last
    /// use), in one pipelined round trip; write back whole those whose write failed, and those
    /// the store no longer has (it restarted empty, or lost them).
    /// Whether everything is written (else the next sweep comes sooner).
    pub(crate) async fn sweep(&self) -> bool {
        let mut restate = Vec::new();
        let mut rewrite = Vec::new();
        {
            let held = locked(&self.held);
            for (id, entry) in held.iter() {
                let left = self.idle.saturating_sub(entry.last_used.elapsed());
                if left.is_zero() {
                    continue;
                }
                if entry.dirty {
                    rewrite.push((id.to_string(), entry.record.clone(), left));
                } else {
                    restate.push((id.to_string(), left));
                }
            }
        }
        if !restate.is_empty() {
            let mut pipe = redis::pipe();
            for (id, left) in &restate {
                pipe.expire(self.key(id), ttl_of(*left));
            }
            let mut connection = self.store.connection();
            let found = self
                .store
                .round_trip("restating the sessions' expiry", async {
                    pipe.query_async::<Vec<i64>>(&mut connection).await
                })
                .await;
            let Ok(found) = found else {
                // Written whole next time: the store may lose them meanwhile.
                for entry in locked(&self.held).values_mut() {
                    entry.dirty = true;
                }
                return false;
            };
            let held = locked(&self.held);
            for ((id, left), found) in restate.into_iter().zip(found) {
                if found == 0
                    && let Some(entry) = held.get(id.as_str())
                {
                    rewrite.push((id, entry.record.clone(), left));
                }
            }
        }
        for (id, record, left) in rewrite {
            if self.write_whole(&id, &record, left).await.is_err() {
                return false;
            }
            if let Some(entry) = locked(&self.held).get_mut(id.as_str()) {
                entry.dirty = false;
            }
            tracing::info!("session {id} written back to the store");
        }
        true
    }

    /// Sweep every quarter of the idle time (at most [`MAX_SWEEP`] apart) until `stop`; a
    /// second after a sweep that left something unwritten.
    pub(crate) fn sweep_until(self: &Arc<Self>, stop: CancellationToken) {
        let period = (self.idle / 4).clamp(MIN_SWEEP, MAX_SWEEP);
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut next = period;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(next) => {
                        next = if this.sweep().await { period } else { RETRY_SWEEP.min(period) };
                    }
                }
            }
        });
    }
}
