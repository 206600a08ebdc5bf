//! `tools/call` forwarded upstream with the downstream call's context: its progress token, its
//! cancellation, and the session that must answer the server's requests during the call
//! (PASSTHROUGH.md §1.3, §2).

use std::sync::Arc;

use pegboard::{PegBoard, PegBoardError, ToolTarget};
use rmcp::{
    RoleServer, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock,
        JsonObject, ServerResult,
    },
    service::{PeerRequestOptions, RequestContext},
};

use crate::{
    downstream::Session,
    tasks,
    upstream::{Flight, Hub},
};

/// Why a forwarded call has no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The board refused or the upstream failed.
    Board(PegBoardError),
    /// The downstream client cancelled.
    Cancelled,
    /// A per-client server: the session's own connection could not be opened (why, for the caller).
    Open(String),
}

impl From<PegBoardError> for Failure {
    fn from(e: PegBoardError) -> Self {
        Self::Board(e)
    }
}

/// Call `request.name` upstream on behalf of the downstream request in `context`; resource URIs
/// in the result are namespaced as the board shows them (PASSTHROUGH.md §3). `session` is the
/// caller's (`None` with `--stateless`: it cannot be asked anything, and a per-client server
/// serves it on its shared connection).
pub(crate) async fn call_tool(
    board: &PegBoard,
    name: &str,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
    session: Option<&Session>,
) -> Result<CallToolResult, Failure> {
    let mut target = board.tool_target(name)?;
    let mut hub = target.extension.as_ref().and_then(|e| e.get::<Hub>());
    if let (Some(per_client), Some(session)) = (hub.as_ref().and_then(|h| h.per_client()), session)
    {
        let (peer, own) = session
            .own_connection(per_client)
            .await
            .map_err(Failure::Open)?;
        target.peer = peer;
        hub = Some(own);
    }
    let can_ask = session.is_some();
    let mut result = call_target(&target, hub, name, arguments, context, can_ask).await?;
    if let Some(ns) = &target.namespace
        && carries_uris(&result)
    {
        pegboard::uri::encode_call_result(&mut result, &pegboard::uri::alias(ns));
    }
    Ok(result)
}

/// Whether a result has a URI to namespace: most have none, and pay only this look.
pub(crate) fn carries_uris(result: &CallToolResult) -> bool {
    result.content.iter().any(|block| {
        matches!(
            block,
            ContentBlock::Resource(_) | ContentBlock::ResourceLink(_)
        )
    }) || result.meta.as_ref().is_some_and(|m| m.contains_key("ui"))
}

async fn call_target(
    target: &ToolTarget,
    hub: Option<Arc<Hub>>,
    name: &str,
    arguments: Option<JsonObject>,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
) -> Result<CallToolResult, Failure> {
    let mut params = CallToolRequestParams::new(String::from(target.original.as_str()));
    params.arguments = arguments;
    let Some(hub) = hub else {
        return send(target, None, name, params, context, can_ask).await;
    };
    if hub.is_plain(&target.original) {
        // The hot path: no copy of the arguments, no task check.
        return send(target, Some(&hub), name, params, context, can_ask).await;
    }
    if hub.needs_task(&target.original) {
        return tasks::run(target, &hub, name, params, context).await;
    }
    // First calls of a tool: keep the arguments in case it turns out to require a task.
    let outcome = send(target, Some(&hub), name, params.clone(), context, can_ask).await?;
    if tasks::requires_task(&outcome) {
        hub.mark_task_tool(&target.original);
        return tasks::run(target, &hub, name, params, context).await;
    }
    if outcome.is_error != Some(true) {
        hub.mark_plain(&target.original);
    }
    Ok(outcome)
}

async fn send(
    target: &ToolTarget,
    hub: Option<&Hub>,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
) -> Result<CallToolResult, Failure> {
    let namespace = || target.namespace.as_deref().map(str::to_string);
    let service_error = |source: ServiceError| match source {
        ServiceError::TransportClosed => PegBoardError::ServiceClosed {
            namespace: namespace(),
        },
        source => PegBoardError::ServiceError {
            tool: name.to_string(),
            namespace: namespace(),
            source,
        },
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = target
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(service_error)?;
    let guard = hub.map(|hub| {
        let flight = Flight::new(
            context.peer.clone(),
            context.id.clone(),
            context.meta.get_progress_token(),
            can_ask,
        );
        hub.flights().register(
            &target.peer,
            handle.id.clone(),
            handle.progress_token.clone(),
            flight,
        )
    });
    let response = handle.await_response();
    let outcome = match target.timeout {
        None => tokio::select! {
            r = response => r,
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
        },
        Some(after) => tokio::select! {
            r = tokio::time::timeout(after, response) => r.map_err(|_| PegBoardError::Timeout {
                operation: name.to_string(),
                namespace: namespace(),
                after,
            })?,
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
        },
    };
    // Answered (or failed): nothing to cancel upstream.
    if let Some(guard) = guard {
        guard.finish();
    }
    match outcome.map_err(service_error)? {
        ServerResult::CallToolResult(result) => Ok(result),
        other => Err(PegBoardError::ServiceError {
            tool: name.to_string(),
            namespace: namespace(),
            source: ServiceError::UnexpectedResponse,
        }
        .into())
        .inspect_err(|_| {
            tracing::debug!(?other, "upstream answered tools/call with another result")
        }),
    }
}
