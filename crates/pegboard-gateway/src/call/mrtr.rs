//! Multi round-trip requests (MRTR, SEP-2322) between a server of the 2026-07-28 generation and
//! a client of an older one (PASSTHROUGH.md §7).
//!
//! A 2026-07-28 server does not send sampling, elicitation or roots requests during a call: it
//! answers `input_required` with the requests, and the client calls again with the answers and
//! the server's opaque `requestState`. rmcp refuses to send `input_required` to a client that
//! negotiated an older protocol, so for such a client the gateway plays the 2026-07-28 client:
//! it sends each request to the session whose call it is (as it relays a legacy server's
//! requests, see `upstream/client.rs`), and calls again, for at most
//! [`DEFAULT_MRTR_MAX_ROUNDS`] rounds, within the call's timeout. A client of 2026-07-28 gets
//! `input_required` as it is, and its retry passes through untouched (`forward.rs`).

use std::time::Duration;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientResult,
        DEFAULT_MRTR_MAX_ROUNDS, ElicitRequestParams, InputRequest, InputRequests,
        InputRequiredResult, InputResponses, ServerRequest,
    },
    service::RequestContext,
};
use serde_json::Value;

use super::{
    caller::Caller,
    route::Route,
    send::{peer_side, send_plain},
};
use crate::{
    protocol::failure::{Deadline, Failure},
    upstream::can_elicit,
};

/// What one round of a request that may need the client's input came back with.
pub(crate) enum Round<R> {
    /// The answer.
    Done(R),
    /// `input_required`: answer its requests and send the request again.
    Asked(InputRequiredResult),
}

/// Call `name` and answer its `input_required` rounds from the downstream session, until the
/// server returns a result. The arguments are kept for the retries (the one copy this path
/// costs).
pub(crate) async fn drive(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    deadline: Deadline,
) -> Result<CallToolResponse, Failure> {
    rounds(
        name,
        route.namespace(),
        deadline,
        context,
        caller,
        |input_responses, request_state| {
            let mut sent = params.clone();
            sent.input_responses = input_responses;
            sent.request_state = request_state;
            async move {
                Ok(
                    match send_plain(route, name, sent, context, caller, deadline).await? {
                        CallToolResponse::InputRequired(asked) => Round::Asked(asked),
                        done => Round::Done(done),
                    },
                )
            }
        },
    )
    .await
}

/// Send a request with `once` (given the answers and state of the previous round) and answer
/// its `input_required` rounds from the downstream session of `context`, at most
/// [`DEFAULT_MRTR_MAX_ROUNDS`] of them, all within `deadline`; `name` is what the request names
/// (a tool, a prompt, a URI) and `namespace` its server's, for errors.
pub(crate) async fn rounds<R, Fut>(
    name: &str,
    namespace: Option<&str>,
    deadline: Deadline,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    mut once: impl FnMut(Option<InputResponses>, Option<String>) -> Fut,
) -> Result<R, Failure>
where
    Fut: Future<Output = Result<Round<R>, Failure>>,
{
    let can_ask = caller.can_ask();
    let bound = Bound {
        name,
        namespace,
        deadline,
        context,
        caller,
    };
    let (mut input_responses, mut request_state) = (None, None);
    let mut state_only_rounds = 0u32;
    for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
        let asked = match once(input_responses.take(), request_state.take()).await? {
            Round::Asked(asked) => asked,
            Round::Done(done) => return Ok(done),
        };
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() {
            if asked.request_state.is_none() {
                return Err(cannot_finish(
                    name,
                    "the server answered input_required with nothing to ask".into(),
                ));
            }
            // Only state: the server is still working. Call again soon, backing off as rmcp's
            // own client does (50, 100, 200, 250 ms).
            let pause = Duration::from_millis((50u64 << state_only_rounds.min(3)).min(250));
            state_only_rounds += 1;
            bound
                .run("", async {
                    tokio::time::sleep(pause).await;
                    Ok(())
                })
                .await?;
        } else {
            state_only_rounds = 0;
        }
        if !can_ask && !requests.is_empty() {
            return Err(cannot_finish(
                name,
                format!(
                    "the server asked for {}, and pegboard --stateless has no session to ask \
                     its client; call it with protocol 2026-07-28, or over a stateful session",
                    methods(&requests)
                ),
            ));
        }
        let responses = answer_all(&bound, requests).await?;
        input_responses = (!responses.is_empty()).then_some(responses);
        request_state = asked.request_state;
    }
    Err(cannot_finish(
        name,
        format!("the server still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds"),
    ))
}

