//! The express lane reads messages by their known shape and edits them as bytes: a `tools/call`
//! gets the upstream's id and the tool's original name spliced in, an answer gets the client's
//! id back; everything else in them passes verbatim, unparsed (`arguments`, `content`, …).

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::io::span::{range_in, replace};
use crate::protocol::meta;

/// What a line from the client is, as far as the express lane cares.
#[derive(Debug)]
pub(crate) enum Incoming<'a> {
    /// A `tools/call` request without `task`, whose `_meta` holds at most a `progressToken`
    /// (anything else goes the full way).
    Call(Call<'a>),
    /// `tools/list` without a cursor or `_meta`, with its raw id.
    ListTools(&'a [u8]),
    /// `initialize`: whether it asks for a legacy generation (before 2026-07-28).
    Initialize {
        /// The version asked for is older than 2026-07-28.
        legacy: bool,
    },
    /// `notifications/cancelled`, with the raw id of the request it cancels.
    Cancelled(&'a [u8]),
    /// A response to a request with a string id: the id, and its `result` or its `error`.
    Response {
        /// The id, unescaped.
        id: &'a str,
        /// The `result`, raw.
        result: Option<&'a RawValue>,
        /// The `error`, raw.
        error: Option<&'a RawValue>,
    },
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
    /// The client's W3C trace context members of `_meta`, raw (see [`Call::trace_parts`]).
    trace: TraceMembers<'a>,
    /// Where a member can be put first in `_meta` (just after its `{`), if there is one.
    meta_open: Option<usize>,
    /// Where the `arguments` value is, if there is one.
    arguments_at: Option<Range<usize>>,
    /// The tool name as the client wrote it (unescaped).
    pub(crate) name: Cow<'a, str>,
}

/// A `traceparent`, with the `tracestate` and `baggage` beside it, unescaped.
pub(crate) type TraceParts<'a> = (Cow<'a, str>, Option<Cow<'a, str>>, Option<Cow<'a, str>>);

/// The trace context members of a request's `_meta`, raw JSON.
#[derive(Debug, Default, Clone, Copy)]
struct TraceMembers<'a> {
    traceparent: Option<&'a RawValue>,
    tracestate: Option<&'a RawValue>,
    baggage: Option<&'a RawValue>,
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
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// The params members the lane reads of the messages it takes (`tools/call`, `tools/list`,
/// `initialize`, `notifications/cancelled`), read with the message in its one pass; a member
/// written `null` reads as absent, as serde reads an `Option`.
#[derive(Default)]
struct Params<'a> {
    name: Option<&'a str>,
    arguments: Option<&'a RawValue>,
    meta: Option<&'a RawValue>,
    cursor: bool,
    request_id: Option<&'a RawValue>,
    protocol_version: Option<&'a str>,
    /// A member none of these, or one of these twice: a `tools/call` with one goes rmcp's way,
    /// which decides about it (a `task`, a 2026-07-28 retry's answers, a newer member).
    odd: bool,
}

/// A params member's name, escaped or not.
#[derive(Clone, Copy)]
enum ParamKey {
    Name,
    Arguments,
    Meta,
    Cursor,
    RequestId,
    ProtocolVersion,
    Other,
}

impl<'de> Deserialize<'de> for ParamKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = ParamKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ParamKey, E> {
                Ok(match name {
                    "name" => ParamKey::Name,
                    "arguments" => ParamKey::Arguments,
                    "_meta" => ParamKey::Meta,
                    "cursor" => ParamKey::Cursor,
                    "requestId" => ParamKey::RequestId,
                    "protocolVersion" => ParamKey::ProtocolVersion,
                    _ => ParamKey::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// Reads [`Params`] (borrowing from the line for `'a`).
struct Members<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for Members<'a> {
    type Value = Params<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("params, an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Params<'a>, A::Error> {
        // Raw JSON, `null` read as absent.
        fn raw<'de, A: serde::de::MapAccess<'de>>(
            map: &mut A,
        ) -> Result<Option<&'de RawValue>, A::Error> {
            let value: &'de RawValue = map.next_value()?;
            Ok((value.get() != "null").then_some(value))
        }
        let mut params = Params::default();
        let mut seen = [false; 6];
        while let Some(key) = map.next_key::<ParamKey>()? {
            match key {
                ParamKey::Name => params.name = map.next_value()?,
                ParamKey::Arguments => params.arguments = raw(&mut map)?,
                ParamKey::Meta => params.meta = raw(&mut map)?,
                ParamKey::Cursor => params.cursor = raw(&mut map)?.is_some(),
                ParamKey::RequestId => params.request_id = raw(&mut map)?,
                ParamKey::ProtocolVersion => params.protocol_version = map.next_value()?,
                ParamKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    params.odd = true;
                    continue;
                }
            }
            params.odd |= std::mem::replace(&mut seen[key as usize], true);
        }
        Ok(params)
    }
}

