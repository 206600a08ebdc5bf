//! One record as one line of JSON (no newline inside: every string is escaped).

use std::borrow::Cow;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;

use super::canonical;
use super::record::{AuditArguments, AuditRecord};

/// Arguments larger than this (compact JSON) are logged by hash and size in `full` mode.
pub(crate) const FULL_ARGUMENTS_LIMIT: usize = 64 * 1024;

/// What the log keeps of a call's arguments (`--audit-arguments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgumentsMode {
    /// Nothing (the default).
    #[default]
    Off,
    /// `arguments`: the SHA-256 (hex) of their canonical JSON.
    Hash,
    /// `arguments`: the arguments themselves (above 64 KiB: `arguments_sha256` and
    /// `arguments_bytes` instead).
    Full,
}

#[derive(Serialize)]
struct Line<'a> {
    ts: String,
    client: &'a str,
    session: Option<&'a str>,
    method: &'a str,
    name: &'a str,
    server: Option<&'a str>,
    outcome: &'static str,
    ms: f64,
    bytes_in: u64,
    bytes_out: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<Cow<'a, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments_bytes: Option<usize>,
}

/// Append `record` as one line (with its `\n`) to `out`.
pub(crate) fn write(record: &AuditRecord, mode: ArgumentsMode, out: &mut Vec<u8>) {
    let ts = DateTime::<Utc>::from(record.at).to_rfc3339_opts(SecondsFormat::Millis, true);
    let mut line = Line {
        ts,
        client: &record.client,
        session: record.session.as_deref(),
        method: &record.method,
        name: &record.name,
        server: record.server.as_deref(),
        outcome: record.outcome.as_str(),
        // Microsecond precision.
        ms: (record.elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        bytes_in: record.bytes_in,
        bytes_out: record.bytes_out,
        via: record.via,
        arguments: None,
        arguments_sha256: None,
        arguments_bytes: None,
    };
    let parsed = match (&record.arguments, mode) {
        (_, ArgumentsMode::Off) | (None, _) => None,
        (Some(AuditArguments::Value(v)), _) => Some(Cow::Borrowed(&**v)),
        (Some(AuditArguments::Raw(bytes)), _) => Some(Cow::Owned(
            serde_json::from_slice(bytes)
                // Not JSON: logged (and hashed) as the text it is.
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned())),
        )),
    };
    if let Some(args) = parsed {
        match mode {
            ArgumentsMode::Hash => {
                line.arguments = Some(Cow::Owned(Value::String(canonical::sha256_hex(&args))));
            }
            ArgumentsMode::Full => {
                let mut compact = Vec::new();
                canonical::write(&args, &mut compact);
                if compact.len() > FULL_ARGUMENTS_LIMIT {
                    line.arguments_sha256 = Some(canonical::sha256_hex(&args));
                    line.arguments_bytes = Some(compact.len());
                } else {
                    line.arguments = Some(args);
                }
            }
            ArgumentsMode::Off => {}
        }
    }
    // A struct of strings and numbers always serialises.
    let _ = serde_json::to_writer(&mut *out, &line);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use bytes::Bytes;
    use serde_json::json;

    use super::super::record::Outcome;
    use super::*;

    fn record() -> AuditRecord {
        let mut r = AuditRecord::new(
            "ci-bot".into(),
            "tools/call",
            "units-convert".into(),
            UNIX_EPOCH + Duration::from_millis(1_767_225_600_123),
        );
        r.session = Some("s-1".into());
        r.server = Some("units".into());
        r.outcome = Outcome::ToolError;
        r.elapsed = Duration::from_micros(12_345);
        r.bytes_in = 40;
        r.bytes_out = 120;
        r
    }

    fn parse(out: &[u8]) -> Value {
        let text = std::str::from_utf8(out).unwrap();
        assert!(
            text.ends_with('\n') && text.matches('\n').count() == 1,
            "{text:?}"
        );
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_line_has_every_field_and_no_arguments_by_default() {
        let mut out = Vec::new();
        let mut r = record();
        r.arguments = Some(AuditArguments::Value(Arc::new(json!({"a": 1}))));
        write(&r, ArgumentsMode::Off, &mut out);
        assert_eq!(
            parse(&out),
            json!({
                "ts": "2026-01-01T00:00:00.123Z", "client": "ci-bot", "session": "s-1",
                "method": "tools/call", "name": "units-convert", "server": "units",
                "outcome": "tool_error", "ms": 12.345, "bytes_in": 40, "bytes_out": 120
            })
        );
    }

    #[test]
    fn hash_mode_logs_the_canonical_hash_of_raw_or_parsed_arguments() {
        let mut a = Vec::new();
        let mut r = record();
        r.arguments = Some(AuditArguments::Raw(Bytes::from_static(
            b"{ \"to\": \"km\",\n \"from\": \"mi\" }",
        )));
        write(&r, ArgumentsMode::Hash, &mut a);
        let mut b = Vec::new();
        r.arguments = Some(AuditArguments::Value(Arc::new(
            json!({"from": "mi", "to": "km"}),
        )));
        write(&r, ArgumentsMode::Hash, &mut b);
        let (a, b) = (parse(&a), parse(&b));
        assert_eq!(a["arguments"], b["arguments"]);
        assert_eq!(
            a["arguments"],
            json!(canonical::sha256_hex(&json!({"from": "mi", "to": "km"})))
        );
    }

    #[test]
    fn full_mode_logs_arguments_on_one_line_and_large_ones_by_hash() {
        let mut out = Vec::new();
        let mut r = record();
        r.arguments = Some(AuditArguments::Raw(Bytes::from_static(
            b"{\"text\": \"two\\nlines\"}",
        )));
        write(&r, ArgumentsMode::Full, &mut out);
        assert_eq!(parse(&out)["arguments"], json!({"text": "two\nlines"}));

        let big = json!({"blob": "x".repeat(FULL_ARGUMENTS_LIMIT)});
        r.arguments = Some(AuditArguments::Value(Arc::new(big.clone())));
        out.clear();
        write(&r, ArgumentsMode::Full, &mut out);
        let line = parse(&out);
        assert!(line.get("arguments").is_none());
        assert_eq!(line["arguments_sha256"], json!(canonical::sha256_hex(&big)));
        assert!(line["arguments_bytes"].as_u64().unwrap() > FULL_ARGUMENTS_LIMIT as u64);
    }

    #[test]
    fn absent_session_and_server_are_null_and_names_with_newlines_stay_on_one_line() {
        let mut out = Vec::new();
        let mut r = AuditRecord::new(
            "a".into(),
            "resources/read",
            "docs+file:///x\ny".into(),
            SystemTime::now(),
        );
        r.outcome = Outcome::Denied;
        write(&r, ArgumentsMode::Hash, &mut out);
        let line = parse(&out);
        assert_eq!(line["session"], Value::Null);
        assert_eq!(line["server"], Value::Null);
        assert_eq!(line["name"], json!("docs+file:///x\ny"));
        assert!(line.get("arguments").is_none(), "no arguments given");
    }
}
