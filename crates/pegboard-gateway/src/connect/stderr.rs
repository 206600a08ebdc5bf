//! The last lines a child server wrote to stderr, kept for error messages.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::Notify;

/// How many stderr lines of a child are kept for error messages.
pub const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept (longer ones are cut).
const STDERR_LINE_MAX: usize = 1_000;

/// The last lines a child wrote to stderr, for error messages.
#[derive(Clone)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    cap: usize,
    closed: Arc<Notify>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    /// An empty tail keeping `cap` lines.
    pub fn new(cap: usize) -> Self {
        Self {
            lines: Arc::new(Mutex::new(VecDeque::with_capacity(cap))),
            cap,
            closed: Arc::new(Notify::new()),
            done: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    /// Read `reader` line by line in a task: keep the tail, forward each line to the log at debug level.
    pub fn follow<R: AsyncRead + Unpin + Send + 'static>(&self, reader: R, server: String) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(reader).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        tracing::debug!(target: "pegboard::server_stderr", server = %server, "{line}");
                        tail.push(line);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(server = %server, "stderr unreadable: {e}");
                        break;
                    }
                }
            }
            tail.mark_closed();
        });
    }

    fn mark_closed(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.closed.notify_waiters();
    }

    fn push(&self, mut line: String) {
        if line.len() > STDERR_LINE_MAX {
            let mut cut = STDERR_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == self.cap {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// Wait (at most `max`) until the child's stderr is closed, so the tail is complete; true if it is.
    pub async fn wait_closed(&self, max: Duration) -> bool {
        let notified = self.closed.notified();
        if self.done.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::timeout(max, notified).await.is_ok()
    }

    /// Wait until the child's stderr is closed (it exited, or closed it).
    pub async fn closed(&self) {
        let notified = self.closed.notified();
        if self.done.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        notified.await;
    }

    /// The kept lines.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// "\n  its stderr (last N lines):\n    ..." or "" when it wrote nothing.
    pub fn render(&self) -> String {
        let lines = self.lines();
        if lines.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "\n  its stderr (last {} line{}):",
            lines.len(),
            plural(lines.len())
        );
        for l in lines {
            let _ = write!(out, "\n    {l}");
        }
        out
    }
}

/// `"s"` unless `n` is one.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stderr_tail_keeps_the_last_lines() {
        let tail = StderrTail::new(3);
        let text: String = (1..=5).map(|i| format!("line {i}\n")).collect();
        tail.follow(std::io::Cursor::new(text.into_bytes()), "t".into());
        assert!(tail.wait_closed(Duration::from_secs(2)).await);
        assert_eq!(tail.lines(), vec!["line 3", "line 4", "line 5"]);
        assert!(tail.render().contains("last 3 lines"));
    }
}