/// Whether `body` is a `tools/list` request, read only for its method (any params: the lane
/// takes those [`classify`] says; the rest rmcp answers, and `crate::definitions` makes the
/// answer whole). A body that does not name the method plainly is not read at all.
pub(crate) fn asks_tools_list(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Method<'a> {
        #[serde(borrow, default)]
        method: Option<Cow<'a, str>>,
    }
    memchr::memmem::find(body, b"\"tools/list\"").is_some()
        && serde_json::from_slice::<Method<'_>>(body)
            .is_ok_and(|m| m.method.as_deref() == Some("tools/list"))
}

/// Read `line` (one message, without its newline).
pub(crate) fn classify<'a>(line: &'a [u8]) -> Incoming<'a> {
    // The whole line's UTF-8 checked at once, then read as text: `serde_json` then checks no
    // string again (read from bytes, it checks each one it reads, which cost more than the
    // rest of the read). A line that is not UTF-8 goes rmcp's way, which refuses it.
    let Ok(text) = std::str::from_utf8(line) else {
        return Incoming::Other;
    };
    let Ok(message) = serde_json::from_str::<Message<'_>>(text) else {
        return Incoming::Other;
    };
    if message.method.is_none()
        && let Some(id) = message.id
        && (message.result.is_some() || message.error.is_some())
    {
        // Only string ids without escapes: the lane's own are such.
        return match serde_json::from_str::<&str>(id.get()) {
            Ok(id) => Incoming::Response {
                id,
                result: message.result,
                error: message.error,
            },
            Err(_) => Incoming::Other,
        };
    }
    match (message.method, message.id, message.params) {
        (Some("tools/call"), Some(id), Some(params)) => {
            call(line, id, &params).map_or(Incoming::Other, Incoming::Call)
        }
        (Some("tools/list"), Some(id), params) => {
            if params.is_none_or(|p| p.meta.is_none() && !p.cursor) {
                Incoming::ListTools(&line[range_in(line, id.get())])
            } else {
                Incoming::Other
            }
        }
        (Some("initialize"), Some(_), params) => Incoming::Initialize {
            // Dates in ISO form compare as strings.
            legacy: params
                .and_then(|p| p.protocol_version)
                .is_some_and(|v| v < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()),
        },
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

/// A `tools/call` the lane can take as it is: params of exactly `name`, `arguments` (an object,
/// or none) and `_meta`, whose members go upstream verbatim but for the progress token, which
/// the lane maps (a member of the client's session with the gateway sends it rmcp's way, where
/// it is dropped: `crate::protocol::meta`).
fn call<'a>(line: &'a [u8], id: &'a RawValue, params: &Params<'a>) -> Option<Call<'a>> {
    if params.odd
        || params.cursor
        || params.request_id.is_some()
        || params.protocol_version.is_some()
    {
        return None;
    }
    let name = params.name?;
    if let Some(arguments) = params.arguments
        && !arguments.get().starts_with('{')
    {
        return None;
    }
    let mut token_at = None;
    let mut trace = TraceMembers::default();
    let mut meta_open = None;
    if let Some(raw_meta) = params.meta {
        let members: std::collections::BTreeMap<Cow<'a, str>, &'a RawValue> =
            serde_json::from_str(raw_meta.get()).ok()?;
        for (key, value) in members {
            match key.as_ref() {
                meta::PROGRESS_TOKEN => token_at = Some(range_in(line, value.get())),
                "traceparent" => trace.traceparent = Some(value),
                "tracestate" => trace.tracestate = Some(value),
                "baggage" => trace.baggage = Some(value),
                key if meta::is_session_key(key) => return None,
                _ => {}
            }
        }
        meta_open = Some(range_in(line, raw_meta.get()).start + 1);
    }
    let inner = range_in(line, name);
    Some(Call {
        line,
        id: range_in(line, id.get()),
        // With its quotes.
        name_at: inner.start.saturating_sub(1)..inner.end + 1,
        token_at,
        trace,
        meta_open,
        arguments_at: params.arguments.map(|a| range_in(line, a.get())),
        name: Cow::Borrowed(name),
    })
}

