//! The upstream end of the express lane: one per stdio server connection.
//!
//! Requests go out on the server's stdin between rmcp's messages ([`LineSink`]) under ids of
//! their own (`"pbx-1"`, `"pbx-2"`, …: rmcp's are numbers, so the two never meet; the same string
//! is the call's progress token when the client asked for progress); their answers and progress
//! notifications are taken out of the server's stdout before rmcp reads it ([`Divert`]) and
//! handed to the waiting call as bytes, unparsed, in the order the server wrote them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use std::ops::Range;
use std::sync::LazyLock;

// The keys are the lane's own call numbers.
use foldhash::fast::RandomState;
use memchr::memmem::Finder;
use serde::de::IgnoredAny;
use tokio::process::ChildStdin;
use tokio::sync::oneshot;

use super::backlog::Backlog;
use crate::io::{limit::Divert, span::range_in, writer::LineSink};
use crate::protocol::result_shape::ResultShape;

/// The prefix of the express lane's request ids, as it appears in JSON (with the quote), as a
/// searcher built once.
static ID_PREFIX: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"pbx-"));

/// A call's upstream id as JSON-RPC knows it (`pbx-N`), shared by the call's request id and
/// progress token.
pub(crate) fn request_id(n: u64) -> Arc<str> {
    const PREFIX: &str = "pbx-";
    // Written on the stack and copied once into the `Arc` (a `String` would be a second copy).
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n).as_bytes();
    let mut id = [0u8; PREFIX.len() + 20];
    let len = PREFIX.len() + digits.len();
    id[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
    id[PREFIX.len()..len].copy_from_slice(digits);
    // ASCII throughout: the fallback is never taken.
    std::str::from_utf8(&id[..len]).map_or_else(|_| Arc::from(PREFIX), Arc::from)
}

/// Where one call's answer and progress go.
#[derive(Debug)]
struct Pending {
    answer: oneshot::Sender<Reply>,
    progress: Option<Arc<Backlog>>,
}

/// What a call on the lane waits for.
#[derive(Debug)]
pub(crate) struct Waiting {
    /// The call's number (its id is [`request_id`] of it).
    pub(crate) n: u64,
    /// The answer line, read.
    pub(crate) answer: oneshot::Receiver<Reply>,
    /// The progress notification lines, when the call asked for progress.
    pub(crate) progress: Option<Arc<Backlog>>,
}

/// What a line from the server is to the lane.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    /// The answer to call `n`, its id (with the quotes) at `id`.
    Answer {
        n: u64,
        id: Range<usize>,
        result: Option<ResultShape>,
        error: bool,
    },
    Progress(u64),
}

/// Why a call on the lane got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// The server's output ended (it exited).
    Ended,
}

/// The express lane of one stdio server connection (see the module docs).
#[derive(Debug)]
pub(crate) struct Lane {
    stdin: LineSink<ChildStdin>,
    pending: Mutex<HashMap<u64, Pending, RandomState>>,
    next: AtomicU64,
    ended: AtomicBool,
}

