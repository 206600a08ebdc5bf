//! The calls on the lane that a client may cancel, by the key it names them with (its raw
//! request id; over HTTP, with its session), and how to cancel each: one table per client end.
//!
//! A client that sends a second call under the id of one still running gets the second
//! cancelled by that id from then on; the first runs to its answer (a cancel handle dropped
//! unused is no cancel), and its end takes only its own entry out.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

// The keys are clients' ids, and the table is per client.
use foldhash::fast::RandomState;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::call::Job;

/// The table (see the module docs).
pub(crate) struct Cancels<K> {
    calls: Mutex<HashMap<K, oneshot::Sender<()>, RandomState>>,
}

impl<K> Default for Cancels<K> {
    fn default() -> Self {
        Self {
            calls: Mutex::new(HashMap::default()),
        }
    }
}

impl<K: Eq + Hash + Clone> Cancels<K> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, oneshot::Sender<()>, RandomState>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Register the call `key`: its entry, which takes it out again when dropped.
    pub(crate) fn register(self: &Arc<Self>, key: K) -> Cancelable<K> {
        let (cancel, cancelled) = oneshot::channel();
        self.lock().insert(key.clone(), cancel);
        Cancelable {
            table: Arc::clone(self),
            key,
            cancelled,
        }
    }

    /// Cancel the call `key`: whether there was one to cancel.
    pub(crate) fn cancel<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        match self.lock().remove(key) {
            Some(cancel) => {
                // Gone already when the call has just ended.
                let _ = cancel.send(());
                true
            }
            None => false,
        }
    }

    /// Cancel every call whose key `of` says is of a session that ended.
    pub(crate) fn cancel_where(&self, of: impl Fn(&K) -> bool) {
        // Taken out under the lock, sent after it.
        let ended: Vec<_> = self
            .lock()
            .extract_if(|k, _| of(k))
            .map(|(_, cancel)| cancel)
            .collect();
        for cancel in ended {
            let _ = cancel.send(());
        }
    }

    /// Cancel the calls of a session when it ends (`ended`), and from then on each call
    /// registered under `of`'s keys as it registers ([`Cancelable::cancel_if_ended`]). One task
    /// per session: the calls wait on their own cancel alone, which costs less per call than
    /// waiting on the session's end too.
    pub(crate) fn end_with(
        self: &Arc<Self>,
        ended: CancellationToken,
        of: impl Fn(&K) -> bool + Send + 'static,
    ) where
        K: Send + 'static,
    {
        let table = Arc::clone(self);
        // Outside a runtime (it is shutting down) no call runs any more.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                ended.cancelled().await;
                table.cancel_where(of);
            });
        }
    }
}

/// A call's place in [`Cancels`], taken out when dropped (however the call ends, also when the
/// future running it is dropped).
pub(crate) struct Cancelable<K: Eq + Hash + Clone> {
    table: Arc<Cancels<K>>,
    key: K,
    cancelled: oneshot::Receiver<()>,
}

impl<K: Eq + Hash + Clone> Cancelable<K> {
    /// Cancel the call at once when its session `ended` before it registered (after the
    /// sweep of [`Cancels::end_with`], which did not see it).
    pub(crate) fn cancel_if_ended(self, ended: &CancellationToken) -> Self {
        if ended.is_cancelled() {
            self.table.cancel(&self.key);
        }
        self
    }

    /// Run `job` until it answers (the answer line), or it is cancelled (`None`; the call is
    /// cancelled upstream).
    pub(crate) async fn run(mut self, job: Box<Job>) -> Option<Vec<u8>> {
        let cancelled = async {
            // A sender dropped unsent is no cancel: a later call under the same id took its
            // place (see the module docs).
            if (&mut self.cancelled).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        job.run(cancelled).await
    }
}

impl<K: Eq + Hash + Clone> Drop for Cancelable<K> {
    fn drop(&mut self) {
        // Closed first: a sender dropped while its receiver waits wakes the call's task once
        // more, for nothing. Closed, it also tells this call's sender from that of a later call
        // under the same id, which took its place and stays.
        self.cancelled.close();
        let mut calls = self.table.lock();
        if calls.get(&self.key).is_some_and(oneshot::Sender::is_closed) {
            calls.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancel_reaches_its_call_and_a_reused_key_keeps_the_later_call() {
        let table = Arc::new(Cancels::<u8>::default());
        let mut first = table.register(1);
        assert!(table.cancel(&1));
        assert_eq!((&mut first.cancelled).await, Ok(()));
        assert!(!table.cancel(&1), "a cancelled call leaves the table");
        drop(first);

        // Key 2 reused while its first call runs: the first's handle is gone unused.
        let first = table.register(2);
        let mut second = table.register(2);
        drop(first);
        assert!(table.cancel(&2), "the first's end left the second's entry");
        assert_eq!((&mut second.cancelled).await, Ok(()));
        drop(second);
        assert!(table.lock().is_empty());

        let ended = table.register(3);
        drop(ended);
        assert!(table.lock().is_empty(), "an ended call leaves the table");
    }

    #[tokio::test]
    async fn a_sessions_end_cancels_its_calls_and_those_that_register_after() {
        let table = Arc::new(Cancels::<(u8, u8)>::default());
        let ended = CancellationToken::new();
        table.end_with(ended.clone(), |(session, _)| *session == 1);
        let mut running = table.register((1, 1));
        let mut other = table.register((2, 1));
        ended.cancel();
        assert_eq!((&mut running.cancelled).await, Ok(()));
        let mut late = table.register((1, 2)).cancel_if_ended(&ended);
        assert_eq!((&mut late.cancelled).await, Ok(()));
        assert_eq!(
            other.cancelled.try_recv(),
            Err(oneshot::error::TryRecvError::Empty),
            "another session's call goes on"
        );
        drop((running, late));
        assert_eq!(table.lock().len(), 1);
    }
}
