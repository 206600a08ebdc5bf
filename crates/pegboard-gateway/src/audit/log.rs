//! The audit log: records go through a bounded queue to one writer thread, off the call path.
//!
//! [`AuditLog::record`] never waits and never fails: when the queue is full the record is
//! dropped and counted, and when a write fails its lines are dropped and counted; each kind of
//! loss is reported once (`tracing::warn!`), and [`AuditLog::dropped`] tells the total. One
//! thread writes, whole lines at a time, so lines never interleave. [`AuditLog::reopen`]
//! reopens the file (SIGHUP, after logrotate).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::line::{self, ArgumentsMode};
use super::record::AuditRecord;
use super::sink::{AuditTarget, Sink};

/// Records waiting for the writer, at most.
pub const DEFAULT_QUEUE: usize = 8192;

/// Lines written per batch, at most.
const BATCH: usize = 256;

enum Message {
    Record(AuditRecord),
    Flush(oneshot::Sender<()>),
    Wake,
}

#[derive(Debug, Default)]
struct Shared {
    dropped: AtomicU64,
    written: AtomicU64,
    warned_full: AtomicBool,
    warned_write: AtomicBool,
    reopen: AtomicBool,
}

/// The audit log. Cheap to share (`Arc`); the writer thread ends when the last handle is
/// dropped, after writing what is queued.
#[derive(Debug)]
pub struct AuditLog {
    queue: mpsc::Sender<Message>,
    shared: Arc<Shared>,
    arguments: ArgumentsMode,
    target: AuditTarget,
}

impl AuditLog {
    /// Open `target` and start the writer; `arguments` is what to keep of call arguments,
    /// `queue` how many records may wait.
    ///
    /// # Errors
    /// The file cannot be opened for appending (the message names it).
    pub fn open(target: AuditTarget, arguments: ArgumentsMode, queue: usize) -> io::Result<Self> {
        let sink = Sink::open(&target).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open the audit log `{target}`: {e}"),
            )
        })?;
        let (tx, rx) = mpsc::channel(queue.max(1));
        let shared = Arc::new(Shared::default());
        let writer = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("pegboard-audit".into())
            .spawn(move || write_loop(rx, sink, arguments, &writer))?;
        Ok(Self {
            queue: tx,
            shared,
            arguments,
            target,
        })
    }

    /// Whether records should carry their arguments (`--audit-arguments hash|full`): when
    /// not, the pipeline need not capture them.
    pub fn wants_arguments(&self) -> bool {
        self.arguments != ArgumentsMode::Off
    }

    /// Queue `record` for writing. Never waits, never fails: a full queue drops it (counted,
    /// reported once).
    pub fn record(&self, record: AuditRecord) {
        if self.queue.try_send(Message::Record(record)).is_err() {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            if !self.shared.warned_full.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "audit log `{}`: the writer is behind and a record was dropped; drops are \
                     counted and not reported again",
                    self.target
                );
            }
        }
    }

    /// Reopen the file at its path (call on SIGHUP, after logrotate moved it); a no-op for
    /// stderr. Takes effect before the next batch is written.
    pub fn reopen(&self) {
        self.shared.reopen.store(true, Ordering::Release);
        // Wake an idle writer; a busy one sees the flag before its next batch.
        let _ = self.queue.try_send(Message::Wake);
    }

    /// Wait until every record queued before this call is written (or dropped).
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.queue.send(Message::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Records lost so far (queue full or write failed).
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Lines written so far.
    #[cfg(test)]
    pub fn written(&self) -> u64 {
        self.shared.written.load(Ordering::Relaxed)
    }
}

fn write_loop(
    mut rx: mpsc::Receiver<Message>,
    mut sink: Sink,
    mode: ArgumentsMode,
    shared: &Shared,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut flushed: Vec<oneshot::Sender<()>> = Vec::new();
    while let Some(first) = rx.blocking_recv() {
        let mut lines = 0u64;
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(message) = next.take() {
            match message {
                Message::Record(record) => {
                    line::write(&record, mode, &mut buf);
                    lines += 1;
                }
                Message::Flush(done) => flushed.push(done),
                Message::Wake => {}
            }
            taken += 1;
            if taken < BATCH {
                next = rx.try_recv().ok();
            }
        }
        if shared.reopen.swap(false, Ordering::AcqRel)
            && let Err(e) = sink.reopen()
        {
            tracing::warn!("audit log: cannot reopen the file ({e}); still writing to the old one");
        }
        if !buf.is_empty() {
            match sink.write(&buf) {
                Ok(()) => {
                    shared.written.fetch_add(lines, Ordering::Relaxed);
                }
                Err(e) => {
                    shared.dropped.fetch_add(lines, Ordering::Relaxed);
                    if !shared.warned_write.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "audit log: a write failed ({e}); its records are dropped and \
                             counted, and further failures are not reported again"
                        );
                    }
                }
            }
            buf.clear();
        }
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}
