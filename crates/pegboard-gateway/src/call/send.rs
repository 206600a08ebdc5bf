//! One `tools/call` sent upstream through rmcp and waited for: the leaf every typed way of
//! calling builds on (the plain call, the rounds of `input_required`, a first try before a task).

use std::sync::Arc;

use rmcp::{
    RoleServer, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ServerResult,
    },
    service::{PeerRequestOptions, RequestContext},
};

use super::{caller::Caller, route::Route};
use crate::{
    protocol::failure::{Deadline, Failure, upstream_failed},
    upstream::{
        Flight,
        sides::{CallSide, PeerSide},
    },
};

/// How one call waits: until its deadline, its client's cancel (`cancelled`), or the end of its
/// session — never because its client's connection dropped (the streamable-HTTP spec: a
/// disconnection is not a cancel).
pub(crate) struct Wait<'a, C> {
    /// The call's deadline.
    pub(crate) deadline: Deadline,
    /// Done when the client cancels the call.
    pub(crate) cancelled: C,
    /// The caller.
    pub(crate) caller: &'a Caller<'a>,
}

/// Send `params` as a `tools/call` on `route` and wait for the answer (`name`: the board name,
/// for errors): a result, or an `input_required` for the caller to handle (matched from the
/// answer rmcp parsed anyway, so a plain result costs nothing more). While it runs, the
/// server's progress and requests go to `side`, with progress under `progress` (the client's
/// token).
pub(crate) async fn send<C: Future<Output = ()>>(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    side: Arc<dyn CallSide>,
    progress: Option<rmcp::model::ProgressToken>,
    wait: Wait<'_, C>,
) -> Result<CallToolResponse, Failure> {
    let target = &route.target;
    let service_error = |source: ServiceError| upstream_failed(target, name, source);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = target
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(service_error)?;
    let guard = route.hub.as_ref().map(|hub| {
        hub.flights().register(
            &target.peer,
            handle.id.clone(),
            handle.progress_token.clone(),
            Flight::new(side, progress),
        )
    });
    // Biased: the branches in their order, no random pick per poll.
    let outcome = tokio::select! {
        biased;
        outcome = wait.deadline.run(handle.await_response()) => {
            outcome.ok_or_else(|| wait.deadline.expired(route.namespace(), name))?
        }
        // The guard, dropped unfinished, tells the server.
        () = wait.cancelled => return Err(Failure::Cancelled),
        () = wait.caller.session_ended() => return Err(Failure::Cancelled),
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

/// The client end of a call made through rmcp's session: the session's peer, tied to the
/// request being answered.
pub(crate) fn peer_side(
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Arc<dyn CallSide> {
    Arc::new(PeerSide::new(
        context.peer.clone(),
        context.id.clone(),
        caller.can_ask(),
    ))
}

/// One plain send on `route`, waiting as a call waits.
pub(crate) async fn send_plain(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    deadline: Deadline,
) -> Result<CallToolResponse, Failure> {
    let wait = Wait {
        deadline,
        cancelled: context.ct.cancelled(),
        caller,
    };
    let progress = context.meta.get_progress_token();
    send(
        route,
        name,
        params,
        peer_side(context, caller),
        progress,
        wait,
    )
    .await
}
