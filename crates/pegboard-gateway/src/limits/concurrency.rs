//! `maxConcurrent`: a count of a client's calls in progress, taken by a permit that gives it
//! back when dropped. Over the limit a call is refused at once, never queued.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The calls one client has in progress, and how many it may have.
#[derive(Debug)]
pub struct Concurrency {
    limit: usize,
    in_progress: AtomicUsize,
}

/// One call in progress; dropping it (the call is over, however it ended) frees its place.
#[derive(Debug)]
#[must_use = "the place is freed as soon as the permit is dropped"]
pub struct CallPermit {
    of: Arc<Concurrency>,
}

impl Concurrency {
    /// At most `limit` calls at once.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            in_progress: AtomicUsize::new(0),
        })
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Calls in progress now.
    #[cfg(test)]
    pub fn in_progress(&self) -> usize {
        self.in_progress.load(Ordering::Relaxed)
    }

    /// A place for one more call, or `None` when `limit` are in progress.
    pub fn try_acquire(self: &Arc<Self>) -> Option<CallPermit> {
        self.in_progress
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .ok()
            .map(|_| CallPermit {
                of: Arc::clone(self),
            })
    }
}

impl Drop for CallPermit {
    fn drop(&mut self) {
        self.of.in_progress.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_up_to_the_limit_then_none_until_one_is_dropped() {
        let c = Concurrency::new(2);
        let a = c.try_acquire().unwrap();
        let _b = c.try_acquire().unwrap();
        assert!(c.try_acquire().is_none());
        assert_eq!(c.in_progress(), 2);
        drop(a);
        assert!(c.try_acquire().is_some());
        assert_eq!(c.in_progress(), 1, "the temporary permit was dropped");
    }

    #[test]
    fn concurrent_acquirers_never_exceed_the_limit() {
        let c = Concurrency::new(3);
        let held = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        if let Some(p) = c.try_acquire() {
                            assert!(c.in_progress() <= 3);
                            held.lock().unwrap().push(p);
                            let mut h = held.lock().unwrap();
                            if h.len() > 1 {
                                drop(h.remove(0));
                            }
                        }
                    }
                });
            }
        });
        assert!(c.in_progress() <= 3);
        held.lock().unwrap().clear();
        assert_eq!(c.in_progress(), 0);
    }
}
