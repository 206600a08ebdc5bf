//! Raw JSON-RPC: request bytes built from a template, answers probed for only what the harness
//! needs (the id, and whether it is an error), and the run's budget and raw samples.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The protocol version the harness offers in `initialize` (every backend and gateway knows it).
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// One request, serialised once: `{"jsonrpc":"2.0","method":M,"params":P,"id":` + id + `}`.
#[derive(Debug, Clone)]
pub struct Template {
    prefix: Vec<u8>,
}

impl Template {
    /// A request of `method` with `params` (a JSON value).
    pub fn new(method: &str, params: &serde_json::Value) -> Self {
        let mut prefix = br#"{"jsonrpc":"2.0","method":"#.to_vec();
        // Writing JSON to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut prefix, method);
        prefix.extend_from_slice(br#","params":"#);
        let _ = serde_json::to_writer(&mut prefix, params);
        prefix.extend_from_slice(br#","id":"#);
        Self { prefix }
    }

    /// Append the request with `id` to `out` (no newline).
    pub fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(id.to_string().as_bytes());
        out.push(b'}');
    }

    /// The request with `id`, as its own buffer.
    pub fn build(&self, id: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + 24);
        self.write(id, &mut out);
        out
    }
}

/// The `initialize` request's params.
pub fn initialize_params() -> serde_json::Value {
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "pegboard-load", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// `notifications/initialized`, a whole message.
pub const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// What the harness reads of a message: everything else is skipped unparsed.
#[derive(Debug, Deserialize)]
struct Probe {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    result: Option<ResultProbe>,
}

#[derive(Debug, Deserialize)]
struct ResultProbe {
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

/// A message from the server, as far as the harness cares.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// The answer to request `id`; `Err` holds the error text (JSON-RPC error or `isError`).
    Answer(u64, Result<(), String>),
    /// A notification or a request from the server: not counted.
    Other,
}

/// Probe one message.
pub fn probe(bytes: &[u8]) -> anyhow::Result<Incoming> {
    let p: Probe = serde_json::from_slice(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the server sent something that is not JSON-RPC ({e}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        )
    })?;
    if p.method.is_some() {
        return Ok(Incoming::Other);
    }
    let Some(id) = p.id.as_ref().and_then(serde_json::Value::as_u64) else {
        return Ok(Incoming::Other);
    };
    let outcome = match (p.error, p.result) {
        (Some(e), _) => Err(e.to_string()),
        (
            None,
            Some(ResultProbe {
                is_error: Some(true),
            }),
        ) => Err("the tool answered isError: true".into()),
        (None, _) => Ok(()),
    };
    Ok(Incoming::Answer(id, outcome))
}

/// How long a run lasts: `warmup` calls (at most a quarter of `time`) not counted, then up to
/// `calls` calls or `time`, whichever first.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Calls made first and not measured.
    pub warmup: u64,
    /// At most this many measured calls.
    pub calls: u64,
    /// At most this long measuring.
    pub time: Duration,
}

/// The raw outcome of one measured run.
#[derive(Debug, Default)]
pub struct Samples {
    /// Each measured call's latency, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// Wall time of the measured part.
    pub elapsed: Duration,
    /// Calls that answered with an error.
    pub errors: u64,
    /// The first error's text.
    pub first_error: Option<String>,
    /// CPU time the front's process spent over the measured part, ns (see [`crate::cpu`]).
    pub cpu_ns: Option<u64>,
}

impl Samples {
    /// Record one answer sent at `sent` whose last byte was read at `arrived` (taken before the
    /// harness parses the answer: the client's own parse is not the server's latency, and for a
    /// 0.3 MB `tools/list` it would be most of the row).
    pub fn record(&mut self, sent: Instant, arrived: Instant, outcome: Result<(), String>) {
        let took = arrived.saturating_duration_since(sent);
        self.latencies_ns
            .push(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
        if let Err(e) = outcome {
            self.errors += 1;
            self.first_error.get_or_insert(e);
        }
    }
}
