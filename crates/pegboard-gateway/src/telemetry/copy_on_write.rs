//! A value read on every call without a lock, and written by copy on the rare change (a new
//! label set, a server or client registered): the series maps, the servers, the clients.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::{ArcSwap, Guard};

/// Readers load the current version (no lock, no reference count taken with [`Self::load`]);
/// a writer changes a copy and publishes it. Writers take turns, so no change is lost, and a
/// writer sees every change published before its own.
#[derive(Debug, Default)]
pub struct CopyOnWrite<T> {
    current: ArcSwap<T>,
    write: Mutex<()>,
}

impl<T: Clone> CopyOnWrite<T> {
    /// The current version, for a short read.
    #[inline]
    pub fn load(&self) -> Guard<Arc<T>> {
        self.current.load()
    }

    /// The current version, to keep.
    #[must_use]
    pub fn load_full(&self) -> Arc<T> {
        self.current.load_full()
    }

    /// Change the value: `change` reads the current version through its `Cow`, and a copy is
    /// made (once) and published only if it writes through [`Cow::to_mut`]. Its answer is
    /// returned.
    pub fn write<R>(&self, change: impl FnOnce(&mut Cow<'_, T>) -> R) -> R {
        // A poisoned lock guards nothing broken: the value is only ever replaced whole.
        let _turn = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.current.load_full();
        let mut draft = Cow::Borrowed(&*current);
        let answer = change(&mut draft);
        if let Cow::Owned(next) = draft {
            self.current.store(Arc::new(next));
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_publishes_only_what_it_changed() {
        let value: CopyOnWrite<Vec<u32>> = CopyOnWrite::default();
        let before = value.load_full();
        let read = value.write(|v| v.len());
        assert_eq!(read, 0);
        assert!(
            Arc::ptr_eq(&before, &value.load_full()),
            "a read-only write publishes nothing"
        );
        value.write(|v| v.to_mut().push(7));
        assert_eq!(*value.load_full(), vec![7]);
        assert!(
            before.is_empty(),
            "a reader's version never changes under it"
        );
    }

    #[test]
    fn writers_taking_turns_lose_no_change() {
        let value: Arc<CopyOnWrite<Vec<u32>>> = Arc::default();
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let value = Arc::clone(&value);
                std::thread::spawn(move || {
                    for j in 0..100 {
                        value.write(|v| v.to_mut().push(i * 100 + j));
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().expect("a writer panicked");
        }
        let mut all = value.load_full().to_vec();
        all.sort_unstable();
        assert_eq!(all, (0..800).collect::<Vec<_>>());
    }
}
