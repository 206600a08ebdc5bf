//! The tools of [`super::TestServer`] that the gateway's parity suites need (with
//! [`super::TestServerOptions::parity_tools`]): a server that shows what it received and one
//! that answers what a well-behaved server never would, so a test can see whether both of the
//! gateway's paths judge and pass a call the same.
//!
//! - `echo_meta {}` answers with the request's `_meta` as the server received it (one text
//!   block of JSON): whether the client's trace context and vendor keys came through, and the
//!   client's session keys did not.
//! - `progress {values, total?}` sends one `notifications/progress` per value, in the order
//!   given (repeated or decreasing ones too, which a gateway must not pass on), under the
//!   request's progress token, then answers `"sent N"`.
//! - `malformed {shape}` answers with a result that is not a valid tool result (`empty`: `{}`;
//!   `unknown-content`: a content block of an unknown type; `content-not-array`: a string as
//!   `content`), or with a valid one (`valid`). rmcp's typed API cannot write those, so the
//!   answer is made by [`Faults`], a [`Service`] in front of the server, which only the stdio
//!   transport can serve (rmcp's HTTP service takes a `ServerHandler`); without it (over HTTP,
//!   in process) the tool answers with a tool error saying so.
//! - With [`super::TestServerOptions::vendor_tools`], [`Faults`] also answers `tools/list` with
//!   the definitions of `vendor.rs` appended as raw JSON.

use rmcp::{
    ErrorData, RoleServer, Service,
    model::{ClientRequest, CustomResult, JsonObject, ProgressNotificationParam, ServerResult},
    service::{NotificationContext, RequestContext},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Entry, Kind, NoArgs, TestServer, parse, schema, text, tool_error};

#[derive(Debug, Deserialize, JsonSchema)]
struct ProgressArgs {
    /// The progress values to send, in this order.
    values: Vec<f64>,
    /// The total to send with each, if any.
    #[serde(default)]
    total: Option<f64>,
}

/// The answers `malformed` can give.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Shape {
    /// A valid tool result (one text block, `"valid"`).
    Valid,
    /// `{}`: no `content` at all.
    Empty,
    /// A content block of type `hologram`, which no MCP version defines.
    UnknownContent,
    /// `content` a string, not an array.
    ContentNotArray,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct MalformedArgs {
    /// The answer to give.
    shape: Shape,
}

/// The parity tools' listing entries.
pub(super) fn entries() -> Vec<Entry> {
    let tool = |name: &str, description: &str, schema, kind| Entry {
        tool: rmcp::model::Tool::new(name.to_string(), description.to_string(), schema),
        kind,
    };
    vec![
        tool(
            "echo_meta",
            "Answer with the `_meta` of the request as received (JSON text).",
            schema::<NoArgs>(),
            Kind::EchoMeta,
        ),
        tool(
            "progress",
            "Send one progress notification per value of `values`, in order, then answer.",
            schema::<ProgressArgs>(),
            Kind::Progress,
        ),
        tool(
            "malformed",
            "Answer with a result that is not a valid tool result (`shape`: empty, \
             unknown-content, content-not-array) or with a valid one (valid). Over stdio only.",
            schema::<MalformedArgs>(),
            Kind::Malformed,
        ),
    ]
}

/// `echo_meta`: the request's `_meta`, as received.
pub(super) fn echo_meta(context: &RequestContext<RoleServer>) -> rmcp::model::CallToolResponse {
    // `MetaObject` serialises as the JSON object it holds.
    text(
        serde_json::to_string(&context.meta)
            .unwrap_or_else(|e| format!("unserialisable _meta: {e}")),
    )
}

/// `progress`: the notifications, then the answer.
pub(super) async fn progress(
    args: &JsonObject,
    context: &RequestContext<RoleServer>,
) -> Result<rmcp::model::CallToolResponse, ErrorData> {
    let args = parse::<ProgressArgs>(args)?;
    let Some(token) = context.meta.get_progress_token() else {
        return Ok(text("sent 0 (no progress token)"));
    };
    for value in &args.values {
        let mut param = ProgressNotificationParam::new(token.clone(), *value);
        if let Some(total) = args.total {
            param = param.with_total(total);
        }
        context
            .peer
            .notify_progress(param)
            .await
            .map_err(|e| ErrorData::internal_error(format!("cannot send progress: {e}"), None))?;
    }
    Ok(text(format!("sent {}", args.values.len())))
}

/// `malformed` without [`Faults`] in front: it cannot answer as asked.
pub(super) fn malformed_unserved() -> rmcp::model::CallToolResponse {
    tool_error("malformed answers are made over stdio only (see demo_servers::testing::Faults)")
}

/// The raw result `malformed` answers with for `shape`.
fn malformed_result(shape: Shape) -> Value {
    match shape {
        Shape::Valid => json!({"content": [{"type": "text", "text": "valid"}]}),
        Shape::Empty => json!({}),
        Shape::UnknownContent => {
            json!({"content": [{"type": "hologram", "data": "a shape no MCP version defines"}]})
        }
        Shape::ContentNotArray => json!({"content": "a string, not a list of blocks"}),
    }
}

/// A [`TestServer`] that answers `malformed` with the raw result asked for (see the module
/// docs); everything else is the server's own answer.
///
/// ```
/// use demo_servers::testing::{Faults, TestServer, TestServerOptions};
/// let server = Faults(TestServer::new(TestServerOptions::default().parity_tools(true)));
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct Faults(pub TestServer);

impl Service<RoleServer> for Faults {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        if let ClientRequest::CallToolRequest(call) = &request
            && call.params.name == "malformed"
            && self.0.options.parity_tools
        {
            self.0.count_call();
            let args = call.params.arguments.clone().unwrap_or_default();
            let shape = parse::<MalformedArgs>(&args)?.shape;
            return Ok(ServerResult::CustomResult(CustomResult(malformed_result(
                shape,
            ))));
        }
        let lists_tools = matches!(request, ClientRequest::ListToolsRequest(_));
        let answer = self.0.handle_request(request, context).await?;
        match answer {
            ServerResult::ListToolsResult(list)
                if lists_tools && self.0.options.vendor_tools && list.next_cursor.is_none() =>
            {
                // The last page, with the vendor's definitions as they are (see `vendor.rs`).
                let mut json = serde_json::to_value(&list)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                if let Some(Value::Array(tools)) = json.get_mut("tools") {
                    tools.extend(super::vendor::vendor_tools());
                }
                Ok(ServerResult::CustomResult(CustomResult(json)))
            }
            answer => Ok(answer),
        }
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.handle_notification(notification, context).await
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        Service::<RoleServer>::get_info(&self.0)
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        Service::<RoleServer>::supported_protocol_versions(&self.0)
    }
}
