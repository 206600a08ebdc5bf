//! A client of 2026-07-28 calling a tool of a server connected with an older protocol
//! (PASSTHROUGH.md §7, "Phase 2"). The server may send sampling or elicitation requests during
//! the call, and rmcp cannot send those to a 2026-07-28 client. So when the server asks, the
//! gateway moves the upstream call to a task of its own, parks it, and answers the client's call
//! with `input_required`: the server's requests, and a token as `requestState`. The client's
//! retry brings the token back with its answers, which go to the server's waiting requests; the
//! gateway then waits for the server's next request or its result. A call whose server asks
//! nothing is answered in place, as any other.
//!
//! The token is random (122 bits), single use, bound to the tool's name, and the whole call
//! (with the client's time to answer) stays within the call timeout: then the server's call is
//! cancelled and its waiting requests fail. Parked calls live in the gateway process, so a
//! client's retry must reach the same replica (`--stateless` does not bridge). The server's
//! progress notifications go to the first round's progress token.

use std::{collections::HashMap, sync::Arc};

#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    ErrorData, Peer, RoleClient, RoleServer, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ClientResult,
        CreateMessageRequest, ElicitRequest, ErrorCode, InputRequest, InputRequests,
        InputRequiredResult, ListRootsRequest, ProgressNotificationParam, ServerRequest,
        ServerResult,
    },
    service::{PeerRequestOptions, RequestContext, RequestHandle},
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{
    caller::Caller,
    mrtr,
    parked::{Answer, Event, Parked},
    route::Route,
};
use crate::{
    protocol::failure::{Deadline, Failure, upstream_failed},
    upstream::{
        Flight, OwnedFlightGuard,
        flights::Flights,
        sides::{Boxed, CallSide, Declared},
    },
};

/// What a bridged token's `requestState` starts with.
const TOKEN_PREFIX: &str = "pegboard-bridge:";

/// The client end of a bridged call: the server's requests become the client's next
/// `input_required` round; its progress goes to the first round's token.
#[derive(Debug)]
struct BridgeSide {
    events: mpsc::UnboundedSender<Event>,
    ended: CancellationToken,
    /// The first round's session, for progress.
    peer: Peer<RoleServer>,
}

impl BridgeSide {
    /// Hand the server's request to the client's call, and wait for the client's answer.
    async fn ask_input(&self, request: InputRequest, method: &str) -> Result<Value, ErrorData> {
        let (answer, answered) = oneshot::channel();
        let gone = || {
            ErrorData::internal_error(
                format!(
                    "the client did not answer {method}: its call through pegboard ended, was \
                     cancelled or timed out before it answered"
                ),
                None,
            )
        };
        self.events
            .send(Event::Asked(request, answer))
            .map_err(|_| gone())?;
        tokio::select! {
            value = answered => value.map_err(|_| gone())?,
            () = self.ended.cancelled() => Err(gone()),
        }
    }
}

impl CallSide for BridgeSide {
    fn declared(&self) -> Declared {
        // A 2026-07-28 client declares its capabilities per request: checked in `round`.
        Declared::PerRequest
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn ask(&self, request: ServerRequest) -> Boxed<'_, Result<ClientResult, ErrorData>> {
        Box::pin(async move {
            let (input, method) = match request {
                ServerRequest::CreateMessageRequest(r) => (
                    InputRequest::CreateMessage(CreateMessageRequest::new(r.params)),
                    "sampling/createMessage",
                ),
                ServerRequest::ElicitRequest(r) => (
                    InputRequest::Elicitation(ElicitRequest::new(r.params)),
                    "elicitation/create",
                ),
                ServerRequest::ListRootsRequest(_) => (
                    InputRequest::ListRoots(ListRootsRequest::default()),
                    "roots/list",
                ),
                _ => {
                    return Err(ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "pegboard cannot pass this request to a 2026-07-28 client",
                        None,
                    ));
                }
            };
            let answer = self.ask_input(input, method).await?;
            let parsed = match method {
                "sampling/createMessage" => serde_json::from_value(answer)
                    .map(|r| ClientResult::CreateMessageResult(Box::new(r))),
                "elicitation/create" => {
                    serde_json::from_value(answer).map(ClientResult::ElicitResult)
                }
                _ => serde_json::from_value(answer).map(ClientResult::ListRootsResult),
            };
            parsed.map_err(|e| {
                ErrorData::invalid_params(
                    format!("the client's answer to {method} is not a {method} result: {e}"),
                    None,
                )
            })
        })
    }

    fn progress(&self, progress: ProgressNotificationParam) -> Boxed<'_, ()> {
        Box::pin(async move {
            if let Err(e) = self.peer.notify_progress(progress).await {
                tracing::debug!("could not forward progress downstream: {e}");
            }
        })
    }
}

/// Whether `request_state` is one of the bridge's tokens.
pub(crate) fn is_token(request_state: Option<&str>) -> bool {
    request_state.is_some_and(|state| state.starts_with(TOKEN_PREFIX))
}

