//! A size limit on the messages a stdio server writes, enforced before rmcp reads them.
//!
//! [`LimitedLines`] sits between a child's stdout and rmcp's line reader. Lines (messages) up to
//! the limit pass through unchanged. A longer one is never held: its bytes are thrown away as they
//! arrive while an `IdScan` looks for its JSON-RPC `id`, and rmcp gets instead a small JSON-RPC
//! error response for that id, naming the server and the limit. So the request that asked for the
//! huge answer fails at once with a message that says what to do, rather than waiting out its
//! timeout (rmcp itself silently drops a line over its own cap), and memory stays O(limit).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

use super::message_id::{Found, IdScan};
use super::over_limit::over_limit;

/// The default limit on one upstream message: 8 MiB.
pub const DEFAULT_MAX_MESSAGE: usize = 8 * MIB;

const MIB: usize = 1024 * 1024;
/// How much is read from the child at once.
const CHUNK: usize = 64 * 1024;
/// A buffer that held a big message is given back to the allocator rather than kept.
const KEEP_CAPACITY: usize = 1024 * 1024;
/// JSON-RPC "internal error": the server's answer exists but cannot be delivered.
const INTERNAL_ERROR: i64 = -32603;

/// `limit` for people: "8 MiB", or a byte count when it is not a whole number of MiB.
pub fn describe_limit(limit: usize) -> String {
    if limit >= MIB && limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else {
        format!("{limit} bytes")
    }
}

/// The error text for a message of `server` over `limit`.
pub fn too_big_message(server: &str, limit: usize) -> String {
    format!(
        "server `{server}` sent a message of more than {} (the limit); raise it with --max-message-mib \
         (or \"maxMessageMib\" in its config entry)",
        describe_limit(limit)
    )
}

/// Takes some whole lines out of the stream before rmcp reads it: the express lane's answers
/// (see [`crate::express`]).
pub trait Divert: Send + Sync {
    /// Whether `line` (without its newline) was taken; a line not taken goes on to rmcp.
    fn divert(&self, line: &[u8]) -> bool;

    /// The stream ended: nothing more will come.
    fn end(&self) {}
}

/// `inner` (a stdout of newline-delimited JSON-RPC) with every line over `limit` bytes replaced by
/// an error response for its request (see the module docs).
pub struct LimitedLines<R> {
    inner: R,
    divert: Option<Arc<dyn Divert>>,
    /// Shown every line that goes on to rmcp (see [`pegboard::ToolListTap`]).
    tap: Option<pegboard::ToolListTap>,
    limit: usize,
    server: String,
    chunk: Box<[u8]>,
    /// The current line while it fits the limit.
    line: Vec<u8>,
    /// The current line once it does not: what has been learnt from it so far.
    oversized: Option<IdScan>,
    /// Bytes ready for the reader, from `out_pos` on.
    out: Vec<u8>,
    out_pos: usize,
    eof: bool,
}

impl<R> LimitedLines<R> {
    /// Wrap `inner`; `server` names it in errors and logs.
    pub fn new(inner: R, limit: usize, server: impl Into<String>) -> Self {
        Self {
            inner,
            divert: None,
            tap: None,
            limit,
            server: server.into(),
            chunk: vec![0; CHUNK].into_boxed_slice(),
            line: Vec::new(),
            oversized: None,
            out: Vec::new(),
            out_pos: 0,
            eof: false,
        }
    }

    /// Offer every line within the limit to `divert` first.
    #[must_use]
    pub fn with_divert(mut self, divert: Arc<dyn Divert>) -> Self {
        self.divert = Some(divert);
        self
    }

    /// Show every line that goes on to rmcp to `tap`, which keeps what rmcp's `Tool` drops from
    /// the server's `tools/list` answers.
    #[must_use]
    pub fn with_tap(mut self, tap: pegboard::ToolListTap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Split `data` into lines and route each piece.
    fn take_in(&mut self, data: &[u8]) {
        let mut rest = data;
        while !rest.is_empty() {
            let (piece, ends) = match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    let piece = &rest[..i];
                    rest = &rest[i + 1..];
                    (piece, true)
                }
                None => (std::mem::take(&mut rest), false),
            };
            if let Some(scan) = &mut self.oversized {
                scan.feed(piece);
            } else if self.line.len().saturating_add(piece.len()) > self.limit {
                let mut scan = IdScan::new();
                scan.feed(&self.line);
                scan.feed(piece);
                self.oversized = Some(scan);
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(piece);
            }
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        if let Some(scan) = self.oversized.take() {
            self.reject(scan.finish());
            return;
        }
        if let Some(divert) = &self.divert
            && divert.divert(&self.line)
        {
            self.line.clear();
            return;
        }
        if let Some(tap) = &self.tap {
            tap.observe(&self.line);
        }
        self.line.push(b'\n');
        if self.out.is_empty() {
            // The usual case: hand the line over without copying it.
            std::mem::swap(&mut self.out, &mut self.line);
        } else {
            self.out.extend_from_slice(&self.line);
            self.line.clear();
        }
    }

