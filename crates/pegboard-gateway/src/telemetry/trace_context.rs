//! W3C Trace Context: `traceparent`, `tracestate` and `baggage`, read from a request's
//! `params._meta` (SEP-414: unprefixed keys) or HTTP headers, and written into the upstream
//! request's `params._meta`.
//!
//! `traceparent` is parsed here to the letter of the W3C spec (exact field lengths, lowercase hex,
//! no all-zero ids, version `ff` refused, a later version may carry more fields): the SDK's
//! propagator accepts ids of any length, and an id that is not 32/16 hex digits must not become
//! the parent of our spans. `tracestate` is validated by the `opentelemetry` crate's
//! [`TraceState`]. `baggage` is carried as sent, when it is within the spec's 8192 bytes and
//! printable. Invalid values are ignored, as the spec says: no error, no trace context. Both are
//! kept as shared strings: a context is cloned per upstream request, and that clone must not
//! allocate.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName};
use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use serde_json::{Map, Value};

/// `params._meta` / header key of the trace parent.
pub const TRACEPARENT: &str = "traceparent";
/// `params._meta` / header key of vendor trace state.
pub const TRACESTATE: &str = "tracestate";
/// `params._meta` / header key of W3C baggage.
pub const BAGGAGE: &str = "baggage";
/// The same keys as header names, named once: a name given as `&str` is parsed at each lookup,
/// and the headers are looked at on every HTTP call.
const TRACEPARENT_HEADER: HeaderName = HeaderName::from_static(TRACEPARENT);
const TRACESTATE_HEADER: HeaderName = HeaderName::from_static(TRACESTATE);
const BAGGAGE_HEADER: HeaderName = HeaderName::from_static(BAGGAGE);
/// Longest `baggage` carried (the W3C limit).
pub const BAGGAGE_MAX: usize = 8192;
/// Longest `tracestate` read (32 members of at most 256 + 1 + 256 characters, and commas).
const TRACESTATE_MAX: usize = 32 * 514;

/// A trace context: the trace, the parent span in it, whether it is sampled, and what travels
/// with it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceContext {
    trace_id: TraceId,
    span_id: SpanId,
    sampled: bool,
    /// Validated, in its canonical form.
    tracestate: Option<Arc<str>>,
    baggage: Option<Arc<str>>,
}

/// `n` lowercase hex digits (and nothing else) as a number.
fn lower_hex(s: &str, n: usize) -> Option<u128> {
    if s.len() != n || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    u128::from_str_radix(s, 16).ok()
}

impl TraceContext {
    /// Parse a `traceparent` (and the `tracestate` and `baggage` that came with it); `None` when
    /// the `traceparent` is not valid (an invalid `tracestate` or `baggage` alone is dropped).
    #[must_use]
    pub fn parse(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Option<Self> {
        let tp = traceparent.trim_matches([' ', '\t']);
        // version-traceid-parentid-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
        let head = tp.get(..55)?;
        let version = u8::try_from(lower_hex(head.get(..2)?, 2)?).ok()?;
        match (version, tp.len()) {
            (0xff, _) => return None,
            (0, 55) => {}
            (0, _) => return None,
            // A later version: its first four fields read as version 00's; more follow a `-`.
            (_, 55) => {}
            (_, _) if tp.as_bytes().get(55) == Some(&b'-') => {}
            _ => return None,
        }
        let bytes = head.as_bytes();
        if bytes.get(2) != Some(&b'-')
            || bytes.get(35) != Some(&b'-')
            || bytes.get(52) != Some(&b'-')
        {
            return None;
        }
        let trace = lower_hex(head.get(3..35)?, 32)?;
        let span = u64::try_from(lower_hex(head.get(36..52)?, 16)?).ok()?;
        let flags = u8::try_from(lower_hex(head.get(53..55)?, 2)?).ok()?;
        if trace == 0 || span == 0 {
            return None;
        }
        let tracestate = tracestate
            .filter(|s| s.len() <= TRACESTATE_MAX)
            .and_then(|s| TraceState::from_str(s).ok())
            .map(|s| s.header())
            .filter(|s| !s.is_empty())
            .map(Arc::from);
        let baggage = baggage
            .map(|b| b.trim_matches([' ', '\t']))
            .filter(|b| {
                !b.is_empty()
                    && b.len() <= BAGGAGE_MAX
                    && b.bytes().all(|c| c == b'\t' || (0x20..0x7f).contains(&c))
            })
            .map(Arc::from);
        Some(Self {
            trace_id: TraceId::from(trace),
            span_id: SpanId::from(span),
            sampled: flags & 1 == 1,
            tracestate,
            baggage,
        })
    }

    /// The trace context of a request's `params._meta`, if it has a valid `traceparent`.
    #[must_use]
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let text = |key: &str| meta.get(key).and_then(Value::as_str);
        Self::parse(text(TRACEPARENT)?, text(TRACESTATE), text(BAGGAGE))
    }

