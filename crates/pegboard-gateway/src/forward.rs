//! `tools/call` forwarded upstream with the downstream call's context: its progress token, its
//! cancellation, and the session that must answer the server's requests during the call
//! (PASSTHROUGH.md §1.3, §2). An `input_required` answer (2026-07-28) goes back to a client that
//! speaks 2026-07-28 as it is, and is answered by the gateway for an older one (see `mrtr.rs`).

use std::sync::Arc;

use pegboard::{PegBoard, PegBoardError, ToolTarget};
use rmcp::{
    RoleServer, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
        ContentBlock, ServerResult,
    },
    service::{PeerRequestOptions, RequestContext},
};
use tokio::time::Instant;

use crate::{
    bridge,
    downstream::Session,
    mrtr, tasks,
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
    /// The server needs the client's input (`input_required`) and the gateway could not get it
    /// (why, for the caller).
    Unanswered(String),
}

impl From<PegBoardError> for Failure {
    fn from(e: PegBoardError) -> Self {
        Self::Board(e)
    }
}

/// Call `name` upstream with `request` (its arguments, and a 2026-07-28 retry's
/// `inputResponses` and `requestState`) on behalf of the downstream request in `context`;
/// resource URIs in the result are namespaced as the board shows them (PASSTHROUGH.md §3).
/// `session` is the caller's (`None` with `--stateless`: it cannot be asked anything, and a
/// per-client server serves it on its shared connection).
pub(crate) async fn call_tool(
    board: &PegBoard,
    name: &str,
    mut request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    session: Option<&Session>,
) -> Result<CallToolResponse, Failure> {
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
    request.name = String::from(target.original.as_str()).into();
    // The downstream's `_meta` is its own lifecycle's; rmcp adds the upstream's.
    request.meta = None;
    let mut response = match hub {
        // A 2026-07-28 client's answers to a server of an older protocol (see `bridge.rs`).
        Some(hub) if bridge::is_token(request.request_state.as_deref()) => {
            bridge::resume(&target, &hub, name, request, context).await?
        }
        hub => call_target(&target, hub, name, request, context, can_ask).await?,
    };
    if let CallToolResponse::Complete(result) = &mut response
        && let Some(ns) = &target.namespace
        && carries_uris(result)
    {
        pegboard::uri::encode_call_result(result, &pegboard::uri::alias(ns));
    }
    Ok(response)
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
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
) -> Result<CallToolResponse, Failure> {
    let deadline = target.timeout.map(|after| Instant::now() + after);
    // Which protocol generation each side speaks: where they differ, the server's requests
    // during the call take another way (see `mrtr.rs`, `bridge.rs`).
    let upstream_2026 = mrtr::upstream_speaks_2026(target, hub.as_deref());
    let client_2026 = mrtr::client_speaks_2026(context);
    if upstream_2026 && !client_2026 {
        return mrtr::drive(target, hub.as_deref(), name, params, context, can_ask).await;
    }
    let Some(hub) = hub else {
        return send(target, None, name, params, context, can_ask, deadline).await;
    };
    // A 2026-07-28 client on a server of an older protocol: the server's requests during the
    // call come back to the client as `input_required` (see `bridge.rs`).
    let bridged = client_2026 && !upstream_2026 && can_ask;
    let up = &hub;
    let one = |params| async move {
        if bridged {
            bridge::call(target, up, name, params, context).await
        } else {
            send(target, Some(up), name, params, context, can_ask, deadline).await
        }
    };
    if hub.is_plain(&target.original) {
        // The hot path: no copy of the arguments, no task check.
        return one(params).await;
    }
    if hub.needs_task(&target.original) {
        return tasks::run(target, &hub, name, params, context)
            .await
            .map(Into::into);
    }
    // First calls of a tool: keep the arguments in case it turns out to require a task.
    let outcome = one(params.clone()).await?;
    let CallToolResponse::Complete(result) = &outcome else {
        // `input_required` for a 2026-07-28 client: a tool that asks for input is no task tool.
        hub.mark_plain(&target.original);
        return Ok(outcome);
    };
    if tasks::requires_task(result) {
        hub.mark_task_tool(&target.original);
        return tasks::run(target, &hub, name, params, context)
            .await
            .map(Into::into);
    }
    if result.is_error != Some(true) {
        hub.mark_plain(&target.original);
    }
    Ok(outcome)
}

/// Why the server of `target` gave no result for `name`, as the board words it.
pub(crate) fn upstream_failed(target: &ToolTarget, name: &str, source: ServiceError) -> Failure {
    let namespace = target.namespace.as_deref().map(str::to_string);
    match source {
        ServiceError::TransportClosed => PegBoardError::ServiceClosed { namespace },
        source => PegBoardError::ServiceError {
            tool: name.to_string(),
            namespace,
            source,
        },
    }
    .into()
}

/// The board's call timeout as it reads in errors.
fn timed_out(target: &ToolTarget, name: &str) -> Failure {
    PegBoardError::Timeout {
        operation: name.to_string(),
        namespace: target.namespace.as_deref().map(str::to_string),
        after: target.timeout.unwrap_or_default(),
    }
    .into()
}

/// Send one `tools/call` upstream and wait for its answer until `deadline`: a result, or an
/// `input_required` for the caller to handle (matched from the answer rmcp parsed anyway, so a
/// plain result costs nothing more).
pub(crate) async fn send(
    target: &ToolTarget,
    hub: Option<&Hub>,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
    deadline: Option<Instant>,
) -> Result<CallToolResponse, Failure> {
    let service_error = |source: ServiceError| upstream_failed(target, name, source);
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
    let outcome = match deadline {
        None => tokio::select! {
            r = response => r,
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
        },
        Some(deadline) => tokio::select! {
            r = tokio::time::timeout_at(deadline, response) => {
                r.map_err(|_| timed_out(target, name))?
            }
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
        },
    };
    // Answered (or failed): nothing to cancel upstream.
    if let Some(guard) = guard {
        guard.finish();
    }
    match outcome.map_err(service_error)? {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(asked) => Ok(CallToolResponse::InputRequired(asked)),
        other => {
            tracing::debug!(?other, "upstream answered tools/call with another result");
            Err(service_error(ServiceError::UnexpectedResponse))
        }
    }
}
