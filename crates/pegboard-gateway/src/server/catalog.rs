//! Prompts, resources and completions served from the board (PASSTHROUGH.md §3, §4): what
//! [`crate::server::BoardServer`]'s handlers delegate to. The naming and routing live in the
//! library ([`pegboard::uri`], `PegBoard::{list_prompts, read_resource, ...}`); here they become
//! MCP answers. `prompts/get` and `resources/read` may need the client's input (2026-07-28
//! `input_required`, see `mrtr.rs`).

use pegboard::{PegBoard, PegBoardError};
use rmcp::{
    ErrorData, RoleServer,
    model::{
        CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ReadResourceRequestParams, ReadResourceResponse, Reference, ResultType,
    },
    service::RequestContext,
};
use serde_json::json;

use super::visible;
use crate::identity::Client;
use crate::telemetry::TraceContext;
use crate::{
    call::{
        caller::Caller,
        mrtr::{self, Round},
        reads::{ReadAudit, size_of_json},
        relayed::{self, Destination, To},
    },
    protocol::{
        failure::{Deadline, Failure},
        meta,
        versions::client_speaks_2026,
    },
};

/// A board error as the MCP answer a client expects: a name or URI that is not on the board is
/// the client's mistake (-32602, with close matches); a server's own error passes as it is.
pub(crate) fn to_error(error: PegBoardError) -> ErrorData {
    match error {
        PegBoardError::PromptNotFound {
            ref suggestions, ..
        } => ErrorData::invalid_params(
            error.to_string(),
            Some(json!({ "suggestions": suggestions })),
        ),
        PegBoardError::ResourceNotFound { .. } | PegBoardError::InvalidArguments { .. } => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        PegBoardError::Upstream {
            source: rmcp::ServiceError::McpError(upstream),
            ..
        } => upstream,
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

pub(crate) async fn list_prompts(board: &PegBoard, client: &Client) -> ListPromptsResult {
    let mut prompts = board.list_prompts().await;
    if !client.sees_everything() {
        prompts.retain(|p| visible::prompt(client, &p.name));
    }
    ListPromptsResult::with_all_items(prompts)
}

/// `prompts/get`, with its `input_required` rounds passed to a 2026-07-28 client or answered for
/// an older one (see `mrtr.rs`); its metrics and spans, and the trace context it carries, as
/// `call/relayed.rs` makes them; audited as a call is.
pub(crate) async fn get_prompt(
    board: &PegBoard,
    request: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<GetPromptResponse, ErrorData> {
    let name = request.name.clone();
    // Looked up only for what records it: the metrics and spans, the audit line's server.
    let recorded = caller.hooks.telemetry.is_some() || caller.hooks.audit.is_some();
    let target = match recorded && visible::prompt(caller.client, &name) {
        true => board.prompt_target(&name).await.ok(),
        false => None,
    };
    let to = target.as_ref().map(|t| To {
        destination: Destination::of(t.extension.as_ref(), t.namespace.clone()),
        prompt: Some((&name, &t.original)),
    });
    let relayed = relayed::start(caller.who(), "prompts/get", context, to.as_ref());
    let server = to.as_ref().map(|to| to.destination.server());
    let answer = audited_prompt(
        board,
        request,
        context,
        caller,
        (server, relayed.trace_context()),
    )
    .await;
    relayed::end(relayed, &answer);
    answer
}

/// [`get_prompt`] past its metrics and spans: its audit line, naming `server` (the prompt's, when
/// it is on the board and visible to the caller); `trace` goes upstream.
async fn audited_prompt(
    board: &PegBoard,
    mut request: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    (server, trace): (Option<&str>, Option<&TraceContext>),
) -> Result<GetPromptResponse, ErrorData> {
    request.meta = upstream_meta(context, trace);
    let mut audit = ReadAudit::begin(caller.who(), "prompts/get", &request.name, &request);
    if let Some(audit) = &mut audit {
        audit.server(server);
    }
    let client = caller.client;
    let outcome = prompt(board, request, context, caller).await;
    if let Some(audit) = audit {
        audit.end(&outcome, |answer| match answer {
            GetPromptResponse::Complete(result) => size_of_json(result),
            GetPromptResponse::InputRequired(asked) => size_of_json(asked),
            _ => 0,
        });
    }
    outcome.map_err(|failure| match failure {
        Failure::Board(PegBoardError::PromptNotFound { name, suggestions })
            if !client.sees_everything() =>
        {
            // The close matches the client may see: none that would reveal a hidden name.
            let visible: Vec<String> = suggestions
                .into_iter()
                .filter(|s| visible::prompt(client, s))
                .collect();
            to_error(PegBoardError::PromptNotFound {
                name,
                suggestions: visible,
            })
        }
        other => failed(other),
    })
}

/// [`get_prompt`]'s answer, or why there is none.
async fn prompt(
    board: &PegBoard,
    request: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<GetPromptResponse, Failure> {
    let client = caller.client;
    if !visible::prompt(client, &request.name) {
        let prompts: Vec<String> = board
            .list_prompts()
            .await
            .into_iter()
            .map(|p| p.name.to_string())
            .collect();
        return Err(Failure::Hidden(visible::prompt_not_found(
            client,
            &request.name,
            &prompts,
        )));
    }
    if client_speaks_2026(context) {
        let mut response = board
            .get_prompt_once(request)
            .await
            .map_err(Failure::Board)?;
        if let GetPromptResponse::Complete(result) = &mut response {
            // The upstream may speak an older protocol (no `resultType`); this client requires it.
            result.result_type = Some(ResultType::COMPLETE);
        }
        return Ok(response);
    }
    let name = request.name.clone();
    let deadline = Deadline::after(board.call_timeout());
    let result = mrtr::rounds(
        &name,
        None,
        deadline,
        context,
        caller,
        |responses, state| {
            let mut sent = request.clone();
            sent.input_responses = responses;
            sent.request_state = state;
            async move {
                match board.get_prompt_once(sent).await? {
                    GetPromptResponse::Complete(result) => Ok(Round::Done(result)),
                    GetPromptResponse::InputRequired(asked) => Ok(Round::Asked(asked)),
                    _ => Err(unknown("prompts/get")),
                }
            }
        },
    )
    .await?;
    Ok(result.into())
}

pub(crate) async fn list_resources(board: &PegBoard, client: &Client) -> ListResourcesResult {
    let mut resources = board.list_resources().await;
    if !client.sees_everything() {
        resources.retain(|r| visible::resource(client, board, &r.uri));
    }
    ListResourcesResult::with_all_items(resources)
}

pub(crate) async fn list_resource_templates(
    board: &PegBoard,
    client: &Client,
) -> ListResourceTemplatesResult {
    let mut templates = board.list_resource_templates().await;
    if !client.sees_everything() {
        templates.retain(|t| visible::resource(client, board, &t.uri_template));
    }
    ListResourceTemplatesResult::with_all_items(templates)
}

/// The board's target for `uri` as `client` may reach it: a resource of a server it may not see
/// is answered as one not on the board, whose hint names no server (it could name a hidden one).
pub(crate) fn resource_target(
    board: &PegBoard,
    client: &Client,
    uri: &str,
) -> Result<pegboard::ResourceTarget, PegBoardError> {
    let hidden = || PegBoardError::ResourceNotFound {
        uri: uri.to_string(),
        hint: "its URI should start with the alias of a server, as resources/list shows".into(),
    };
    if !visible::resource(client, board, uri) {
        return Err(hidden());
    }
    match board.resource_target(uri) {
        Err(PegBoardError::ResourceNotFound { .. }) if !client.sees_everything() => Err(hidden()),
        other => other,
    }
}

/// `resources/read`, with its `input_required` rounds and its records as for [`get_prompt`];
/// audited as a call is.
pub(crate) async fn read_resource(
    board: &PegBoard,
    request: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<ReadResourceResponse, ErrorData> {
    let to = caller
        .hooks
        .telemetry
        .as_ref()
        .and_then(|_| resource_target(board, caller.client, &request.uri).ok())
        .map(|t| To {
            destination: Destination::of(t.extension.as_ref(), t.namespace),
            prompt: None,
        });
    let relayed = relayed::start(caller.who(), "resources/read", context, to.as_ref());
    let answer = audited_read(board, request, context, caller, relayed.trace_context()).await;
    relayed::end(relayed, &answer);
    answer
}

/// [`read_resource`] past its metrics and spans: its audit line.
async fn audited_read(
    board: &PegBoard,
    mut request: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
    trace: Option<&TraceContext>,
) -> Result<ReadResourceResponse, ErrorData> {
    request.meta = upstream_meta(context, trace);
    let mut audit = ReadAudit::begin(caller.who(), "resources/read", &request.uri, &request);
    let outcome = match resource_target(board, caller.client, &request.uri) {
        Ok(target) => {
            if let Some(audit) = &mut audit {
                audit.server(target.namespace.as_deref());
            }
            read(board, request, context, caller).await
        }
        // Refused by policy (a server the client may not see), or not on the board.
        Err(e) if !visible::resource(caller.client, board, &request.uri) => Err(Failure::Hidden(e)),
        Err(e) => Err(Failure::Board(e)),
    };
    if let Some(audit) = audit {
        audit.end(&outcome, |answer| match answer {
            ReadResourceResponse::Complete(result) => size_of_json(result),
            ReadResourceResponse::InputRequired(asked) => size_of_json(asked),
            _ => 0,
        });
    }
    outcome.map_err(failed)
}

/// [`read_resource`]'s answer, or why there is none.
async fn read(
    board: &PegBoard,
    request: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<ReadResourceResponse, Failure> {
    if client_speaks_2026(context) {
        let mut response = board
            .read_resource_once(request)
            .await
            .map_err(Failure::Board)?;
        if let ReadResourceResponse::Complete(result) = &mut response {
            result.result_type = Some(ResultType::COMPLETE);
        }
        return Ok(response);
    }
    let uri = request.uri.clone();
    let deadline = Deadline::after(board.call_timeout());
    let result = mrtr::rounds(&uri, None, deadline, context, caller, |responses, state| {
        let mut sent = request.clone();
        sent.input_responses = responses;
        sent.request_state = state;
        async move {
            match board.read_resource_once(sent).await? {
                ReadResourceResponse::Complete(result) => Ok(Round::Done(result)),
                ReadResourceResponse::InputRequired(asked) => Ok(Round::Asked(asked)),
                _ => Err(unknown("resources/read")),
            }
        }
    })
    .await?;
    Ok(result.into())
}

/// The `_meta` a request relayed upstream carries: the client's (as `meta::for_upstream` passes
/// it on), with the gateway's trace context when there is one.
fn upstream_meta(
    context: &RequestContext<RoleServer>,
    trace: Option<&TraceContext>,
) -> Option<rmcp::model::RequestMetaObject> {
    let mut meta = meta::for_upstream(Some(context.meta.clone()));
    if let Some(trace) = trace {
        trace.write_meta(meta.get_or_insert_with(Default::default));
    }
    meta
}

/// A kind of answer newer than this gateway.
fn unknown(method: &str) -> Failure {
    Failure::Unanswered(format!(
        "the server answered {method} with a kind of result pegboard does not know"
    ))
}

/// Why a prompt or resource has no answer, as the client's error.
fn failed(failure: Failure) -> ErrorData {
    match failure {
        Failure::Board(error) | Failure::Hidden(error) => to_error(error),
        Failure::Cancelled => ErrorData::internal_error("request cancelled by the client", None),
        Failure::Open(why) | Failure::Unanswered(why) | Failure::Denied(why) => {
            ErrorData::internal_error(why, None)
        }
    }
}

/// `completion/complete`, its records as for [`get_prompt`].
pub(crate) async fn complete(
    board: &PegBoard,
    mut request: CompleteRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller<'_>,
) -> Result<CompleteResult, ErrorData> {
    let client = caller.client;
    let to = match (&caller.hooks.telemetry, &request.r#ref) {
        (Some(_), Reference::Prompt(prompt)) if visible::prompt(client, &prompt.name) => board
            .prompt_target(&prompt.name)
            .await
            .ok()
            .map(|t| Destination::of(t.extension.as_ref(), t.namespace)),
        (Some(_), Reference::Resource(template)) => resource_target(board, client, &template.uri)
            .ok()
            .map(|t| Destination::of(t.extension.as_ref(), t.namespace)),
        _ => None,
    }
    .map(|destination| To {
        destination,
        prompt: None,
    });
    let relayed = relayed::start(caller.who(), "completion/complete", context, to.as_ref());
    request.meta = upstream_meta(context, relayed.trace_context());
    let answer = completion(board, request, client).await;
    relayed::end(relayed, &answer);
    answer
}

async fn completion(
    board: &PegBoard,
    request: CompleteRequestParams,
    client: &Client,
) -> Result<CompleteResult, ErrorData> {
    if !client.sees_everything() {
        match &request.r#ref {
            Reference::Prompt(prompt) if !visible::prompt(client, &prompt.name) => {
                let prompts: Vec<String> = board
                    .list_prompts()
                    .await
                    .into_iter()
                    .map(|p| p.name.to_string())
                    .collect();
                return Err(to_error(visible::prompt_not_found(
                    client,
                    &prompt.name,
                    &prompts,
                )));
            }
            Reference::Resource(resource) if !visible::resource(client, board, &resource.uri) => {
                resource_target(board, client, &resource.uri).map_err(to_error)?;
            }
            _ => {}
        }
    }
    let mut result = board.complete(request).await.map_err(to_error)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}
