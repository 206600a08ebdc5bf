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
        ReadResourceRequestParams, ReadResourceResponse, ResultType,
    },
    service::RequestContext,
};
use serde_json::json;

use crate::{
    forward::Failure,
    mrtr::{self, Round},
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

pub(crate) async fn list_prompts(board: &PegBoard) -> ListPromptsResult {
    ListPromptsResult::with_all_items(board.list_prompts().await)
}

/// `prompts/get`, with its `input_required` rounds passed to a 2026-07-28 client or answered for
/// an older one (see `mrtr.rs`); `can_ask`: the session can be asked (not `--stateless`).
pub(crate) async fn get_prompt(
    board: &PegBoard,
    mut request: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
) -> Result<GetPromptResponse, ErrorData> {
    // The downstream's `_meta` is its own lifecycle's; rmcp adds the upstream's.
    request.meta = None;
    if mrtr::client_speaks_2026(context) {
        let mut response = board.get_prompt_once(request).await.map_err(to_error)?;
        if let GetPromptResponse::Complete(result) = &mut response {
            // The upstream may speak an older protocol (no `resultType`); this client requires it.
            result.result_type = Some(ResultType::COMPLETE);
        }
        return Ok(response);
    }
    let name = request.name.clone();
    let timeout = board.call_timeout();
    let result = mrtr::rounds(&name, timeout, context, can_ask, |responses, state, _| {
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
    })
    .await
    .map_err(failed)?;
    Ok(result.into())
}

pub(crate) async fn list_resources(board: &PegBoard) -> ListResourcesResult {
    ListResourcesResult::with_all_items(board.list_resources().await)
}

pub(crate) async fn list_resource_templates(board: &PegBoard) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(board.list_resource_templates().await)
}

/// `resources/read`, with its `input_required` rounds as for [`get_prompt`].
pub(crate) async fn read_resource(
    board: &PegBoard,
    mut request: ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
) -> Result<ReadResourceResponse, ErrorData> {
    request.meta = None;
    if mrtr::client_speaks_2026(context) {
        let mut response = board.read_resource_once(request).await.map_err(to_error)?;
        if let ReadResourceResponse::Complete(result) = &mut response {
            result.result_type = Some(ResultType::COMPLETE);
        }
        return Ok(response);
    }
    let uri = request.uri.clone();
    let timeout = board.call_timeout();
    let result = mrtr::rounds(&uri, timeout, context, can_ask, |responses, state, _| {
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
    .await
    .map_err(failed)?;
    Ok(result.into())
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
        Failure::Board(error) => to_error(error),
        Failure::Cancelled => ErrorData::internal_error("request cancelled by the client", None),
        Failure::Open(why) | Failure::Unanswered(why) => ErrorData::internal_error(why, None),
    }
}

pub(crate) async fn complete(
    board: &PegBoard,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let mut result = board.complete(request).await.map_err(to_error)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}
