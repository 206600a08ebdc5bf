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
    /// Where a member can be put first in `params` (just after its `{`).
    params_open: usize,
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
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// The params of a `tools/call` the lane takes: exactly these members (anything else — a
/// `task`, a 2026-07-28 retry's answers, a member of a newer protocol — goes rmcp's way, which
/// decides about it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// The params members the lane reads of `tools/list` and `notifications/cancelled`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(rename = "_meta", default)]
    meta: Option<IgnoredAny>,
    #[serde(default)]
    cursor: Option<IgnoredAny>,
    #[serde(borrow, default)]
    request_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    protocol_version: Option<&'a str>,
}

/// Read `line` (one message, without its newline).
pub(crate) fn classify<'a>(line: &'a [u8]) -> Incoming<'a> {
    let Ok(message) = serde_json::from_slice::<Message<'_>>(line) else {
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
    let params = |raw: Option<&'a RawValue>| match raw {
        Some(raw) => serde_json::from_str::<Params<'a>>(raw.get()).ok(),
        None => None,
    };
    match (message.method, message.id) {
        (Some("tools/call"), Some(id)) => message
            .params
            .and_then(|raw| call(line, id, raw))
            .map_or(Incoming::Other, Incoming::Call),
        (Some("tools/list"), Some(id)) => {
            let plain = message.params.is_none()
                || params(message.params).is_some_and(|p| p.meta.is_none() && p.cursor.is_none());
            if plain {
                Incoming::ListTools(&line[range_in(line, id.get())])
            } else {
                Incoming::Other
            }
        }
        (Some("initialize"), Some(_)) => Incoming::Initialize {
            // Dates in ISO form compare as strings.
            legacy: params(message.params)
                .and_then(|p| p.protocol_version)
                .is_some_and(|v| v < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()),
        },
        (Some("notifications/cancelled"), None) => match params(message.params) {
            Some(Params {
                request_id: Some(id),
                ..
            }) => Incoming::Cancelled(&line[range_in(line, id.get())]),
            _ => Incoming::Other,
        },
        _ => Incoming::Other,
    }
}

/// A `tools/call` the lane can take as it is (see [`CallParams`]): arguments an object (or
/// none), and a `_meta` whose members go upstream verbatim but for the progress token, which
/// the lane maps (a member of the client's session with the gateway sends it rmcp's way, where
/// it is dropped: `crate::protocol::meta`).
fn call<'a>(line: &'a [u8], id: &'a RawValue, raw: &'a RawValue) -> Option<Call<'a>> {
    let params: CallParams<'a> = serde_json::from_str(raw.get()).ok()?;
    if let Some(arguments) = params.arguments {
        let text = arguments.get();
        if !(text.starts_with('{') || text == "null") {
            return None;
        }
    }
    let mut token_at = None;
    let mut trace = TraceMembers::default();
    let mut meta_open = None;
    if let Some(raw_meta) = params.meta.filter(|m| m.get() != "null") {
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
    let inner = range_in(line, params.name);
    Some(Call {
        line,
        id: range_in(line, id.get()),
        // With its quotes.
        name_at: inner.start.saturating_sub(1)..inner.end + 1,
        token_at,
        trace,
        meta_open,
        params_open: range_in(line, raw.get()).start + 1,
        arguments_at: params.arguments.map(|a| range_in(line, a.get())),
        name: Cow::Borrowed(params.name),
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
                let at = self.meta_open.unwrap_or(self.params_open);
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

    /// `trace`'s members, to put first in `_meta` (or as a `_meta` of their own first in
    /// `params`), with the separator the place needs.
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
            None => format!("\"_meta\":{object},").into_bytes(),
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