    /// Answer an oversized message's request with an error, or drop it with a warning.
    fn reject(&mut self, found: Found) {
        over_limit(&self.server);
        let message = too_big_message(&self.server, self.limit);
        match found {
            Found {
                id: Some(id),
                has_method: false,
            } => {
                // The error reaches whoever asked; the log only records it.
                tracing::debug!(server = %self.server, %id, "{message}; the request fails");
                let response = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": { "code": INTERNAL_ERROR, "message": message },
                });
                // Serialising a JSON value to a Vec cannot fail.
                if let Ok(mut bytes) = serde_json::to_vec(&response) {
                    // An answer to the express lane's request goes to the lane, as the answer
                    // it replaces would have: rmcp does not know that id.
                    if self.divert.as_ref().is_some_and(|d| d.divert(&bytes)) {
                        return;
                    }
                    bytes.push(b'\n');
                    self.out.extend_from_slice(&bytes);
                }
            }
            Found {
                has_method: true, ..
            } => {
                tracing::warn!(server = %self.server, "{message}; its request or notification was dropped");
            }
            Found { id: None, .. } => {
                tracing::warn!(server = %self.server, "{message}; it had no id to answer, so it was dropped");
            }
        }
    }

    fn at_eof(&mut self) {
        self.eof = true;
        if let Some(divert) = &self.divert {
            divert.end();
        }
        if self.oversized.take().is_some() {
            over_limit(&self.server);
            tracing::warn!(
                server = %self.server,
                "{}; it closed its output in the middle of it",
                too_big_message(&self.server, self.limit)
            );
        } else if !self.line.is_empty() {
            // An unterminated last line: passed on as it is, rmcp decides what it is worth.
            let line = std::mem::take(&mut self.line);
            self.out.extend_from_slice(&line);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.out_pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.out_pos);
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out_pos = 0;
                    if this.out.capacity() > KEEP_CAPACITY {
                        this.out = Vec::new();
                    } else {
                        this.out.clear();
                    }
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut read = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let filled = read.filled().len();
            let result = match polled {
                Poll::Ready(Ok(())) if filled == 0 => {
                    this.at_eof();
                    Poll::Ready(Ok(()))
                }
                Poll::Ready(Ok(())) => {
                    this.take_in(&chunk[..filled]);
                    Poll::Ready(Ok(()))
                }
                other => other,
            };
            this.chunk = chunk;
            ready!(result)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::super::over_limit::{OverLimitHook, on_over_limit};
    use super::*;

    /// Everything the reader yields for `input`, written in pieces of `piece` bytes.
    async fn through(input: &[u8], limit: usize, piece: usize) -> String {
        through_named(input, limit, piece, "big").await
    }

    /// [`through`], the server named `server`.
    async fn through_named(input: &[u8], limit: usize, piece: usize, server: &str) -> String {
        let (mut tx, rx) = tokio::io::duplex(1024);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            for part in input.chunks(piece) {
                tx.write_all(part).await?;
            }
            tx.shutdown().await
        });
        let mut out = String::new();
        LimitedLines::new(rx, limit, server)
            .read_to_string(&mut out)
            .await
            .expect("readable");
        writer.await.expect("joined").expect("written");
        out
    }

    fn response(id: &str, text_len: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{}"}}}}"#,
            "x".repeat(text_len)
        )
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_unchanged() {
        let input = format!("{}\n{}\n", response("1", 10), response("\"a\"", 3000));
        for piece in [1, 7, 4096] {
            assert_eq!(through(input.as_bytes(), 4000, piece).await, input);
        }
    }

    #[tokio::test]
    async fn the_exact_limit_passes_one_more_byte_fails() {
        let exact = response("1", 100);
        let limit = exact.len();
        let input = format!("{exact}\n");
        assert_eq!(through(input.as_bytes(), limit, 13).await, input);

        let over = response("1", 101);
        let out = through(format!("{over}\n").as_bytes(), limit, 13).await;
        let reply: serde_json::Value = serde_json::from_str(out.trim_end()).expect("one JSON line");
        assert_eq!(reply["id"], 1);
        assert_eq!(reply["error"]["code"], INTERNAL_ERROR);
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("server `big`")
                && message.contains(&format!("{limit} bytes"))
                && message.contains("--max-message-mib"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_oversized_line_becomes_an_error_for_its_id_and_the_next_line_survives() {
        let huge_last = r#"{"result":{"text":""#.to_string()
            + &"y".repeat(50_000)
            + r#""},"jsonrpc":"2.0","id":"call-9"}"#;
        let next = response("10", 5);
        let input = format!("{}\n{huge_last}\n{next}\n", response("8", 5));
        let out = through(input.as_bytes(), 1000, 777).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0], response("8", 5));
        let reply: serde_json::Value = serde_json::from_str(lines[1]).expect("JSON");
        assert_eq!(reply["id"], "call-9");
        assert!(reply["error"]["message"].as_str().is_some());
        assert_eq!(lines[2], next);
    }

    #[tokio::test]
    async fn an_oversized_message_without_id_is_dropped() {
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
            "z".repeat(5000)
        );
        let no_id = format!(r#"{{"jsonrpc":"2.0","result":"{}"}}"#, "z".repeat(5000));
        let after = response("2", 1);
        let input = format!("{notification}\n{no_id}\n{after}\n");
        assert_eq!(
            through(input.as_bytes(), 1000, 512).await,
            format!("{after}\n")
        );
    }

    /// Takes the lines whose id starts with `lane-`, keeps them.
    #[derive(Default)]
    struct Taker(Mutex<Vec<String>>);

    impl Divert for Taker {
        fn divert(&self, line: &[u8]) -> bool {
            let line = String::from_utf8_lossy(line).into_owned();
            let taken = line.contains("\"id\":\"lane-");
            if taken {
                self.0.lock().expect("not poisoned").push(line);
            }
            taken
        }
    }

    #[tokio::test]
    async fn the_error_for_an_oversized_answer_is_offered_to_the_divert_as_the_answer_was() {
        let taker = Arc::new(Taker::default());
        let (mut tx, rx) = tokio::io::duplex(1024);
        let big = format!(
            "{}\n{}\n",
            response("\"lane-1\"", 3000),
            response("7", 3000)
        );
        let writer = tokio::spawn(async move {
            tx.write_all(big.as_bytes()).await?;
            tx.shutdown().await
        });
        let mut out = String::new();
        LimitedLines::new(rx, 1000, "big")
            .with_divert(Arc::clone(&taker) as Arc<dyn Divert>)
            .read_to_string(&mut out)
            .await
            .expect("readable");
        writer.await.expect("joined").expect("written");
        let taken = taker.0.lock().expect("not poisoned").clone();
        assert_eq!(taken.len(), 1, "{taken:?}");
        let lane: serde_json::Value = serde_json::from_str(&taken[0]).expect("JSON");
        assert_eq!(lane["id"], "lane-1");
        assert_eq!(lane["error"]["code"], INTERNAL_ERROR);
        let rest: serde_json::Value = serde_json::from_str(out.trim_end()).expect("one line");
        assert_eq!(rest["id"], 7, "rmcp's answer stays rmcp's");
    }

    #[tokio::test]
    async fn each_oversized_message_tells_the_hooks_once_with_its_server() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let hook: Arc<OverLimitHook> = {
            let seen = Arc::clone(&seen);
            Arc::new(move |server: &str| {
                seen.lock().expect("not poisoned").push(server.to_string());
            })
        };
        on_over_limit(&hook);
        let big = response("1", 2000);
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
            "z".repeat(2000)
        );
        let input = format!("{big}\n{}\n{notification}\n{big}", response("2", 1));
        through_named(input.as_bytes(), 1000, 300, "counted").await;
        // Other tests of this process tell the hook of their own server's messages.
        let mine = |seen: &Mutex<Vec<String>>| {
            let seen = seen.lock().expect("not poisoned");
            seen.iter().filter(|s| *s == "counted").count()
        };
        // Two answers, a notification, an answer cut off by the end of the stream.
        assert_eq!(mine(&seen), 3);
        drop(hook);
        through_named(format!("{big}\n").as_bytes(), 1000, 300, "counted").await;
        assert_eq!(mine(&seen), 3, "a dropped hook is told nothing");
    }

    #[test]
    fn limits_read_well() {
        assert_eq!(describe_limit(DEFAULT_MAX_MESSAGE), "8 MiB");
        assert_eq!(describe_limit(1000), "1000 bytes");
        assert_eq!(
            too_big_message("big", 32 * MIB),
            "server `big` sent a message of more than 32 MiB (the limit); raise it with --max-message-mib \
             (or \"maxMessageMib\" in its config entry)"
        );
    }
}
