//! How a call ends when its HTTP client goes (HTTP only): a dropped connection is no cancel
//! (the streamable-HTTP spec: "disconnection SHOULD NOT be interpreted as the client cancelling
//! its request"), so the call runs to its end upstream; the end of the session (`DELETE`) ends
//! its calls at once. The same on both paths. Each path gets a session of its own here.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::json;

use super::scenarios::{all_same, label};
use super::{Front, WAIT, http, paths};

/// How soon "at once" is: the server must hear of a deleted session's call within this (it
/// took 4 s before issue 20).
pub const AT_ONCE: Duration = Duration::from_secs(2);

/// A session on `gateway` whose `t-sleep` answered a plain call (so the next takes the lane).
async fn session(gateway: &super::Gateway) -> Result<http::Client> {
    let session = gateway.new_session().await?;
    let warm = json!({"jsonrpc": "2.0", "id": "warm", "method": "tools/call",
        "params": {"name": "t-sleep", "arguments": {"ms": 1}}});
    session.call(&warm).await?;
    Ok(session)
}

/// `t-sleep` for `ms`, as a request of id `id`.
fn sleep(id: &str, ms: u64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "t-sleep", "arguments": {"ms": ms}}})
}

/// A client whose connection drops mid-call: the call runs to its end upstream ("sleep
/// finished"), and the server hears no cancel.
///
/// "Mid-call" is checked: the connection must be gone sooner after the request was sent than the
/// server's sleep lasts (it started after that); if not (a slow machine), the same again with a
/// sleep four times as long.
pub async fn dropped_connection() -> Result<()> {
    let mut paths = paths(Front::Http).await?;
    for gateway in &mut paths.all {
        let session = session(gateway).await?;
        let mut ms = 800;
        loop {
            let (started, finished) = (
                gateway.logged("sleep started"),
                gateway.logged("sleep finished"),
            );
            let cancelled = gateway.logged("sleep cancelled by the client");
            let lane = gateway.lane_calls();
            let request = sleep(&format!("dropped-{ms}"), ms);
            let what = request["params"].clone();
            let sent = Instant::now();
            let call = {
                let session = session.clone();
                tokio::spawn(async move { session.call(&request).await })
            };
            gateway.wait_logged("sleep started", started + 1).await?;
            gateway.took_the_lane(lane, &what).await?;
            // The task reading the response ends: the response is dropped, its connection closed.
            call.abort();
            // Resolves once the task, and the response with it, has been dropped.
            let gone = call.await;
            let open = gone
                .as_ref()
                .is_err_and(tokio::task::JoinError::is_cancelled)
                && sent.elapsed() < Duration::from_millis(ms);
            let label = label(gateway, 2);
            gateway
                .wait_logged("sleep finished", finished + 1)
                .await
                .with_context(|| format!("{label}: a dropped connection ended the call"))?;
            ensure!(
                gateway.logged("sleep cancelled by the client") == cancelled,
                "{label}: a dropped connection was taken for a cancel"
            );
            if open {
                break;
            }
            eprintln!("{label}: the call may have ended before its client went; again, longer");
            ms *= 4;
            ensure!(ms <= 12_800, "{label}: the client never went mid-call");
        }
    }
    Ok(())
}

/// A session ended by `DELETE` mid-call: the server hears the cancel at once (within
/// [`AT_ONCE`]), and the `DELETE` and the call's response end the same way on every path.
pub async fn deleted_session() -> Result<()> {
    let mut paths = paths(Front::Http).await?;
    let mut seen = Vec::new();
    for gateway in &mut paths.all {
        let session = session(gateway).await?;
        let started = gateway.logged("sleep started");
        let cancelled = gateway.logged("sleep cancelled by the client");
        let lane = gateway.lane_calls();
        let request = sleep("deleted", 60_000);
        let what = request["params"].clone();
        let call = {
            let session = session.clone();
            tokio::spawn(async move { session.call(&request).await })
        };
        gateway.wait_logged("sleep started", started + 1).await?;
        gateway.took_the_lane(lane, &what).await?;
        let deleting = Instant::now();
        let deleted = session.delete().await?;
        let label = label(gateway, 2);
        gateway
            .wait_logged("sleep cancelled by the client", cancelled + 1)
            .await
            .with_context(|| format!("{label}: the server never heard the session end"))?;
        let took = deleting.elapsed();
        eprintln!("{label}: the server heard of the session's end {took:?} after the DELETE");
        ensure!(
            took <= AT_ONCE,
            "{label}: the server heard of the session's end {took:?} after the DELETE"
        );
        let ended = tokio::time::timeout(WAIT, call)
            .await
            .with_context(|| format!("{label}: the call's response did not end"))???;
        seen.push((
            label,
            json!({"delete": deleted.as_u16(), "status": ended.status, "kind": ended.kind,
                "answered": ended.answer.is_some()}),
        ));
    }
    all_same("a deleted session", &seen)
}
