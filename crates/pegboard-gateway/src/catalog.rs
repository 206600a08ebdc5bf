//! Prompts, resources and completions served from the board (PASSTHROUGH.md §3, §4): what
//! [`crate::server::BoardServer`]'s handlers delegate to. The naming and routing live in the
//! library ([`pegboard::uri`], `PegBoard::{list_prompts, read_resource, ...}`); here they become
//! MCP answers.

use pegboard::{PegBoard, PegBoardError};
use rmcp::{
    ErrorData,
    model::{
        CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ReadResourceRequestParams, ReadResourceResult, ResultType,
    },
};
use serde_json::json;

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

pub(crate) async fn get_prompt(
    board: &PegBoard,
    request: GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let mut result = board
        .get_prompt(&request.name, request.arguments)
        .await
        .map_err(to_error)?;
    // The upstream may speak an older protocol (no `resultType`); a 2026-07-28 client requires it.
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

pub(crate) async fn list_resources(board: &PegBoard) -> ListResourcesResult {
    ListResourcesResult::with_all_items(board.list_resources().await)
}

pub(crate) async fn list_resource_templates(board: &PegBoard) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(board.list_resource_templates().await)
}

pub(crate) async fn read_resource(
    board: &PegBoard,
    request: ReadResourceRequestParams,
) -> Result<ReadResourceResult, ErrorData> {
    let mut result = board.read_resource(&request.uri).await.map_err(to_error)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

pub(crate) async fn complete(
    board: &PegBoard,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let mut result = board.complete(request).await.map_err(to_error)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}