impl Call<'_> {
    /// The client's id, raw.
    pub(crate) fn id(&self) -> &[u8] {
        &self.line[self.id.clone()]
    }

    /// The arguments, raw (`{}` when there are none).
    pub(crate) fn arguments(&self) -> &[u8] {
        self.arguments_at.clone().map_or(b"{}", |at| &self.line[at])
    }

    /// The request's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.line.len()
    }

    /// The client's progress token, raw, if it asked for progress.
    pub(crate) fn progress_token(&self) -> Option<&[u8]> {
        self.token_at.clone().map(|at| &self.line[at])
    }

    /// The client's trace context members of `_meta` (`traceparent`, `tracestate`, `baggage`),
    /// unescaped, when it has a `traceparent`.
    pub(crate) fn trace_parts(&self) -> Option<TraceParts<'_>> {
        let text = |raw: &RawValue| serde_json::from_str::<Cow<'_, str>>(raw.get()).ok();
        let parent = text(self.trace.traceparent?)?;
        let state = self.trace.tracestate.and_then(text);
        let baggage = self.trace.baggage.and_then(text);
        Some((parent, state, baggage))
    }

    /// The request for the upstream: id `up_id` (a JSON string, also its progress token when
    /// the client asked for progress), the tool's `original` name, and the trace context `trace`
    /// in its `_meta` (in place of the client's `traceparent`, or added when the client's
    /// context came in HTTP headers); the rest verbatim, ending with a newline. Written in one
    /// pass into one buffer: this runs on every call.
    pub(crate) fn upstream_line(
        &self,
        up_id: &str,
        original: &str,
        trace: Option<&crate::telemetry::TraceContext>,
    ) -> Vec<u8> {
        let traceparent = trace.map(crate::telemetry::TraceContext::traceparent);
        let added = match (trace, self.trace.traceparent) {
            (Some(trace), None) => Some(self.trace_members(trace)),
            _ => None,
        };
        // The id twice at most, the name once, each in place of what the client wrote there;
        // the trace context in place of the client's, or added.
        let mut edits = [
            Some((self.id.clone(), Edit::Text(up_id))),
            Some((self.name_at.clone(), Edit::Text(original))),
            self.token_at.clone().map(|at| (at, Edit::Text(up_id))),
            match (&traceparent, self.trace.traceparent) {
                (Some(parent), Some(raw)) => {
                    Some((range_in(self.line, raw.get()), Edit::Text(parent.as_str())))
                }
                _ => None,
            },
            added.as_deref().map(|members| {
                // First in `_meta`, or a `_meta` of its own just after the name's value.
                let at = self.meta_open.unwrap_or(self.name_at.end);
                (at..at, Edit::Raw(members))
            }),
        ];
        edits.sort_by_key(|edit| edit.as_ref().map_or(usize::MAX, |(at, _)| at.start));
        let mut out = Vec::with_capacity(self.line.len() + original.len() + 2 * up_id.len() + 8);
        let mut from = 0;
        for (at, edit) in edits.into_iter().flatten() {
            out.extend_from_slice(&self.line[from..at.start]);
            match edit {
                Edit::Text(text) => write_json_string(&mut out, text),
                Edit::Raw(bytes) => out.extend_from_slice(bytes),
            }
            from = at.end;
        }
        out.extend_from_slice(&self.line[from..]);
        out.push(b'\n');
        out
    }

    /// `trace`'s members, to put first in `_meta` (or as a `_meta` of their own after the
    /// name's value in `params`), with the separator the place needs.
    fn trace_members(&self, trace: &crate::telemetry::TraceContext) -> Vec<u8> {
        let mut members = serde_json::Map::new();
        trace.write_meta(&mut members);
        let object = serde_json::Value::Object(members).to_string();
        let inner = &object[1..object.len() - 1];
        match self.meta_open {
            Some(open)
                if self.line.get(open..).is_some_and(|rest| {
                    rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}')
                }) =>
            {
                inner.as_bytes().to_vec()
            }
            Some(_) => format!("{inner},").into_bytes(),
            None => format!(",\"_meta\":{object}").into_bytes(),
        }
    }
}

/// What an edit of a request line writes.
enum Edit<'a> {
    /// A JSON string (quoted, escaped).
    Text(&'a str),
    /// Bytes as they are.
    Raw(&'a [u8]),
}

/// `text` as a JSON string (quoted, escaped) at the end of `out`.
fn write_json_string(out: &mut Vec<u8>, text: &str) {
    // Ids and tool names rarely need an escape: then the text goes between quotes as it is
    // (serde_json's writer looks each byte up in its escape table).
    if !text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        return;
    }
    // Writing a string into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
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
    progress: f64,
}

/// A server's progress notification line for the client, with its progress value: its token
/// `ds_token` (raw JSON) in place of the lane's, the rest verbatim.
pub(crate) fn progress_for_client(line: &[u8], ds_token: &[u8]) -> Option<(f64, Vec<u8>)> {
    let message: ProgressShape<'_> = serde_json::from_slice(line).ok()?;
    let at = range_in(line, message.params.progress_token.get());
    Some((message.params.progress, replace(line, at, ds_token)))
}

#[cfg(test)]
mod tests;
