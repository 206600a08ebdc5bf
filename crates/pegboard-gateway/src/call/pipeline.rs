//! The typed way through the pipeline: a `tools/call` as rmcp parsed it, forwarded upstream
//! with its `_meta`, its progress, its cancellation, and the session that must answer the
//! server's requests during the call (PASSTHROUGH.md §1.3, §2). Where the two sides speak
//! different protocol generations the call takes the bridge (a 2026-07-28 client, an older
//! server: `bridge.rs`) or rounds of `input_required` (the other way round: `mrtr.rs`); a tool
//! that requires a task is run as one (`tasks.rs`).

use std::sync::Arc;

use pegboard::PegBoard;
use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResponse, NumberOrString, ResultType},
    service::RequestContext,
};

use super::{
    bridge,
    caller::Caller,
    mrtr, result,
    route::Route,
    send::send_plain,
    tasks,
    watch::{Ended, Watch},
};
use crate::{
    audit::AuditArguments,
    identity::CallAdmission,
    limits::PreAdmitted,
    protocol::{
        failure::{Deadline, Failure},
        meta,
        versions::client_speaks_2026,
    },
    telemetry::{JsonRpcId, TraceContext},
};

/// The typed way's `tools/call` of `request.name`: its answer for the client, the call watched
/// from begin to end (limits, metrics and spans, the audit line: see `watch.rs`).
pub(crate) async fn call_tool(
    board: &PegBoard,
    mut request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<CallToolResponse, ErrorData> {
    let name = std::mem::take(&mut request.name);
    // rmcp moves the request's `_meta` into the context (it reads its progress token there).
    let incoming = TraceContext::from_meta(&context.meta).or_else(|| {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| TraceContext::from_headers(&parts.headers))
    });
    let audited = caller.hooks.audit.is_some();
    let bytes_in = if audited {
        serde_json::to_vec(&request).map_or(0, |json| json.len() + name.len())
    } else {
        0
    };
    let id = match &context.id {
        NumberOrString::Number(n) => JsonRpcId::Number(*n),
        NumberOrString::String(s) => JsonRpcId::String(s),
    };
    let arguments = || {
        request
            .arguments
            .clone()
            .map(|a| AuditArguments::Value(Arc::new(serde_json::Value::Object(a))))
    };
    // A fleet-limited client's call: counted in the store by the HTTP front already (its
    // admission rides in the request, taken once: code mode's calls share their run's
    // request), else here, in one round trip.
    let mut admitted = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<PreAdmitted<CallAdmission>>())
        .and_then(PreAdmitted::take)
        .map(PreAdmitted::new);
    if admitted.is_none() && caller.client.counts_calls_in_store() {
        admitted = Some(PreAdmitted::new(caller.client.admit_shared().await));
    }
    let mut who = caller.who();
    who.admitted = admitted.as_ref();
    let (mut watch, outcome) = match Watch::begin(who, (&name, None), Some(id), incoming, arguments)
    {
        Ok(mut watch) => {
            let outcome = forward(board, &name, request, context, caller, &mut watch).await;
            (watch, outcome)
        }
        Err(denied) => {
            let (watch, denied) = *denied;
            (watch, Err(denied))
        }
    };
    let ended = match &outcome {
        Ok(CallToolResponse::Complete(result)) => Ended::Result {
            is_error: result.is_error == Some(true),
        },
        Ok(_) => Ended::Result { is_error: false },
        Err(failure) => Ended::Failed(failure),
    };
    let bytes_out = match (&outcome, audited) {
        (Ok(CallToolResponse::Complete(result)), true) => {
            serde_json::to_vec(result).map_or(0, |json| json.len())
        }
        (Ok(CallToolResponse::InputRequired(asked)), true) => {
            serde_json::to_vec(asked).map_or(0, |json| json.len())
        }
        _ => 0,
    };
    watch.release_shared_place().await;
    watch.end(ended, bytes_in, bytes_out);
    match outcome {
        Ok(CallToolResponse::Complete(mut result)) => {
            // The upstream answered on its own connection, maybe of an older protocol
            // generation (no `resultType`); a 2026-07-28 client requires the field. rmcp strips
            // it again for legacy clients.
            result.result_type = Some(ResultType::COMPLETE);
            Ok(result.into())
        }
        // `input_required` for a 2026-07-28 client, as the server sent it: the retry names the
        // same tool, so it reaches the same server with its answers and state.
        Ok(other) => Ok(other),
        Err(failure) => failure.answer(&name).map(Into::into),
    }
}

