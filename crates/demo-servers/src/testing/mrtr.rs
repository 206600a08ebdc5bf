//! The `ask` tool of [`super::TestServer`] (with [`super::TestServerOptions::ask_tool`]): a
//! tool that needs the client's input, asked the 2026-07-28 way (SEP-2322, multi round-trip
//! requests). Each round answers `input_required` with one request (sampling, elicitation or
//! roots); the retry carries the client's answer, and the answers so far travel in
//! `requestState`. After `rounds` answers the tool returns them, joined by `" | "`. The `ask`
//! prompt and the `test://ask/{via}` resources ask the same way (one round for a resource).
//!
//! rmcp only lets `input_required` reach a client of 2026-07-28 or newer: to an older client the
//! tool asks the same questions as ordinary server-to-client requests during the call, as a
//! server of both generations does (with `only_2026` no older client gets in).
// Sampling and roots are deprecated by SEP-2577 (2026-07-28) but are what MRTR asks for.
#![allow(deprecated)]

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CreateMessageRequest, CreateMessageRequestParams,
        CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequests,
        InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult, Prompt,
        PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Resource, ResourceContents, Role, SamplingMessage, ServerRequest,
    },
    service::RequestContext,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Entry, Kind, parse, schema, text, tool_error};

/// What the `ask` tool asks the client for.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Via {
    /// `sampling/createMessage`: the answer is the text the client's model returned.
    Sampling,
    /// `elicitation/create` (form): the answer is the action and the content.
    Elicitation,
    /// `roots/list`: the answer is the roots' URIs.
    Roots,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AskArgs {
    /// What to ask the client for.
    via: Via,
    /// How many rounds to ask (default 1).
    #[serde(default = "one")]
    rounds: usize,
    /// The question (sampling prompt or elicitation message; default "who are you?").
    #[serde(default)]
    question: Option<String>,
}

fn one() -> usize {
    1
}

/// The `ask` tool's listing entry.
pub(super) fn entry() -> Entry {
    Entry {
        tool: rmcp::model::Tool::new(
            "ask",
            "Ask the client `rounds` times (default 1) for input with input_required (2026-07-28): \
             `via` sampling, elicitation or roots; returns the answers joined by \" | \".",
            schema::<AskArgs>(),
        ),
        kind: Kind::Ask,
    }
}

/// One round of the `ask` tool: the next request, or the answers once there are enough.
pub(super) fn call(request: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
    let args = parse::<AskArgs>(request.arguments.as_ref().unwrap_or(&Default::default()))?;
    let answered = round(
        args,
        request.input_responses.as_ref(),
        request.request_state.as_ref(),
    )?;
    Ok(match answered {
        Ok(answers) => text(answers),
        Err(asked) => asked.into(),
    })
}

/// The `ask` tool for a client of an older protocol, which cannot take `input_required`: the
/// same questions as server-to-client requests during the call (a server of both generations).
pub(super) async fn call_directly(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let args = parse::<AskArgs>(request.arguments.as_ref().unwrap_or(&Default::default()))?;
    let question = args.question.unwrap_or_else(|| "who are you?".to_string());
    let mut answers = Vec::new();
    for _ in 0..args.rounds {
        let request = match input_request(args.via, question.clone())? {
            InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
            InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
            InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
            _ => return Err(ErrorData::internal_error("unknown input request", None)),
        };
        let answer = match context.peer.send_request(request).await {
            // `ClientResult` is untagged: the result's own JSON, as `inputResponses` carry it.
            Ok(result) => serde_json::to_value(result)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
            Err(e) => return Ok(tool_error(format!("the client did not answer: {e}"))),
        };
        answers.push(read_answer(args.via, answer)?);
    }
    Ok(text(answers.join(" | ")))
}

/// The `ask` prompt: as the tool, with string arguments (`via`, `rounds`); the answers come
/// back as the prompt's one message.
pub(super) fn prompt() -> Prompt {
    Prompt::new(
        "ask",
        Some("Ask the client for input with input_required, as the `ask` tool does."),
        Some(vec![
            PromptArgument::new("via")
                .with_description("sampling, elicitation or roots")
                .with_required(true),
            PromptArgument::new("rounds").with_description("how many rounds (default 1)"),
        ]),
    )
}

