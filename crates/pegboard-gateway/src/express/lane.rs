//! The upstream end of the express lane: one per stdio server connection.
//!
//! Requests go out on the server's stdin between rmcp's messages ([`LineSink`]) under ids of
//! their own (`"pbx-1"`, `"pbx-2"`, …: rmcp's are numbers, so the two never meet); their answers
//! are taken out of the server's stdout before rmcp reads it ([`Divert`]) and handed to the
//! waiting call as bytes, unparsed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::process::ChildStdin;
use tokio::sync::oneshot;

use super::writer::LineSink;
use crate::upstream::limit::Divert;

/// The prefix of the express lane's request ids, as it appears in JSON (with the quote).
const ID_PREFIX: &[u8] = b"\"pbx-";

/// A call's upstream id as JSON-RPC knows it (`pbx-N`).
pub(crate) fn request_id(n: u64) -> String {
    format!("pbx-{n}")
}

/// Why a call on the lane got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// The server's output ended (it exited).
    Ended,
}

/// The express lane of one stdio server connection (see the module docs).
#[derive(Debug)]
pub struct Lane {
    stdin: LineSink<ChildStdin>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Vec<u8>>>>,
    next: AtomicU64,
    ended: AtomicBool,
}

impl Lane {
    pub(crate) fn new(stdin: LineSink<ChildStdin>) -> Self {
        Self {
            stdin,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            ended: AtomicBool::new(false),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Vec<u8>>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the server's output is still open.
    pub(crate) fn is_open(&self) -> bool {
        !self.ended.load(Ordering::Acquire)
    }

    /// A new call: its number and where its answer will come.
    pub(crate) fn begin(&self) -> Result<(u64, oneshot::Receiver<Vec<u8>>), Closed> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let mut pending = self.pending();
        // Checked under the lock `end` takes: a call begun after the end would wait forever.
        if !self.is_open() {
            return Err(Closed::Ended);
        }
        pending.insert(n, tx);
        Ok((n, rx))
    }

    /// The call `n` is given up (timed out, cancelled): its answer, if it comes, is dropped.
    pub(crate) fn forget(&self, n: u64) {
        self.pending().remove(&n);
    }

    /// Write a request line (with its newline) to the server.
    pub(crate) async fn send(&self, line: &[u8]) -> std::io::Result<()> {
        self.stdin.write_line(line).await
    }

    /// The call number in an answer line, if it is an answer to the lane.
    fn answered(line: &[u8]) -> Option<u64> {
        // Most lines are rmcp's: one fast search tells them apart.
        memchr::memmem::find(line, ID_PREFIX)?;
        let reply: IdOnly<'_> = serde_json::from_slice(line).ok()?;
        if reply.method.is_some() {
            return None;
        }
        reply.id?.strip_prefix("pbx-")?.parse().ok()
    }
}

/// The top-level members the lane reads of a server's message; the rest is skipped unparsed.
#[derive(serde::Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow, default)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

impl Divert for Lane {
    fn divert(&self, line: &[u8]) -> bool {
        let Some(n) = Self::answered(line) else {
            return false;
        };
        // An answer to a call given up is dropped here too: rmcp knows nothing of `pbx-` ids.
        if let Some(waiting) = self.pending().remove(&n) {
            let _ = waiting.send(line.to_vec());
        }
        true
    }

    fn end(&self) {
        let mut pending = self.pending();
        self.ended.store(true, Ordering::Release);
        // Dropping the senders wakes every waiting call with "closed".
        pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_answers_to_the_lane_are_taken() {
        assert_eq!(
            Lane::answered(br#"{"jsonrpc":"2.0","id":"pbx-7","result":{}}"#),
            Some(7)
        );
        assert_eq!(
            Lane::answered(br#"{"result":{"content":[]},"jsonrpc":"2.0","id":"pbx-12"}"#),
            Some(12)
        );
        // rmcp's own ids, a request from the server, and the prefix inside a result.
        assert_eq!(
            Lane::answered(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            None
        );
        assert_eq!(
            Lane::answered(br#"{"jsonrpc":"2.0","id":"pbx-1","method":"sampling/createMessage"}"#),
            None
        );
        assert_eq!(
            Lane::answered(br#"{"jsonrpc":"2.0","id":4,"result":{"text":"\"pbx-9"}}"#),
            None
        );
        assert_eq!(Lane::answered(b"not json \"pbx-1"), None);
    }
}
