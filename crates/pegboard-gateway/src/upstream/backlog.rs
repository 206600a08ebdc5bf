//! [`Backlog`]: the progress lines of one call on the express lane, between the server's output
//! (read synchronously, where nothing may wait) and the client (written when it takes them).
//!
//! Bounded, and nothing that matters is lost: when the client reads slower than the server
//! sends and the backlog is full, the newest line takes the place of the last one kept (progress
//! only increases, so the newest says all the dropped one said; the last one always arrives).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;

/// Lines kept for a client that reads slower than its server sends.
const CAPACITY: usize = 1024;

/// One call's progress lines (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    lines: Mutex<Kept>,
    arrived: Notify,
}

#[derive(Debug, Default)]
struct Kept {
    lines: VecDeque<Vec<u8>>,
    closed: bool,
}

impl Backlog {
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `line` for the client (never waits).
    pub(crate) fn push(&self, line: Vec<u8>) {
        {
            let mut kept = self.kept();
            if kept.closed {
                return;
            }
            if kept.lines.len() >= CAPACITY {
                kept.lines.pop_back();
            }
            kept.lines.push_back(line);
        }
        self.arrived.notify_one();
    }

    /// No more lines will come: [`Backlog::next`] returns `None` once the kept ones are taken.
    pub(crate) fn close(&self) {
        self.kept().closed = true;
        self.arrived.notify_one();
    }

    /// The next line kept, without waiting.
    pub(crate) fn try_next(&self) -> Option<Vec<u8>> {
        self.kept().lines.pop_front()
    }

    /// The next line, waiting for one; `None` once closed and empty.
    pub(crate) async fn next(&self) -> Option<Vec<u8>> {
        loop {
            // Registered before looking, so a push between the look and the wait still wakes.
            let arrived = self.arrived.notified();
            {
                let mut kept = self.kept();
                if let Some(line) = kept.lines.pop_front() {
                    return Some(line);
                }
                if kept.closed {
                    return None;
                }
            }
            arrived.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_come_in_order_and_a_full_backlog_keeps_the_newest() {
        let backlog = Backlog::default();
        for n in 0..CAPACITY + 10 {
            backlog.push(n.to_string().into_bytes());
        }
        backlog.close();
        let mut got = Vec::new();
        while let Some(line) = backlog.next().await {
            got.push(String::from_utf8(line).expect("utf-8"));
        }
        assert_eq!(got.len(), CAPACITY);
        assert_eq!(got[0], "0");
        assert_eq!(got[CAPACITY - 2], (CAPACITY - 2).to_string());
        assert_eq!(
            got[CAPACITY - 1],
            (CAPACITY + 9).to_string(),
            "the newest is kept"
        );
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_for_a_line_and_for_the_end() {
        let backlog = std::sync::Arc::new(Backlog::default());
        let reader = tokio::spawn({
            let backlog = backlog.clone();
            async move { (backlog.next().await, backlog.next().await) }
        });
        backlog.push(b"x".to_vec());
        backlog.close();
        let (first, second) = reader.await.expect("reader");
        assert_eq!(first.as_deref(), Some(&b"x"[..]));
        assert_eq!(second, None);
    }
}