/// Call `name` upstream with `request` (its arguments, its `_meta`, and a 2026-07-28 retry's
/// `inputResponses` and `requestState`) on behalf of the downstream request in `context`.
async fn forward(
    board: &PegBoard,
    name: &str,
    mut request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    watch: &mut Watch,
) -> Result<CallToolResponse, Failure> {
    let route = match Route::resolve(board, name, caller).await {
        Ok(route) => route,
        Err(failure) => {
            // "server `NAME` needs a login": a client that takes URLs is offered the login too
            // (issue 23 item 6). The lane never answers this: a tool off the board takes this way.
            if matches!(failure, Failure::Unanswered(_)) && caller.can_ask() {
                crate::oauth::elicit::offer_login_for_tool(name, &context.peer);
            }
            return Err(failure);
        }
    };
    let deadline = Deadline::start(&route.target);
    request.name = String::from(route.target.original.as_str()).into();
    request.meta = meta::for_upstream(Some(context.meta.clone()));
    if let Some(trace) = watch.routed(&route, name) {
        trace.write_meta(request.meta.get_or_insert_with(Default::default));
    }
    let mut response = match &route.hub {
        // A 2026-07-28 client's answers to a server of an older protocol (see `bridge.rs`).
        Some(_) if bridge::is_token(request.request_state.as_deref()) => {
            bridge::resume(&route, name, request, context, caller).await?
        }
        _ => call_route(&route, name, request, context, caller, deadline).await?,
    };
    if let CallToolResponse::Complete(result) = &mut response {
        result::finish(result, &route);
    }
    Ok(response)
}

async fn call_route(
    route: &Route,
    name: &str,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    deadline: Deadline,
) -> Result<CallToolResponse, Failure> {
    // Which protocol generation each side speaks: where they differ, the server's requests
    // during the call take another way (see `mrtr.rs`, `bridge.rs`).
    let upstream_2026 = match &route.hub {
        Some(hub) => hub.speaks_2026(&route.target.peer),
        None => crate::protocol::versions::upstream_speaks_2026(&route.target.peer),
    };
    let client_2026 = client_speaks_2026(context);
    if upstream_2026 && !client_2026 {
        return mrtr::drive(route, name, params, context, caller, deadline).await;
    }
    let Some(hub) = &route.hub else {
        return send_plain(route, name, params, context, caller, deadline).await;
    };
    // A 2026-07-28 client on a server of an older protocol: the server's requests during the
    // call come back to the client as `input_required` (see `bridge.rs`).
    let bridged = client_2026 && !upstream_2026 && caller.can_ask();
    let one = |params| async move {
        if bridged {
            bridge::call(route, name, params, context, caller, deadline).await
        } else {
            send_plain(route, name, params, context, caller, deadline).await
        }
    };
    let original = &route.target.original;
    if route.plain.is_some() {
        // The hot path: no copy of the arguments, no task check.
        return one(params).await;
    }
    if hub.needs_task(original) {
        return tasks::run(route, name, params, context, caller, deadline)
            .await
            .map(Into::into);
    }
    // First calls of a tool: keep the arguments in case it turns out to require a task.
    let outcome = one(params.clone()).await?;
    let CallToolResponse::Complete(result) = &outcome else {
        // `input_required` for a 2026-07-28 client: a tool that asks for input is no task tool.
        hub.mark_plain(original);
        return Ok(outcome);
    };
    if tasks::requires_task(result) {
        hub.mark_task_tool(original);
        return tasks::run(route, name, params, context, caller, deadline)
            .await
            .map(Into::into);
    }
    if result.is_error != Some(true) {
        hub.mark_plain(original);
    }
    Ok(outcome)
}
