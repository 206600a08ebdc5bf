//! [`ToolListTap`]: the members of a server's tool definitions that rmcp's `Tool` drops, read
//! from the `tools/list` answers as the transport receives them.
//!
//! rmcp decodes every message inside the transport, into types: a member its
//! [`rmcp::model::Tool`] does not model (`execution` of MCP 2025-11-25, a vendor's own) is gone
//! before anything that holds a [`Peer`](rmcp::Peer) can see it, and sending `tools/list` as a
//! custom request does not help (the answer is decoded into the same type). So the transport,
//! which holds the text, shows each message it reads to the tap ([`ToolListTap::observe`], or
//! [`ToolListTap::reader`] for a newline-delimited stream); the tap keeps, for each `tools/list`
//! answer, the members rmcp does not model, by the answer's request id; the board's listing
//! takes them by the id it sent ([`ServiceOptions::tool_list_tap`](crate::ServiceOptions::tool_list_tap)).

use std::{
    collections::{HashMap, VecDeque},
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
};

use memchr::memmem;
use rmcp::model::{JsonObject, RequestId};
use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, Visitor},
};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::listed::MODELED;

/// At most this many answers are kept that no listing has taken (answers to a `tools/list`
/// someone else sent on the connection, or to a listing that gave up): the oldest go first.
const UNTAKEN_ANSWERS: usize = 16;

/// A line longer than this is not looked at by [`ToolListTap::reader`] (rmcp's own default
/// line limit, `DEFAULT_MAX_LINE_LENGTH`, is the same).
pub const MAX_TAPPED_LINE: usize = 16 * 1024 * 1024;

/// The extra members of one answer's tools, by tool name (only tools that have some).
pub(crate) type Extras = HashMap<String, Arc<JsonObject>>;

/// Keeps what rmcp's `Tool` drops from a server's `tools/list` answers, for the board to put
/// back (see the module docs). Clones share one tap: give one clone to the transport and one to
/// [`ServiceOptions::tool_list_tap`](crate::ServiceOptions::tool_list_tap).
///
/// A server message that is not a `tools/list` answer costs one substring search; what is kept
/// is bounded (16 answers no listing took, oldest dropped first).
///
/// ```
/// use pegboard::ToolListTap;
///
/// let tap = ToolListTap::new();
/// tap.observe(br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[
///     {"name":"read","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]}}"#);
/// assert_eq!(tap.pending(), 1);
/// tap.observe(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
/// assert_eq!(tap.pending(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolListTap {
    answers: Arc<Mutex<VecDeque<(RequestId, Extras)>>>,
}

impl ToolListTap {
    /// A tap that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Look at one message the server sent, as the transport read it (one JSON-RPC message:
    /// a line of a stdio server, the data of an SSE event, a JSON response body). A `tools/list`
    /// answer whose tools have members rmcp does not model is kept; anything else is ignored.
    pub fn observe(&self, message: &[u8]) {
        // Inside a JSON string a quote is escaped, so `"tools"` here is an object key: every
        // tools/list answer has it, and almost nothing else does.
        if memmem::find(message, b"\"tools\"").is_none() {
            return;
        }
        let Some((id, extras)) = answer_extras(message) else {
            return;
        };
        if extras.is_empty() {
            return;
        }
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        answers.retain(|(kept, _)| *kept != id);
        if answers.len() >= UNTAKEN_ANSWERS {
            answers.pop_front();
        }
        answers.push_back((id, extras));
    }

    /// `inner`, a stream of newline-delimited JSON-RPC messages from a server (a child's stdout,
    /// one end of a pipe), with every line shown to this tap as it is read; give it to rmcp's
    /// transport in place of `inner`. Lines over [`MAX_TAPPED_LINE`] bytes are passed on unseen.
    pub fn reader<R: AsyncRead>(&self, inner: R) -> TappedReader<R> {
        TappedReader {
            inner,
            tap: self.clone(),
            line: Vec::new(),
            overlong: false,
        }
    }

    /// How many answers are kept that no listing has taken yet.
    pub fn pending(&self) -> usize {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Take what was kept of the answer to request `id` (`None`: its tools had no extra members,
    /// or the tap did not see it).
    pub(crate) fn take(&self, id: &RequestId) -> Option<Extras> {
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        let at = answers.iter().position(|(kept, _)| kept == id)?;
        answers.remove(at).map(|(_, extras)| extras)
    }
}

/// The request id of a `tools/list` answer and its tools' extra members; `None` for anything
/// else.
fn answer_extras(message: &[u8]) -> Option<(RequestId, Extras)> {
    let answer: Answer = serde_json::from_slice(message).ok()?;
    let extras = answer
        .result
        .tools
        .into_iter()
        .filter_map(|tool| Some((tool.name?, Arc::new(tool.extra))))
        .filter(|(_, extra)| !extra.is_empty())
        .collect();
    Some((answer.id, extras))
}

/// A JSON-RPC answer whose result lists tools (other members are skipped).
#[derive(Deserialize)]
struct Answer {
    id: RequestId,
    result: Page,
}

#[derive(Deserialize)]
struct Page {
    tools: Vec<Unmodeled>,
}

/// One tool of a listing: its name and the members rmcp does not model. The members it models
/// are skipped as they are read, never built (an `inputSchema` is most of a listing).
struct Unmodeled {
    name: Option<String>,
    extra: JsonObject,
}

impl<'de> Deserialize<'de> for Unmodeled {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UnmodeledVisitor)
    }
}

struct UnmodeledVisitor;