/// Call the tool upstream and wait for its answer in place; if the server asks first, move the
/// call to a task of its own and serve the first round.
pub(crate) async fn call(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    deadline: Deadline,
) -> Result<CallToolResponse, Failure> {
    let (target, Some(hub)) = (&route.target, &route.hub) else {
        return Err(upstream_failed(
            &route.target,
            name,
            ServiceError::TransportClosed,
        ));
    };
    let (events, mut receiver) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let side = BridgeSide {
        events: events.clone(),
        ended: cancel.clone(),
        peer: context.peer.clone(),
    };
    let flight = Flight::new(Arc::new(side), context.meta.get_progress_token());
    // Registered before it is sent: the server's requests find the call even if they come
    // back before rmcp returns the request's id.
    let pending = hub.flights().register_pending(flight);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let sent = target
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await;
    let mut handle = match sent {
        Ok(handle) => handle,
        Err(error) => {
            hub.flights().forget_pending(pending);
            return Err(upstream_failed(target, name, error));
        }
    };
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    let Some(guard) = Flights::bind_owned(hub.flights(), pending, &target.peer, id, token) else {
        return Err(upstream_failed(target, name, ServiceError::TransportClosed));
    };
    let first = tokio::select! {
        // Polled by hand (not `await_response`) so the handle can still move to a task.
        outcome = &mut handle.rx => {
            guard.finish();
            let outcome = outcome.unwrap_or(Err(ServiceError::TransportClosed));
            return done(route, name, outcome, deadline);
        }
        event = receiver.recv() => event,
        () = deadline.passed() => return Err(deadline.expired(route.namespace(), name)),
        // The guard tells the server.
        () = context.ct.cancelled() => return Err(Failure::Cancelled),
        () = caller.session_ended() => return Err(Failure::Cancelled),
    };
    tokio::spawn(wait_upstream(
        handle,
        guard,
        events,
        cancel.clone(),
        deadline,
    ));
    let parked = Parked {
        tool: name.to_string(),
        events: receiver,
        stashed: first,
        waiting: HashMap::new(),
        next_key: 0,
        deadline,
        _cancel: cancel.drop_guard(),
    };
    round(route, name, parked, context, caller).await
}

/// The rest of a parked call upstream: its answer, or its end at the call timeout or when the
/// client's side drops it (then the guard tells the server).
async fn wait_upstream(
    handle: RequestHandle<RoleClient>,
    guard: OwnedFlightGuard,
    events: mpsc::UnboundedSender<Event>,
    ended: CancellationToken,
    deadline: Deadline,
) {
    let event = tokio::select! {
        outcome = handle.await_response() => {
            guard.finish();
            Event::Done(outcome)
        }
        () = deadline.passed() => Event::Expired,
        () = ended.cancelled() => return,
    };
    let _ = events.send(event);
    // The server's requests still waiting fail now.
    ended.cancel();
}

fn done(
    route: &Route,
    name: &str,
    outcome: Result<ServerResult, ServiceError>,
    deadline: Deadline,
) -> Result<CallToolResponse, Failure> {
    match outcome {
        Ok(ServerResult::CallToolResult(result)) => Ok(result.into()),
        Ok(_) => Err(upstream_failed(
            &route.target,
            name,
            ServiceError::UnexpectedResponse,
        )),
        Err(ServiceError::Timeout { .. }) => Err(deadline.expired(route.namespace(), name)),
        Err(error) => Err(upstream_failed(&route.target, name, error)),
    }
}

/// A retry that brings a bridge token back: the client's answers go to the server's waiting
/// requests (one it did not answer fails), then the next round.
pub(crate) async fn resume(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<CallToolResponse, Failure> {
    let token = params.request_state.as_deref().unwrap_or_default();
    let Some(mut parked) = caller.bridges.unpark(token) else {
        return Err(Failure::Unanswered(format!(
            "pegboard has no call of '{name}' waiting for this input: it was answered already, \
             timed out, or went to another pegboard; call the tool again"
        )));
    };
    if parked.tool != name {
        return Err(Failure::Unanswered(format!(
            "this input was asked for '{}', not '{name}'; call the tool again",
            parked.tool
        )));
    }
    let mut answers = params.input_responses.unwrap_or_default();
    for (key, waiting) in std::mem::take(&mut parked.waiting) {
        if let Some(answer) = answers.remove(&key) {
            let _ = waiting.send(Ok(answer));
        }
    }
    round(route, name, parked, context, caller).await
}

/// Wait for the server's next requests or its result, for the client's current round.
async fn round(
    route: &Route,
    name: &str,
    mut parked: Parked,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<CallToolResponse, Failure> {
    let first = match parked.stashed.take() {
        Some(event) => Some(event),
        None => tokio::select! {
            event = parked.events.recv() => event,
            // Dropping `parked` cancels the server's call.
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
            () = caller.session_ended() => return Err(Failure::Cancelled),
        },
    };
    let (request, answer) = match first {
        Some(Event::Asked(request, answer)) => (request, answer),
        Some(Event::Done(outcome)) => return done(route, name, outcome, parked.deadline),
        Some(Event::Expired) | None => {
            return Err(parked.deadline.expired(route.namespace(), name));
        }
    };
    let capabilities = context.client_capabilities();
    let mut requests = InputRequests::new();
    let mut add = |parked: &mut Parked, request: InputRequest, answer: Answer| {
        if !mrtr::client_can(capabilities.as_ref(), &request) {
            // As a client of an older protocol that did not declare it is answered.
            let method = mrtr::method(&request);
            let _ = answer.send(Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("the client calling through pegboard did not declare support for {method}"),
                None,
            )));
            return;
        }
        let key = format!("pb-{}", parked.next_key);
        parked.next_key += 1;
        parked.waiting.insert(key.clone(), answer);
        requests.insert(key, request);
    };
    add(&mut parked, request, answer);
    // Requests the server sent at once go in the same round.
    while let Ok(event) = parked.events.try_recv() {
        match event {
            Event::Asked(request, answer) => add(&mut parked, request, answer),
            other => {
                parked.stashed = Some(other);
                break;
            }
        }
    }
    if requests.is_empty() {
        // Nothing this client can answer: the server goes on (or fails) without it.
        return Box::pin(round(route, name, parked, context, caller)).await;
    }
    let token = format!("{TOKEN_PREFIX}{}", uuid::Uuid::new_v4().simple());
    caller.bridges.park(token.clone(), parked);
    Ok(InputRequiredResult::new(Some(requests), Some(token)).into())
}
