//! [`run`]: one script, from its code to its [`RunOutcome`]. The script runs on a thread of its
//! own (engine.rs); this future runs its tool calls (at most `maxParallel` at once, the rest in
//! order of asking) and hands their replies back. Dropping the future cancels the run and its
//! calls in flight.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use crate::engine::{self, Ended, Job, Reply, Request};
use crate::host::{CallRecord, ToolHost, ToolReply};
use crate::limits::{Limits, THREAD_STACK};
use crate::names::tool_paths;
use crate::outcome::{RunError, RunOutcome};

/// How long past its deadline a run's thread may take to notice it before the run is answered
/// without it (the thread stops on its own at its next instruction or wait).
const GRACE: Duration = Duration::from_secs(1);

/// Sets the run's cancel flag when the run's future ends or is dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Run `code` (the body of an async function: `await` and `return` work at its top level)
/// against `host`'s tools within `limits`.
pub async fn run(code: &str, host: &dyn ToolHost, limits: &Limits) -> RunOutcome {
    let layout: Vec<_> = tool_paths(&host.tools())
        .into_iter()
        .filter_map(|(_, path)| path)
        .collect();
    let layout = match serde_json::to_string(&layout) {
        Ok(layout) => layout,
        Err(e) => return failed(RunError::Start(e.to_string())),
    };
    let (requests, mut asked) = tokio::sync::mpsc::unbounded_channel();
    let (replies, replies_rx) = std::sync::mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let _cancel = CancelOnDrop(Arc::clone(&cancel));
    let deadline = Instant::now() + Duration::from_secs(limits.timeout_secs);
    let job = Job {
        code: code.to_string(),
        layout,
        limits: limits.clone(),
        deadline,
        requests,
        replies: replies_rx,
        cancel: Arc::clone(&cancel),
    };
    let (done, mut ended) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("pegboard-code".to_string())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let _ = done.send(engine::execute(job));
        });
    if let Err(e) = spawned {
        return failed(RunError::Start(format!("no thread for the script: {e}")));
    }
    let backstop = tokio::time::sleep_until((deadline + GRACE).into());
    tokio::pin!(backstop);
    let mut queue: VecDeque<Request> = VecDeque::new();
    let mut running = FuturesUnordered::new();
    let mut calls = Vec::new();
    let end = loop {
        while running.len() < limits.max_parallel {
            let Some(request) = queue.pop_front() else {
                break;
            };
            running.push(one_call(host, request));
        }
        tokio::select! {
            end = &mut ended => break end.unwrap_or_else(|_| Ended {
                result: Err(RunError::Start("the script's thread ended without an answer".to_string())),
                log: String::new(),
                log_truncated: false,
            }),
            Some(request) = asked.recv() => queue.push_back(request),
            Some((id, record, envelope)) = running.next(), if !running.is_empty() => {
                host.finished(&record, calls.len() + 1).await;
                calls.push(record);
                // The thread may be gone (its run ended): then nobody waits for this reply.
                let _ = replies.send(Reply { id, envelope });
            }
            () = &mut backstop => {
                cancel.store(true, Ordering::Relaxed);
                break Ended {
                    result: Err(RunError::Timeout { secs: limits.timeout_secs }),
                    log: String::new(),
                    log_truncated: false,
                };
            }
        }
    };
    RunOutcome {
        result: end.result,
        log: end.log,
        log_truncated: end.log_truncated,
        calls,
    }
}

/// One call through the host: its id, its record, the envelope for the script.
async fn one_call(host: &dyn ToolHost, request: Request) -> (u64, CallRecord, String) {
    let started = Instant::now();
    let reply = match serde_json::from_str::<serde_json::Value>(&request.arguments) {
        Ok(arguments) => host.call(&request.name, arguments).await,
        Err(e) => ToolReply::Error(format!("the arguments are not JSON: {e}")),
    };
    let (ok, envelope) = match reply {
        ToolReply::Value(value) => (true, serde_json::json!({"ok": true, "value": value})),
        ToolReply::Error(error) => (false, serde_json::json!({"ok": false, "error": error})),
    };
    let record = CallRecord::new(request.name, started.elapsed(), ok);
    (request.id, record, envelope.to_string())
}

fn failed(error: RunError) -> RunOutcome {
    RunOutcome {
        result: Err(error),
        log: String::new(),
        log_truncated: false,
        calls: Vec::new(),
    }
}