impl<'de> Visitor<'de> for UnmodeledVisitor {
    type Value = Unmodeled;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tool")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unmodeled, A::Error> {
        let mut tool = Unmodeled {
            name: None,
            extra: JsonObject::new(),
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == "name" {
                // A name that is not a string makes the tool unnamed: it gets no extras.
                tool.name = match map.next_value::<Value>()? {
                    Value::String(name) => Some(name),
                    _ => None,
                };
            } else if MODELED.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
            } else {
                let value = map.next_value::<Value>()?;
                tool.extra.insert(key, value);
            }
        }
        Ok(tool)
    }

    // Anything but an object lists no tool: skipped, as the board skips it.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unmodeled, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Unmodeled::unnamed())
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Unmodeled, E> {
        Ok(Unmodeled::unnamed())
    }
}

impl Unmodeled {
    fn unnamed() -> Self {
        Self {
            name: None,
            extra: JsonObject::new(),
        }
    }
}

/// A reader whose lines are shown to a [`ToolListTap`]: see [`ToolListTap::reader`].
#[derive(Debug)]
pub struct TappedReader<R> {
    inner: R,
    tap: ToolListTap,
    /// The current line, up to [`MAX_TAPPED_LINE`] bytes.
    line: Vec<u8>,
    /// The current line is longer than that: skip to its end.
    overlong: bool,
}

impl<R> TappedReader<R> {
    fn saw(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (piece, ends_line) = match memchr::memchr(b'\n', bytes) {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            if !self.overlong {
                if self.line.len() + piece.len() > MAX_TAPPED_LINE {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(piece);
                }
            }
            if ends_line {
                if !self.overlong {
                    self.tap.observe(&self.line);
                }
                self.line.clear();
                self.overlong = false;
                bytes = &bytes[piece.len() + 1..];
            } else {
                bytes = &[];
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TappedReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.saw(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: u32, tools: &str) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{tools}]}}}}"#).into_bytes()
    }

    const WITH_EXECUTION: &str = r#"{"name":"a","inputSchema":{},"execution":{"taskSupport":"optional"}},{"name":"b","inputSchema":{}}"#;

    #[test]
    fn an_answer_keeps_only_the_members_rmcp_does_not_model() {
        let tap = ToolListTap::new();
        tap.observe(&answer(3, WITH_EXECUTION));
        let extras = tap.take(&RequestId::Number(3)).unwrap();
        assert_eq!(extras.len(), 1, "b has none");
        assert_eq!(
            Value::Object((*extras["a"]).clone()),
            serde_json::json!({"execution": {"taskSupport": "optional"}})
        );
        assert_eq!(tap.take(&RequestId::Number(3)), None, "taken once");
    }

    #[test]
    fn what_is_not_a_tools_list_answer_is_not_kept() {
        let tap = ToolListTap::new();
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"tools":[{"name":"x","y":1}]}}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"tools":[{"name":"x","y":1}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":"nope"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"plain","inputSchema":{}}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":7,"x":1},{"x":1},"odd",[1],null]}}"#,
            "not json \"tools\"",
        ] {
            tap.observe(message.as_bytes());
        }
        assert_eq!(tap.pending(), 0);
    }

    #[test]
    fn odd_entries_of_a_listing_do_not_cost_the_others_their_members() {
        let tap = ToolListTap::new();
        tap.observe(&answer(
            4,
            r#""odd",{"name":7,"x":1},{"name":"a","inputSchema":{"type":"object"},"x-cost":2},null"#,
        ));
        let extras = tap.take(&RequestId::Number(4)).unwrap();
        assert_eq!(extras.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(
            Value::Object((*extras["a"]).clone()),
            serde_json::json!({"x-cost": 2})
        );
    }

    #[test]
    fn answers_nobody_takes_are_bounded() {
        let tap = ToolListTap::new();
        for id in 0..100 {
            tap.observe(&answer(id, WITH_EXECUTION));
        }
        assert_eq!(tap.pending(), UNTAKEN_ANSWERS);
        assert!(tap.take(&RequestId::Number(0)).is_none(), "the oldest went");
        assert!(tap.take(&RequestId::Number(99)).is_some());
    }

    #[tokio::test]
    async fn the_reader_shows_whole_lines_however_they_are_split() {
        use tokio::io::AsyncReadExt;
        let mut stream = answer(9, WITH_EXECUTION);
        stream.push(b'\n');
        stream.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
        let tap = ToolListTap::new();
        // One byte at a time: every line is split across reads.
        let (mut writer, reader) = tokio::io::duplex(1);
        let copy = {
            let stream = stream.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                writer.write_all(&stream).await
            })
        };
        let mut read = Vec::new();
        tap.reader(reader).read_to_end(&mut read).await.unwrap();
        copy.await.unwrap().unwrap();
        assert_eq!(read, stream, "passed on unchanged");
        assert!(tap.take(&RequestId::Number(9)).is_some());
    }

    #[test]
    fn an_overlong_line_is_skipped_and_the_next_one_seen() {
        let tap = ToolListTap::new();
        let mut reader = tap.reader(tokio::io::empty());
        let long = vec![b' '; MAX_TAPPED_LINE + 1];
        reader.saw(&long);
        reader.saw(&answer(1, WITH_EXECUTION));
        reader.saw(b"\n");
        assert_eq!(tap.pending(), 0, "the rest of the long line");
        reader.saw(&answer(2, WITH_EXECUTION));
        reader.saw(b"\n");
        assert!(tap.take(&RequestId::Number(2)).is_some());
        assert!(reader.line.capacity() <= MAX_TAPPED_LINE + 64 * 1024);
    }
}