impl Lane {
    pub(crate) fn new(stdin: LineSink<ChildStdin>) -> Self {
        Self {
            stdin,
            pending: Mutex::new(HashMap::default()),
            next: AtomicU64::new(1),
            ended: AtomicBool::new(false),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending, RandomState>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the server's output is still open.
    pub(crate) fn is_open(&self) -> bool {
        !self.ended.load(Ordering::Acquire)
    }

    /// A new call (with its progress, when `progress`): its number and where its answer will
    /// come.
    pub(crate) fn begin(&self, progress: bool) -> Result<Waiting, Closed> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (answer_tx, answer) = oneshot::channel();
        let progress = progress.then(|| Arc::new(Backlog::default()));
        let mut pending = self.pending();
        // Checked under the lock `end` takes: a call begun after the end would wait forever.
        if !self.is_open() {
            return Err(Closed::Ended);
        }
        pending.insert(
            n,
            Pending {
                answer: answer_tx,
                progress: progress.clone(),
            },
        );
        Ok(Waiting {
            n,
            answer,
            progress,
        })
    }

    /// The call `n` is given up (timed out, cancelled): its answer, if it comes, is dropped.
    pub(crate) fn forget(&self, n: u64) {
        let gone = self.pending().remove(&n);
        if let Some(backlog) = gone.and_then(|call| call.progress) {
            backlog.close();
        }
    }

    /// Close the server's stdin (the MCP stdio shutdown's first step).
    pub(crate) async fn close_stdin(&self) {
        self.stdin.close().await;
    }

    /// Write a request line (with its newline) to the server.
    pub(crate) async fn send(&self, line: &[u8]) -> std::io::Result<()> {
        self.stdin.write_line(line).await
    }

    /// Whether `line` is an answer to a call on the lane or progress of one, and of which.
    fn taken(line: &[u8]) -> Option<Taken> {
        // Most lines are rmcp's: one fast search tells them apart.
        ID_PREFIX.find(line)?;
        // Read as text once its UTF-8 is checked whole (see `express::request::classify`);
        // a line that is not UTF-8 is read from its bytes, as before, so that an answer with
        // such bytes where nothing reads them still reaches its call.
        let message: Shape<'_> = match std::str::from_utf8(line) {
            Ok(text) => serde_json::from_str(text).ok()?,
            Err(_) => serde_json::from_slice(line).ok()?,
        };
        let number = |id: &str| id.strip_prefix("pbx-")?.parse().ok();
        match message.method {
            None => {
                let id = message.id?;
                let inner = range_in(line, id);
                Some(Taken::Answer {
                    n: number(id)?,
                    // With its quotes (the lane's ids have no escapes).
                    id: inner.start.saturating_sub(1)..inner.end + 1,
                    result: message.result,
                    error: message.error.is_some(),
                })
            }
            Some("notifications/progress") => {
                number(message.params?.progress_token?).map(Taken::Progress)
            }
            Some(_) => None,
        }
    }
}

/// The members the lane reads of a server's message; the rest is skipped unparsed.
/// (`&str`, not `Cow`, which serde does not borrow inside an `Option`: the lane's ids and tokens
/// are never written with escapes, and a message whose are is not the lane's.)
#[derive(serde::Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    id: Option<&'a str>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<ProgressShape<'a>>,
    // Not captured: an answer passes on as it is; its shape is read on the way.
    #[serde(default)]
    result: Option<ResultShape>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressShape<'a> {
    #[serde(borrow, default)]
    progress_token: Option<&'a str>,
}

impl Divert for Lane {
    fn divert(&self, line: &[u8]) -> bool {
        // What is for a call given up is dropped here too: rmcp knows nothing of `pbx-` ids.
        match Self::taken(line) {
            None => return false,
            Some(Taken::Answer {
                n,
                id,
                result,
                error,
            }) => {
                if let Some(call) = self.pending().remove(&n) {
                    if let Some(backlog) = &call.progress {
                        backlog.close();
                    }
                    let _ = call
                        .answer
                        .send(Reply::new(line.to_vec(), id, result, error));
                }
            }
            Some(Taken::Progress(n)) => {
                if let Some(progress) = self.pending().get(&n).and_then(|c| c.progress.as_ref()) {
                    progress.push(line.to_vec());
                }
            }
        }
        true
    }

    fn end(&self) {
        let mut pending = self.pending();
        self.ended.store(true, Ordering::Release);
        // Dropping the senders wakes every waiting call with "closed".
        for (_, call) in pending.drain() {
            if let Some(backlog) = call.progress {
                backlog.close();
            }
        }
    }
}

/// An upstream's answer line, by its parts (taken out of the server's output by [`Lane`]).
#[derive(Debug)]
pub(crate) struct Reply {
    line: Vec<u8>,
    /// Where the id is, with its quotes.
    id: Range<usize>,
    /// Its `result`'s shape, if it has one.
    pub(crate) result: Option<ResultShape>,
    /// Whether it has an `error`.
    pub(crate) error: bool,
}