/// One round of the `ask` prompt.
pub(super) fn get_prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    let arguments = request.arguments.clone().unwrap_or_default();
    let field = |key: &str| {
        arguments
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let args = AskArgs {
        via: serde_json::from_value(serde_json::Value::String(field("via")))
            .map_err(|e| ErrorData::invalid_params(format!("via: {e}"), None))?,
        rounds: field("rounds").parse().unwrap_or(1),
        question: None,
    };
    let answered = round(
        args,
        request.input_responses.as_ref(),
        request.request_state.as_ref(),
    )?;
    Ok(match answered {
        Ok(answers) => {
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, answers)]).into()
        }
        Err(asked) => asked.into(),
    })
}

const RESOURCE_PREFIX: &str = "test://ask/";

/// The `ask` resources, one a way of asking: `test://ask/sampling`, `.../elicitation`,
/// `.../roots`; their text is the answer (one round).
pub(super) fn resources() -> Vec<Resource> {
    ["sampling", "elicitation", "roots"]
        .into_iter()
        .map(|via| Resource::new(format!("{RESOURCE_PREFIX}{via}"), via))
        .collect()
}

/// One round of reading an `ask` resource.
pub(super) fn read_resource(
    request: &ReadResourceRequestParams,
) -> Result<ReadResourceResponse, ErrorData> {
    let via = request
        .uri
        .strip_prefix(RESOURCE_PREFIX)
        .and_then(|via| serde_json::from_value::<Via>(serde_json::Value::String(via.into())).ok())
        .ok_or_else(|| {
            ErrorData::resource_not_found(format!("no resource {}", request.uri), None)
        })?;
    let args = AskArgs {
        via,
        rounds: 1,
        question: None,
    };
    let answered = round(
        args,
        request.input_responses.as_ref(),
        request.request_state.as_ref(),
    )?;
    Ok(match answered {
        Ok(answers) => {
            ReadResourceResult::new(vec![ResourceContents::text(answers, request.uri.clone())])
                .into()
        }
        Err(asked) => asked.into(),
    })
}

/// One round: the answers once there are `rounds` of them, else the next request.
fn round(
    args: AskArgs,
    input_responses: Option<&InputResponses>,
    request_state: Option<&String>,
) -> Result<Result<String, InputRequiredResult>, ErrorData> {
    let mut answers: Vec<String> = match request_state {
        Some(state) => serde_json::from_str(state)
            .map_err(|e| ErrorData::invalid_params(format!("bad requestState: {e}"), None))?,
        None => Vec::new(),
    };
    if let Some(responses) = input_responses {
        let key = format!("q{}", answers.len());
        let response = responses.get(&key).ok_or_else(|| {
            ErrorData::invalid_params(format!("inputResponses has no {key:?}"), None)
        })?;
        answers.push(read_answer(args.via, response.clone())?);
    }
    if answers.len() >= args.rounds {
        return Ok(Ok(answers.join(" | ")));
    }
    let question = args.question.unwrap_or_else(|| "who are you?".to_string());
    let mut requests = InputRequests::new();
    requests.insert(
        format!("q{}", answers.len()),
        input_request(args.via, question)?,
    );
    let state = serde_json::to_string(&answers)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(Err(InputRequiredResult::new(Some(requests), Some(state))))
}

fn input_request(via: Via, question: String) -> Result<InputRequest, ErrorData> {
    Ok(match via {
        Via::Sampling => InputRequest::CreateMessage(CreateMessageRequest::new(
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text(question)], 20),
        )),
        Via::Elicitation => {
            let schema = ElicitationSchema::builder()
                .required_string("answer")
                .build()
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question,
                    requested_schema: schema,
                },
            ))
        }
        Via::Roots => InputRequest::ListRoots(ListRootsRequest::default()),
    })
}

/// The client's answer to one request, as text.
fn read_answer(via: Via, response: serde_json::Value) -> Result<String, ErrorData> {
    let bad = |e: serde_json::Error| {
        ErrorData::invalid_params(format!("inputResponses: not a {via:?} result: {e}"), None)
    };
    Ok(match via {
        Via::Sampling => {
            let result: CreateMessageResult = serde_json::from_value(response).map_err(bad)?;
            result
                .message
                .content
                .first()
                .and_then(|c| c.as_text().map(|t| t.text.clone()))
                .unwrap_or_default()
        }
        Via::Elicitation => {
            let result: ElicitResult = serde_json::from_value(response).map_err(bad)?;
            let action = serde_json::to_value(result.action).unwrap_or_default();
            let action = action.as_str().unwrap_or_default().to_string();
            match result.content {
                Some(content) => format!("{action} {content}"),
                None => action,
            }
        }
        Via::Roots => {
            let result: ListRootsResult = serde_json::from_value(response).map_err(bad)?;
            let uris: Vec<_> = result.roots.iter().map(|r| r.uri.as_str()).collect();
            uris.join(" ")
        }
    })
}
