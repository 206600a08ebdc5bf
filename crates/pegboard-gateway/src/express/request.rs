//! The express lane reads messages by their known shape and edits them as bytes: a `tools/call`
//! gets the upstream's id and the tool's original name spliced in, an answer gets the client's
//! id back; everything else in them passes verbatim, unparsed (`arguments`, `content`, …).

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// What a line from the client is, as far as the express lane cares.
#[derive(Debug)]
pub(crate) enum Incoming<'a> {
    /// A `tools/call` request without `task`, whose `_meta` holds at most a `progressToken`
    /// (anything else goes the full way).
    Call(Call<'a>),
    /// `tools/list` without a cursor or `_meta`, with its raw id.
    ListTools(&'a [u8]),
    /// `notifications/cancelled`, with the raw id of the request it cancels.
    Cancelled(&'a [u8]),
    /// Anything else: rmcp's business.
    Other,
}

/// A `tools/call` request line.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    line: &'a [u8],
    id: Range<usize>,
    name_at: Range<usize>,
    /// Where the `_meta.progressToken` value is, if there is one.
    token_at: Option<Range<usize>>,
    /// The tool name as the client wrote it (unescaped).
    pub(crate) name: Cow<'a, str>,
}

/// The members the lane reads of a client's message, in one pass; the rest (`arguments`, …) is
/// skipped unparsed.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    // `&str`, not `Cow`: serde borrows a `Cow` only when it is not in an `Option`. A method or
    // name written with escapes fails the read, and the message goes rmcp's way.
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

/// The params members of every message the lane takes (`tools/call`, `tools/list`,
/// `notifications/cancelled`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<std::collections::BTreeMap<Cow<'a, str>, &'a RawValue>>,
    #[serde(default)]
    task: Option<IgnoredAny>,
    #[serde(default)]
    cursor: Option<IgnoredAny>,
    #[serde(borrow, default)]
    request_id: Option<&'a RawValue>,
}

/// Where `part` (a slice of `line`) is in `line`.
pub(super) fn range_in(line: &[u8], part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    start..start + part.len()
}

/// Read `line` (one message, without its newline).
pub(crate) fn classify(line: &[u8]) -> Incoming<'_> {
    let Ok(message) = serde_json::from_slice::<Message<'_>>(line) else {
        return Incoming::Other;
    };
    match (message.method, message.id, message.params) {
        (Some("tools/call"), Some(id), Some(params)) => {
            let Some(name) = params.name else {
                return Incoming::Other;
            };
            if params.task.is_some() {
                return Incoming::Other;
            }
            // A progress token is mapped by the lane; any other `_meta` is rmcp's way's business.
            let mut token_at = None;
            for (key, value) in params.meta.iter().flatten() {
                if key != "progressToken" {
                    return Incoming::Other;
                }
                token_at = Some(range_in(line, value.get()));
            }
            let inner = range_in(line, name);
            Incoming::Call(Call {
                line,
                id: range_in(line, id.get()),
                // With its quotes.
                name_at: inner.start.saturating_sub(1)..inner.end + 1,
                token_at,
                name: Cow::Borrowed(name),
            })
        }
        (Some("tools/list"), Some(id), params) => {
            let plain = params.is_none_or(|p| p.meta.is_none() && p.cursor.is_none());
            if plain {
                Incoming::ListTools(&line[range_in(line, id.get())])
            } else {
                Incoming::Other
            }
        }
        (
            Some("notifications/cancelled"),
            None,
            Some(Params {
                request_id: Some(id),
                ..
            }),
        ) => Incoming::Cancelled(&line[range_in(line, id.get())]),
        _ => Incoming::Other,
    }
}

impl Call<'_> {
    /// The client's id, raw.
    pub(crate) fn id(&self) -> &[u8] {
        &self.line[self.id.clone()]
    }

    /// The client's progress token, raw, if it asked for progress.
    pub(crate) fn progress_token(&self) -> Option<&[u8]> {
        self.token_at.clone().map(|at| &self.line[at])
    }

    /// The request for the upstream: id `up_id` (a JSON string, also its progress token when
    /// the client asked for progress) and the tool's `original` name; the rest verbatim, ending
    /// with a newline. Written in one pass into one buffer: this runs on every call.
    pub(crate) fn upstream_line(&self, up_id: &str, original: &str) -> Vec<u8> {
        // The id twice at most, the name once, each in place of what the client wrote there.
        let mut edits = [
            Some((self.id.clone(), up_id)),
            Some((self.name_at.clone(), original)),
            self.token_at.clone().map(|at| (at, up_id)),
        ];
        edits.sort_by_key(|edit| edit.as_ref().map_or(usize::MAX, |(at, _)| at.start));
        let mut out = Vec::with_capacity(self.line.len() + original.len() + 2 * up_id.len() + 8);
        let mut from = 0;
        for (at, text) in edits.into_iter().flatten() {
            out.extend_from_slice(&self.line[from..at.start]);
            write_json_string(&mut out, text);
            from = at.end;
        }
        out.extend_from_slice(&self.line[from..]);
        out.push(b'\n');
        out
    }
}