fn cannot_finish(name: &str, why: String) -> Failure {
    Failure::Unanswered(format!("pegboard could not finish '{name}': {why}"))
}

pub(crate) fn method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "an input request",
    }
}

fn methods(requests: &InputRequests) -> String {
    let mut names: Vec<_> = requests.values().map(method).collect();
    names.dedup();
    names.join(", ")
}

/// Ask the session for every request of one round, at once (as rmcp's client does).
async fn answer_all(bound: &Bound<'_>, requests: InputRequests) -> Result<InputResponses, Failure> {
    if requests.is_empty() {
        return Ok(InputResponses::new());
    }
    let capabilities = bound.context.client_capabilities();
    let asks = requests.into_iter().map(|(key, request)| {
        let capabilities = capabilities.as_ref();
        async move {
            let method = method(&request);
            let asked = answer(request, capabilities, bound.context, bound.caller);
            let value = bound.run(method, asked).await?;
            Ok::<_, Failure>((key, value))
        }
    });
    Ok(futures::future::try_join_all(asks)
        .await?
        .into_iter()
        .collect())
}

/// Send one request to the session whose call this is, and its result as the server wants it
/// (the result's JSON, as rmcp's client builds `inputResponses`).
async fn answer(
    request: InputRequest,
    capabilities: Option<&ClientCapabilities>,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<Value, String> {
    let method = method(&request);
    if !client_can(capabilities, &request) {
        return Err(format!(
            "the server asked the client for {method}, but the client did not declare support \
             for it"
        ));
    }
    let request = match request {
        InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
        InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
        InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
        _ => {
            return Err(format!(
                "the server asked for {method} of a kind pegboard cannot relay"
            ));
        }
    };
    // Tied to the downstream call, so an HTTP session sends it on the call's own stream.
    let result = peer_side(context, caller)
        .ask(request)
        .await
        .map_err(|e| format!("the client answered {method} with an error: {}", e.message))?;
    let value = match result {
        ClientResult::CreateMessageResult(r) if method == "sampling/createMessage" => {
            serde_json::to_value(r)
        }
        ClientResult::ElicitResult(r) if method == "elicitation/create" => serde_json::to_value(r),
        ClientResult::ListRootsResult(r) if method == "roots/list" => serde_json::to_value(r),
        _ => return Err(format!("the client answered {method} with another result")),
    };
    value.map_err(|e| format!("the client's answer to {method} did not serialize: {e}"))
}

/// Whether a client that declared `capabilities` takes `request`.
pub(crate) fn client_can(
    capabilities: Option<&ClientCapabilities>,
    request: &InputRequest,
) -> bool {
    match request {
        InputRequest::CreateMessage(_) => capabilities.is_some_and(|c| c.sampling.is_some()),
        InputRequest::Elicitation(r) => {
            let url = matches!(r.params, ElicitRequestParams::UrlElicitationParams { .. });
            capabilities
                .and_then(|c| c.elicitation.as_ref())
                .is_some_and(|e| can_elicit(e, url))
        }
        InputRequest::ListRoots(_) => capabilities.is_some_and(|c| c.roots.is_some()),
        _ => false,
    }
}

/// The limits of one request's rounds: its deadline (the call timeout), its client's
/// cancellation and the end of its session.
struct Bound<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    deadline: Deadline,
    context: &'a RequestContext<RoleServer>,
    caller: &'a Caller<'a>,
}

impl Bound<'_> {
    /// Run `work` until the deadline, or until the client cancels its request; `waiting_for`
    /// names what the client was asked, for the timeout's error ("": the server was waited for).
    async fn run<T>(
        &self,
        waiting_for: &str,
        work: impl Future<Output = Result<T, String>>,
    ) -> Result<T, Failure> {
        let after = self.deadline.timeout().unwrap_or_default();
        tokio::select! {
            outcome = self.deadline.run(work) => match outcome {
                Some(Ok(value)) => Ok(value),
                Some(Err(why)) => Err(cannot_finish(self.name, why)),
                None if waiting_for.is_empty() => Err(self.deadline.expired(self.namespace, self.name)),
                None => Err(cannot_finish(self.name, format!(
                    "the client did not answer {waiting_for} within the call timeout ({after:?})"
                ))),
            },
            () = self.context.ct.cancelled() => Err(Failure::Cancelled),
            () = self.caller.session_ended() => Err(Failure::Cancelled),
        }
    }
}
