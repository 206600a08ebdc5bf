//! 2025-11-25 task-requiring tools (`execution.taskSupport: "required"`, SEP-1686), run by the
//! gateway: rmcp 3.11's model cannot carry `execution` or a legacy `task` parameter, so the
//! downstream client sees a plain tool and the gateway drives the task upstream with raw
//! requests, returning its result as a plain `CallToolResult` (PASSTHROUGH.md §7, §11).

use std::time::Duration;

use pegboard::PegBoardError;
use rmcp::{
    Peer, RoleClient, RoleServer, ServiceError,
    model::{
        CallToolRequestParams, CallToolResult, ClientRequest, CustomRequest,
        ProgressNotificationParam, ServerResult,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use super::{caller::Caller, route::Route};
use crate::protocol::failure::{Deadline, Failure};

/// How long a task the gateway creates lives upstream.
const TASK_TTL_MS: u64 = 60_000;
/// Bounds on the server's poll interval (it may give none, or an unreasonable one).
const MIN_POLL: Duration = Duration::from_millis(50);
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MAX_POLL: Duration = Duration::from_secs(5);

/// Whether a plain call's answer says the tool must be called as a task (the TS SDK answers
/// with an error result whose text says "requires task augmentation").
pub(crate) fn requires_task(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
        && result.content.iter().any(|c| {
            c.as_text()
                .is_some_and(|t| t.text.contains("requires task augmentation"))
        })
}

fn failed(route: &Route, name: &str, message: String) -> Failure {
    Failure::Board(PegBoardError::ServiceError {
        tool: name.to_string(),
        namespace: route.namespace().map(str::to_string),
        source: ServiceError::McpError(rmcp::ErrorData::internal_error(message, None)),
    })
}

async fn raw(peer: &Peer<RoleClient>, method: &str, params: Value) -> Result<Value, ServiceError> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let result = peer.send_request(request).await?;
    serde_json::to_value(result).map_err(|_| ServiceError::UnexpectedResponse)
}

/// Create the task upstream, poll it to its end (status messages become progress), and return
/// its result, all within the call's deadline. A downstream cancel, the end of the caller's
/// session or the deadline cancel the task.
pub(crate) async fn run(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    deadline: Deadline,
) -> Result<CallToolResult, Failure> {
    let peer = &route.target.peer;
    let task_id = std::sync::Mutex::new(None::<String>);
    let driven = drive(route, name, params, context, &task_id);
    let outcome = tokio::select! {
        outcome = deadline.run(driven) => outcome.unwrap_or_else(|| Err(deadline.expired(route.namespace(), name))),
        () = context.ct.cancelled() => Err(Failure::Cancelled),
        () = caller.session_ended() => Err(Failure::Cancelled),
    };
    if outcome.is_err() {
        let created = task_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(task_id) = created {
            let _ = raw(peer, "tasks/cancel", json!({"taskId": task_id})).await;
        }
    }
    outcome
}

/// The task's life upstream: created, polled, its result fetched (`task_id` holds its id once
/// created, for a cancel).
async fn drive(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    task_id: &std::sync::Mutex<Option<String>>,
) -> Result<CallToolResult, Failure> {
    let peer = &route.target.peer;
    let wrap = |e: ServiceError| {
        Failure::Board(PegBoardError::ServiceError {
            tool: name.to_string(),
            namespace: route.namespace().map(str::to_string),
            source: e,
        })
    };
    let created = raw(
        peer,
        "tools/call",
        json!({"name": params.name, "arguments": params.arguments, "task": {"ttl": TASK_TTL_MS}}),
    )
    .await
    .map_err(wrap)?;
    let Some(id) = created["task"]["taskId"].as_str().map(str::to_string) else {
        return Err(failed(
            route,
            name,
            format!("the server created no task: {created}"),
        ));
    };
    *task_id
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.clone());
    let poll = |v: &Value| {
        v["task"]["pollInterval"]
            .as_u64()
            .or_else(|| v["pollInterval"].as_u64())
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(MIN_POLL, MAX_POLL)
    };
    let mut interval = poll(&created);
    let ds_token = context.meta.get_progress_token();
    let mut step = 0.0;
    loop {
        tokio::time::sleep(interval).await;
        let status = raw(peer, "tasks/get", json!({"taskId": id}))
            .await
            .map_err(wrap)?;
        let task = if status["task"].is_object() {
            &status["task"]
        } else {
            &status
        };
        if let (Some(token), Some(message)) = (&ds_token, task["statusMessage"].as_str()) {
            step += 1.0;
            let mut progress = ProgressNotificationParam::new(token.clone(), step);
            progress.message = Some(message.to_string());
            let _ = context.peer.notify_progress(progress).await;
        }
        match task["status"].as_str() {
            Some("working" | "input_required") | None => interval = poll(&status),
            Some(_) => break,
        }
    }
    let result = peer
        .send_request(ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({"taskId": id})),
        )))
        .await
        .map_err(wrap)?;
    match result {
        ServerResult::CallToolResult(result) => Ok(result),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| serde_json::from_value::<CallToolResult>(v).ok())
            .ok_or_else(|| failed(route, name, "the task's result is not a tool result".into())),
    }
}
