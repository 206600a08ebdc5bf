//! `run_code`'s answer: the returned value as JSON text and as `structuredContent`, the log,
//! the calls made; an error as an `isError` result with its message and position. And the
//! run's own audit line.

use std::time::{Instant, SystemTime};

use pegboard_codemode::{RunError, RunOutcome};
use rmcp::{
    RoleServer,
    model::{CallToolResult, ContentBlock as Content},
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::audit::{AuditRecord, Outcome};
use crate::server::BoardServer;

/// Calls named one by one in an error's text; more are counted.
const CALLS_SHOWN: usize = 20;

/// The answer to a run that ended with `outcome` (`None`: cancelled before it ended).
pub(crate) fn result(outcome: Option<&RunOutcome>) -> CallToolResult {
    let Some(outcome) = outcome else {
        return error_result(&RunError::Cancelled, "", &[]);
    };
    let log = if outcome.log_truncated {
        format!("{}\n[log cut at the output limit]", outcome.log)
    } else {
        outcome.log.clone()
    };
    match &outcome.result {
        Ok(text) => {
            let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let mut content = vec![Content::text(text.clone())];
            if !log.is_empty() {
                content.push(Content::text(format!("console:\n{log}")));
            }
            let mut result = CallToolResult::success(content);
            result.structured_content = Some(json!({
                "result": value,
                "log": log,
                "calls": outcome.calls,
            }));
            result
        }
        Err(error) => error_result(error, &log, &outcome.calls),
    }
}

fn error_result(
    error: &RunError,
    log: &str,
    calls: &[pegboard_codemode::CallRecord],
) -> CallToolResult {
    let mut text = format!("Error: {error}");
    if !calls.is_empty() {
        let shown: Vec<String> = calls
            .iter()
            .take(CALLS_SHOWN)
            .map(|c| format!("{} {}", c.name, if c.ok { "ok" } else { "failed" }))
            .collect();
        text.push_str(&format!("\nCalls made before it: {}", shown.join(", ")));
        if calls.len() > CALLS_SHOWN {
            text.push_str(&format!(" and {} more", calls.len() - CALLS_SHOWN));
        }
    }
    let mut content = vec![Content::text(text)];
    if !log.is_empty() {
        content.push(Content::text(format!("console:\n{log}")));
    }
    let mut result = CallToolResult::error(content);
    let position = error.position();
    result.structured_content = Some(json!({
        "error": {
            "kind": error.kind(),
            "message": error.to_string(),
            "line": position.map(|p| p.line),
            "column": position.map(|p| p.column),
        },
        "log": log,
        "calls": calls,
    }));
    result
}

/// The run's own audit line (its calls have theirs, marked `via: code`).
pub(crate) fn audit(
    server: &BoardServer,
    context: &RequestContext<RoleServer>,
    name: &str,
    (at, started): (SystemTime, Instant),
    bytes_in: usize,
    result: &CallToolResult,
    outcome: Option<&RunOutcome>,
) {
    let Some(log) = &server.hooks().audit else {
        return;
    };
    let client = server.client_of(context);
    let mut record = AuditRecord::new(client.name_arc().clone(), "tools/call", name.into(), at);
    record.outcome = match outcome.map(|o| &o.result) {
        None | Some(Err(RunError::Cancelled)) => Outcome::Cancelled,
        Some(Err(RunError::Timeout { .. })) => Outcome::Timeout,
        Some(Err(_)) => Outcome::ToolError,
        Some(Ok(_)) => Outcome::Ok,
    };
    record.elapsed = started.elapsed();
    record.bytes_in = u64::try_from(bytes_in).unwrap_or(u64::MAX);
    record.bytes_out = serde_json::to_vec(result).map_or(0, |json| json.len() as u64);
    record.session = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get(crate::protocol::headers::SESSION_HEADER))
        .and_then(|id| id.to_str().ok())
        .map(std::sync::Arc::from);
    log.record(record);
}
