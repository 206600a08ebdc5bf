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
// Sampling is deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25, whose servers ask.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use pegboard::ToolTarget;
use rmcp::{
    ErrorData, RoleClient, RoleServer, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ErrorCode,
        InputRequest, InputRequests, InputRequiredResult, ServerResult,
    },
    service::{PeerRequestOptions, RequestContext, RequestHandle},
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::{
    forward::{self, Failure},
    mrtr,
    upstream::{Flight, Hub, OwnedFlightGuard, flights::Flights},
};

/// What a bridged token's `requestState` starts with.
const TOKEN_PREFIX: &str = "pegboard-bridge:";

/// The client's answer to one of the server's requests (the result's JSON), or why there is none.
type Answer = oneshot::Sender<Result<Value, ErrorData>>;

/// From the upstream call to the client's rounds.
#[derive(Debug)]
pub(crate) enum Event {
    /// The server asks: the answer goes back through the sender.
    Asked(InputRequest, Answer),
    /// The server answered (or failed).
    Done(Result<ServerResult, ServiceError>),
    /// The call timeout passed: the server's call was cancelled.
    Expired,
}

/// Where a bridged call's server requests go (kept in its [`Flight`]).
#[derive(Debug, Clone)]
pub(crate) struct Inlet {
    events: mpsc::UnboundedSender<Event>,
    ended: CancellationToken,
}

impl Inlet {
    /// Hand the server's request to the client's call, and wait for the client's answer.
    pub(crate) async fn ask(
        &self,
        request: InputRequest,
        method: &str,
    ) -> Result<Value, ErrorData> {
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

/// A bridged call between two rounds (or in one): its events, the server's requests waiting
/// for the client's answers, and the cancellation of the upstream call (on drop).
#[derive(Debug)]
pub(crate) struct Parked {
    tool: String,
    events: mpsc::UnboundedReceiver<Event>,
    /// An event read while gathering a round's requests, for the next round.
    stashed: Option<Event>,
    waiting: HashMap<String, Answer>,
    next_key: usize,
    /// When the call timeout ends the whole call.
    deadline: Option<Instant>,
    _cancel: DropGuard,
}

/// Whether `request_state` is one of the bridge's tokens.
pub(crate) fn is_token(request_state: Option<&str>) -> bool {
    request_state.is_some_and(|state| state.starts_with(TOKEN_PREFIX))
}

/// Call the tool upstream and wait for its answer in place; if the server asks first, move the
/// call to a task of its own and serve the first round.
pub(crate) async fn call(
    target: &ToolTarget,
    hub: &Arc<Hub>,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, Failure> {
    let (events, mut receiver) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let inlet = Inlet {
        events: events.clone(),
        ended: cancel.clone(),
    };
    let flight = Flight::new(
        context.peer.clone(),
        context.id.clone(),
        context.meta.get_progress_token(),
        true,
    )
    .bridged(inlet);
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
            return Err(forward::upstream_failed(target, name, error));
        }
    };
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    let Some(guard) = Flights::bind_owned(hub, pending, &target.peer, id, token) else {
        return Err(forward::upstream_failed(
            target,
            name,
            ServiceError::TransportClosed,
        ));
    };
    let expires = target.timeout.map(|after| Instant::now() + after);
    let first = tokio::select! {
        // Polled by hand (not `await_response`) so the handle can still move to a task.
        outcome = &mut handle.rx => {
            guard.finish();
            let outcome = outcome.unwrap_or(Err(ServiceError::TransportClosed));
            return done(target, name, outcome);
        }
        event = receiver.recv() => event,
        () = until(expires) => return Err(expired(target, name)),
        // The guard tells the server.
        () = context.ct.cancelled() => return Err(Failure::Cancelled),
    };
    tokio::spawn(wait_upstream(
        handle,
        guard,
        events,
        cancel.clone(),
        expires,
    ));
    let parked = Parked {
        tool: name.to_string(),
        events: receiver,
        stashed: first,
        waiting: HashMap::new(),
        next_key: 0,
        deadline: expires,
        _cancel: cancel.drop_guard(),
    };
    round(target, hub, name, parked, context).await
}

async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// The rest of a parked call upstream: its answer, or its end at the call timeout or when the
/// client's side drops it (then the guard tells the server).
async fn wait_upstream(
    handle: RequestHandle<RoleClient>,
    guard: OwnedFlightGuard,
    events: mpsc::UnboundedSender<Event>,
    ended: CancellationToken,
    expires: Option<Instant>,
) {
    let event = tokio::select! {
        outcome = handle.await_response() => {
            guard.finish();
            Event::Done(outcome)
        }
        () = until(expires) => Event::Expired,
        () = ended.cancelled() => return,
    };
    let _ = events.send(event);
    // The server's requests still waiting fail now.
    ended.cancel();
}

fn done(
    target: &ToolTarget,
    name: &str,
    outcome: Result<ServerResult, ServiceError>,
) -> Result<CallToolResponse, Failure> {
    match outcome {
        Ok(ServerResult::CallToolResult(result)) => Ok(result.into()),
        Ok(_) => Err(forward::upstream_failed(
            target,
            name,
            ServiceError::UnexpectedResponse,
        )),
        Err(error) => Err(forward::upstream_failed(target, name, error)),
    }
}

fn expired(target: &ToolTarget, name: &str) -> Failure {
    let timeout = target.timeout.unwrap_or_default();
    forward::upstream_failed(target, name, ServiceError::Timeout { timeout })
}

/// A retry that brings a bridge token back: the client's answers go to the server's waiting
/// requests (one it did not answer fails), then the next round.
pub(crate) async fn resume(
    target: &ToolTarget,
    hub: &Arc<Hub>,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, Failure> {
    let token = params.request_state.as_deref().unwrap_or_default();
    let Some(mut parked) = hub.unpark(token) else {
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
    round(target, hub, name, parked, context).await
}

/// Wait for the server's next requests or its result, for the client's current round.
async fn round(
    target: &ToolTarget,
    hub: &Arc<Hub>,
    name: &str,
    mut parked: Parked,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, Failure> {
    let first = match parked.stashed.take() {
        Some(event) => Some(event),
        None => tokio::select! {
            event = parked.events.recv() => event,
            // Dropping `parked` cancels the server's call.
            () = context.ct.cancelled() => return Err(Failure::Cancelled),
        },
    };
    let (request, answer) = match first {
        Some(Event::Asked(request, answer)) => (request, answer),
        Some(Event::Done(outcome)) => return done(target, name, outcome),
        Some(Event::Expired) | None => return Err(expired(target, name)),
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
        return Box::pin(round(target, hub, name, parked, context)).await;
    }
    let token = format!("{TOKEN_PREFIX}{}", uuid::Uuid::new_v4().simple());
    hub.park(token.clone(), parked);
    Ok(InputRequiredResult::new(Some(requests), Some(token)).into())
}

/// How long a parked call waits for the client's answers when the board has no call timeout:
/// a client that never comes back must not hold the server's call forever.
const UNBOUNDED_PARK: Duration = Duration::from_secs(600);

impl Hub {
    /// Keep `parked` under `token` until the client's retry, or until its time is up (then
    /// dropping it cancels the server's call).
    fn park(self: &Arc<Self>, token: String, parked: Parked) {
        let ttl = match parked.deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => UNBOUNDED_PARK,
        };
        self.parked().insert(token.clone(), parked);
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(hub) = hub.upgrade() {
                hub.unpark(&token);
            }
        });
    }

    fn unpark(&self, token: &str) -> Option<Parked> {
        self.parked().remove(token)
    }
}
