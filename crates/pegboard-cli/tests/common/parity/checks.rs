//! "A test that fails if a check is skipped on one path" (issue 20): what rmcp's way refuses or
//! filters, the lane must refuse or filter too, and the test proves the lane carried the call.
//!
//! Why these fail if the lane skips a check. The lane carries a server's answer as bytes: a
//! result goes to the client as the server wrote it unless the lane reads it as rmcp's way does.
//! rmcp's way reads every answer into its typed `CallToolResult`, which refuses `{}` (no known
//! member), a content block of an unknown type and a `content` that is not an array; the client
//! then gets an error instead. A lane that skipped that reading would send `"result": {}` (or
//! the unknown block) verbatim, which [`malformed_results`] refuses twice over: the answer must
//! be an error, and it must equal `--no-express`'s. Progress: rmcp's way passes a notification
//! only when its value is above the last one's (the spec: progress MUST increase); a lane
//! without that gate passes the server's `2, 2, 1.5` as they come, and [`progress_gate`] sees
//! them in the client's list. Neither test can pass by sending the call rmcp's way instead: it
//! asks for the lane's own log line for every call it judges ([`Gateway::call_on_lane`]).
//!
//! [`Gateway::call_on_lane`]: super::Gateway::call_on_lane

use anyhow::Result;
use serde_json::json;

use super::scenarios::{Problems, label, twice};
use super::{Front, paths};

/// Call `t-malformed` with a valid answer twice on every path: the tool's first call learns it
/// answers plainly (a failed one would not), so the malformed ones that follow take the lane.
async fn learn_malformed(paths: &mut super::Paths, problems: &mut Problems) -> Result<()> {
    let valid = json!({"name": "t-malformed", "arguments": {"shape": "valid"}});
    for gateway in &mut paths.all {
        for (n, call) in twice(gateway, &valid).await?.into_iter().enumerate() {
            problems.check(call.text() == "valid", || {
                format!("{}: {:?}", label(gateway, n + 1), call.answer)
            });
        }
    }
    Ok(())
}

/// Results rmcp's typed way refuses (from the test server's `malformed` tool) are refused on
/// the lane too, with the same answer (but for `resultType`: see [`legacy_results`]).
pub async fn malformed_results(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    learn_malformed(&mut paths, &mut problems).await?;
    for shape in ["empty", "unknown-content", "content-not-array"] {
        let mut answers = Vec::new();
        for gateway in &mut paths.all {
            let call = gateway
                .call_on_lane(json!({"name": "t-malformed", "arguments": {"shape": shape}}))
                .await?;
            let label = label(gateway, 3);
            problems.check(
                !call.error().is_null() || call.result()["isError"] == json!(true),
                || {
                    format!(
                        "{label}: the server's {shape} result reached the client: {:?}",
                        call.answer
                    )
                },
            );
            answers.push((label, call.outcome_but_result_type()));
        }
        problems.same(&format!("a malformed result ({shape})"), &answers);
    }
    problems.done()
}

/// A client of a handshake-era protocol (2025-06-18 here) gets results without `resultType`
/// (a member of 2026-07-28) on every path: rmcp's way strips it for such a client, whoever made
/// the result; the lane must not add it to the results it makes itself (a server's refused
/// answer, a timeout).
pub async fn legacy_results(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    learn_malformed(&mut paths, &mut problems).await?;
    let mut seen = Vec::new();
    for gateway in &mut paths.all {
        let call = gateway
            .call_on_lane(json!({"name": "t-malformed", "arguments": {"shape": "empty"}}))
            .await?;
        let label = label(gateway, 3);
        problems.check(call.result().get("resultType").is_none(), || {
            format!("{label}: a 2025-06-18 client got {:?}", call.answer)
        });
        seen.push((label, call.outcome()));
    }
    problems.same("the answer to a refused result", &seen);
    problems.done()
}

/// Progress the server sends out of order (`1, 2, 2, 1.5, 3`, then 4 to 150: more than any
/// buffer of a few dozen) reaches the client increasing only, all of it, before the answer, on
/// every path.
pub async fn progress_gate(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let mut values: Vec<f64> = vec![1.0, 2.0, 2.0, 1.5, 3.0];
    values.extend((4..=150).map(f64::from));
    let want: Vec<f64> = (1..=150).map(f64::from).collect();
    let params = json!({"name": "t-progress", "arguments": {"values": values, "total": 150},
        "_meta": {"progressToken": "parity-gate"}});
    let mut seen = Vec::new();
    for gateway in &mut paths.all {
        for (n, call) in twice(gateway, &params).await?.into_iter().enumerate() {
            let label = label(gateway, n + 1);
            let got: Vec<f64> = call
                .progress()
                .iter()
                .filter(|p| p["progressToken"] == "parity-gate")
                .filter_map(|p| p["progress"].as_f64())
                .collect();
            problems.check(got == want, || {
                format!("{label}: the client got progress {got:?}, not 1..=150 once each")
            });
            problems.check(call.text() == format!("sent {}", values.len()), || {
                format!("{label}: {:?}", call.answer)
            });
            seen.push((label, call.outcome()));
        }
    }
    problems.same("progress out of order", &seen);
    problems.done()
}