impl Reply {
    /// An answer `line` whose id (with its quotes) is at `id`.
    pub(crate) fn new(
        line: Vec<u8>,
        id: Range<usize>,
        result: Option<ResultShape>,
        error: bool,
    ) -> Self {
        Self {
            line,
            id,
            result,
            error,
        }
    }

    /// The line as the server wrote it.
    pub(crate) fn line(&self) -> &[u8] {
        &self.line
    }

    /// The answer for the client: its own id `ds_id` (raw JSON) in place of the lane's, in
    /// the line's own buffer, and a newline.
    pub(crate) fn with_id(self, ds_id: &[u8]) -> Vec<u8> {
        let Self { mut line, id, .. } = self;
        line.splice(id, ds_id.iter().copied());
        line.push(b'\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_the_prefix_and_the_number() {
        assert_eq!(&*request_id(0), "pbx-0");
        assert_eq!(&*request_id(42), "pbx-42");
        assert_eq!(&*request_id(u64::MAX), "pbx-18446744073709551615");
    }

    #[test]
    fn only_answers_and_progress_of_the_lane_are_taken() {
        let taken = |line: &str| Lane::taken(line.as_bytes());
        assert_eq!(
            taken(r#"{"jsonrpc":"2.0","id":"pbx-7","result":{}}"#),
            Some(Taken::Answer {
                n: 7,
                id: 22..29,
                result: Some(ResultShape::Other),
                error: false
            })
        );
        assert_eq!(
            taken(r#"{"result":{"content":[]},"jsonrpc":"2.0","id":"pbx-12"}"#),
            Some(Taken::Answer {
                n: 12,
                id: 46..54,
                result: Some(ResultShape::Plain { is_error: false }),
                error: false
            })
        );
        assert_eq!(
            taken(r#"{"jsonrpc":"2.0","id":"pbx-2","error":{"code":1,"message":"m"}}"#),
            Some(Taken::Answer {
                n: 2,
                id: 22..29,
                result: None,
                error: true
            })
        );
        assert_eq!(
            taken(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pbx-3","progress":1}}"#
            ),
            Some(Taken::Progress(3))
        );
        // rmcp's own ids and tokens, a request from the server, the prefix inside a result.
        assert_eq!(taken(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), None);
        assert_eq!(
            taken(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":4,"progress":1,"message":"\"pbx-1"}}"#
            ),
            None
        );
        assert_eq!(
            taken(r#"{"jsonrpc":"2.0","id":"pbx-1","method":"sampling/createMessage"}"#),
            None
        );
        assert_eq!(
            taken(r#"{"jsonrpc":"2.0","id":4,"result":{"text":"\"pbx-9"}}"#),
            None
        );
        assert_eq!(taken("not json \"pbx-1"), None);
        // Not UTF-8 where nothing reads it: still the call's answer (read from its bytes).
        let mut line =
            br#"{"jsonrpc":"2.0","id":"pbx-5","error":{"code":1,"message":"m","data":"?"}}"#
                .to_vec();
        let at = line.len() - 4;
        line[at] = 0xff;
        assert!(std::str::from_utf8(&line).is_err());
        assert!(matches!(
            Lane::taken(&line),
            Some(Taken::Answer {
                n: 5,
                error: true,
                ..
            })
        ));
    }

    #[test]
    fn an_answer_gets_the_client_id_back() {
        let line = br#"{"result":{"content":[{"type":"text","text":"\"id\":1"}]},"jsonrpc":"2.0","id":"pbx-9"}"#;
        let at = line.len() - 8..line.len() - 1;
        assert_eq!(&line[at.clone()], br#""pbx-9""#);
        let reply = Reply::new(
            line.to_vec(),
            at,
            Some(ResultShape::Plain { is_error: false }),
            false,
        );
        assert_eq!(
            String::from_utf8(reply.with_id(b"\"abc\"")).expect("utf-8"),
            r#"{"result":{"content":[{"type":"text","text":"\"id\":1"}]},"jsonrpc":"2.0","id":"abc"}"#
                .to_string()
                + "\n"
        );
    }
}