    /// The trace context of an HTTP request's headers (several `tracestate` or `baggage`
    /// headers are one list, joined by commas, as HTTP says).
    #[must_use]
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let mut parents = headers.get_all(TRACEPARENT_HEADER).iter();
        let parent = parents.next()?.to_str().ok()?;
        if parents.next().is_some() {
            return None; // two traceparents: which one? The spec says neither.
        }
        let joined = |key: HeaderName| -> Option<String> {
            let parts: Vec<&str> = headers
                .get_all(key)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            (!parts.is_empty()).then(|| parts.join(","))
        };
        Self::parse(
            parent,
            joined(TRACESTATE_HEADER).as_deref(),
            joined(BAGGAGE_HEADER).as_deref(),
        )
    }

    /// The same trace and its companions, under another span.
    #[must_use]
    pub fn with_span(&self, span_id: SpanId, sampled: bool) -> Self {
        Self {
            span_id,
            sampled,
            ..self.clone()
        }
    }

    /// The context of a new span in this trace (a fresh random id): what goes upstream when
    /// the gateway carries the trace without exporting spans of its own.
    #[must_use]
    pub fn child(&self) -> Self {
        self.with_span(RandomIdGenerator::default().new_span_id(), self.sampled)
    }

    /// The trace.
    #[must_use]
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// The span this context points at (the parent of what comes next).
    #[must_use]
    pub fn span_id(&self) -> SpanId {
        self.span_id
    }

    /// Whether the trace is sampled (the `01` flag).
    #[must_use]
    pub fn is_sampled(&self) -> bool {
        self.sampled
    }

    /// The `traceparent` value: `00-{trace id}-{span id}-{flags}`.
    #[must_use]
    pub fn traceparent(&self) -> String {
        self.to_string()
    }

    /// The `tracestate` value, if one came with the trace.
    #[must_use]
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage` value, if one came with the trace.
    #[must_use]
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }

    /// Write `traceparent` (and `tracestate`, `baggage` when present) into an upstream request's
    /// `params._meta`, replacing what the client had put under those keys.
    pub fn write_meta(&self, meta: &mut Map<String, Value>) {
        meta.insert(TRACEPARENT.into(), Value::String(self.traceparent()));
        match &self.tracestate {
            Some(state) => meta.insert(TRACESTATE.into(), Value::String(state.to_string())),
            None => meta.remove(TRACESTATE),
        };
        match &self.baggage {
            Some(b) => meta.insert(BAGGAGE.into(), Value::String(b.to_string())),
            None => meta.remove(BAGGAGE),
        };
    }

    /// The context of a span of ours under `incoming`: its ids and sampling, `incoming`'s
    /// `tracestate` (which the SDK hands down unchanged; we add no entry) and `baggage`.
    pub(crate) fn from_span_context(sc: &SpanContext, incoming: Option<&Self>) -> Option<Self> {
        if !sc.is_valid() {
            return None;
        }
        Some(Self {
            trace_id: sc.trace_id(),
            span_id: sc.span_id(),
            sampled: sc.is_sampled(),
            tracestate: incoming.and_then(|i| i.tracestate.clone()),
            baggage: incoming.and_then(|i| i.baggage.clone()),
        })
    }

    /// This context as the remote parent of a span.
    pub(crate) fn span_context(&self) -> SpanContext {
        let flags = if self.sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        SpanContext::new(
            self.trace_id,
            self.span_id,
            flags,
            true,
            self.tracestate
                .as_deref()
                .and_then(|s| TraceState::from_str(s).ok())
                .unwrap_or_default(),
        )
    }
}

impl fmt::Display for TraceContext {
    /// The `traceparent` value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flags = u8::from(self.sampled);
        write!(f, "00-{}-{}-{flags:02x}", self.trace_id, self.span_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_round_trips() {
        let c = TraceContext::parse(TP, Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"), None);
        let c = c.expect("valid");
        assert_eq!(c.traceparent(), TP);
        assert_eq!(
            format!("{:032x}", c.trace_id()),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(c.is_sampled());
        assert_eq!(
            c.tracestate(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
        let child = c.child();
        assert_eq!(child.trace_id(), c.trace_id());
        assert_ne!(child.span_id(), c.span_id());
        assert_eq!(child.traceparent().len(), 55);
    }

    #[test]
    fn invalid_traceparents_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "0é-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
        ] {
            assert!(TraceContext::parse(bad, None, None).is_none(), "{bad:?}");
        }
        // A later version may carry more, after a dash.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        let c = TraceContext::parse(later, None, None).expect("later version");
        assert!(!c.is_sampled());
        assert!(c.traceparent().starts_with("00-"));
    }

    #[test]
    fn bad_companions_are_dropped_not_the_trace() {
        let c = TraceContext::parse(TP, Some("no equals sign"), Some("a=1\u{7}")).expect("valid");
        assert_eq!((c.tracestate(), c.baggage()), (None, None));
        let big = "k=".to_string() + &"v".repeat(BAGGAGE_MAX);
        let c = TraceContext::parse(TP, None, Some(&big)).expect("valid");
        assert_eq!(c.baggage(), None);
        let c = TraceContext::parse(TP, None, Some("userId=alice,isProduction=false"));
        assert_eq!(
            c.expect("valid").baggage(),
            Some("userId=alice,isProduction=false")
        );
    }

    #[test]
    fn meta_and_headers_are_read_and_meta_is_written() {
        let meta = serde_json::json!({"traceparent": TP, "baggage": "a=b", "other": 1});
        let meta = meta.as_object().cloned().unwrap_or_default();
        let c = TraceContext::from_meta(&meta).expect("from meta");
        let mut out = meta.clone();
        out.insert("tracestate".into(), "stale=1".into());
        c.child().write_meta(&mut out);
        assert_eq!(out["baggage"], "a=b");
        assert_eq!(out["other"], 1);
        assert!(out.get("tracestate").is_none());
        assert_ne!(out["traceparent"], TP);

        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, TP.parse().expect("header"));
        headers.append(TRACESTATE, "a=1".parse().expect("header"));
        headers.append(TRACESTATE, "b=2".parse().expect("header"));
        let c = TraceContext::from_headers(&headers).expect("from headers");
        assert_eq!(c.tracestate(), Some("a=1,b=2"));
        headers.append(TRACEPARENT, TP.parse().expect("header"));
        assert!(TraceContext::from_headers(&headers).is_none());
        assert!(TraceContext::from_meta(&Map::new()).is_none());
    }
}