/// `text` as a JSON string (quoted, escaped) at the end of `out`.
fn write_json_string(out: &mut Vec<u8>, text: &str) {
    // Writing a string into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// `line` with `at` replaced by `with`, and a newline.
fn replace(line: &[u8], at: Range<usize>, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + with.len() + 1);
    out.extend_from_slice(&line[..at.start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&line[at.end..]);
    out.push(b'\n');
    out
}

#[derive(Deserialize)]
struct ProgressShape<'a> {
    #[serde(borrow)]
    params: TokenShape<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenShape<'a> {
    #[serde(borrow)]
    progress_token: &'a RawValue,
}

/// A server's progress notification line for the client: its token `ds_token` (raw JSON) in
/// place of the lane's, the rest verbatim.
pub(crate) fn progress_for_client(line: &[u8], ds_token: &[u8]) -> Option<Vec<u8>> {
    let message: ProgressShape<'_> = serde_json::from_slice(line).ok()?;
    let at = range_in(line, message.params.progress_token.get());
    Some(replace(line, at, ds_token))
}

/// An upstream's answer line, by its parts (read where the lane takes it out of the server's
/// output, [`super::lane`]).
#[derive(Debug)]
pub(crate) struct Reply {
    line: Vec<u8>,
    /// Where the id is, with its quotes.
    id: Range<usize>,
    /// Whether it has a `result`.
    pub(crate) result: bool,
    /// Whether it has an `error`.
    pub(crate) error: bool,
}

impl Reply {
    /// An answer `line` whose id (with its quotes) is at `id`.
    pub(crate) fn new(line: Vec<u8>, id: Range<usize>, result: bool, error: bool) -> Self {
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

    fn call(line: &str) -> Call<'_> {
        match classify(line.as_bytes()) {
            Incoming::Call(call) => call,
            other => panic!("not a call: {other:?}"),
        }
    }

    #[test]
    fn a_call_gets_the_upstream_id_and_original_name_and_keeps_the_rest() {
        let line = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"units-convert","arguments":{"value":10,"x":[1,{"name":"n"}]}}}"#;
        let c = call(line);
        assert_eq!(c.name, "units-convert");
        assert_eq!(c.id(), b"42");
        let up = c.upstream_line("pbx-3", "convert");
        assert_eq!(
            String::from_utf8(up).expect("utf-8"),
            r#"{"jsonrpc":"2.0","id":"pbx-3","method":"tools/call","params":{"name":"convert","arguments":{"value":10,"x":[1,{"name":"n"}]}}}"#.to_string() + "\n"
        );
        // Members in another order, a string id with an escape.
        let line = r#"{"params":{"arguments":{},"name":"a-b"},"method":"tools/call","id":"x\"y","jsonrpc":"2.0"}"#;
        let c = call(line);
        assert_eq!(c.name, "a-b");
        assert_eq!(c.id(), br#""x\"y""#);
        let up: serde_json::Value =
            serde_json::from_slice(&c.upstream_line("pbx-4", "b\"q")).expect("JSON");
        assert_eq!(up["id"], "pbx-4");
        assert_eq!(up["params"]["name"], "b\"q");
    }

    #[test]
    fn a_progress_token_is_mapped_to_the_upstream_id() {
        let line = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":"tok"},"name":"n-t","arguments":{}}}"#;
        let c = call(line);
        assert_eq!(c.progress_token(), Some(&br#""tok""#[..]));
        assert_eq!(
            String::from_utf8(c.upstream_line("pbx-1", "t")).expect("utf-8"),
            r#"{"jsonrpc":"2.0","id":"pbx-1","method":"tools/call","params":{"_meta":{"progressToken":"pbx-1"},"name":"t","arguments":{}}}"#.to_string() + "\n"
        );
        let plain = call(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{}}}"#,
        );
        assert_eq!(plain.progress_token(), None);
    }

    #[test]
    fn calls_with_meta_or_task_and_other_messages_go_the_full_way() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1,"x":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            // A name with escapes has no bytes to splice.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a-\u0062"}}"#,
            "not json",
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Incoming::Other),
                "{line}"
            );
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Incoming::ListTools(b"7")),
                "{line}"
            );
        }
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"x"}}"#;
        assert!(matches!(classify(cancel), Incoming::Cancelled(id) if id == br#""r-1""#));
    }

    #[test]
    fn an_answer_gets_the_client_id_back() {
        let line = br#"{"result":{"content":[{"type":"text","text":"\"id\":1"}]},"jsonrpc":"2.0","id":"pbx-9"}"#;
        let at = line.len() - 8..line.len() - 1;
        assert_eq!(&line[at.clone()], br#""pbx-9""#);
        let reply = Reply::new(line.to_vec(), at, true, false);
        assert_eq!(
            String::from_utf8(reply.with_id(b"\"abc\"")).expect("utf-8"),
            r#"{"result":{"content":[{"type":"text","text":"\"id\":1"}]},"jsonrpc":"2.0","id":"abc"}"#
                .to_string()
                + "\n"
        );
    }
}
