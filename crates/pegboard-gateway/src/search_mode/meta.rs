//! The two meta-tools: their definitions (which tell the model how to use them and what the
//! board holds) and the handling of `search_tools`' and `call_tool`'s arguments.

use std::sync::Arc;

use pegboard::{ListedTool, PegBoard, search::MAX_LIMIT};
use rmcp::{
    ErrorData,
    model::{CallToolRequestParams, CallToolResult, JsonObject, Tool},
};
use serde_json::{Map, Value, json};

/// Results of `search_tools` when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 5;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// One line per namespace: `- ns (N tools): what the server says it is`.
pub(crate) fn namespace_lines(board: &PegBoard) -> String {
    let mut lines = Vec::new();
    for service in board.services() {
        if service.tools == 0 {
            continue;
        }
        let name = service.namespace.as_deref().unwrap_or("(no namespace)");
        let summary = service.summary.unwrap_or_default();
        let summary: String = summary.chars().take(160).collect();
        let plural = if service.tools == 1 { "" } else { "s" };
        lines.push(format!(
            "- {name} ({} tool{plural}): {summary}",
            service.tools
        ));
    }
    if lines.is_empty() {
        return "The board holds no tools yet.".to_string();
    }
    lines.join("\n")
}

/// The definition of `search_tools`, under `name`, listing `namespaces`.
pub(crate) fn search_tool(name: &str, call_name: &str, tools: usize, namespaces: &str) -> Tool {
    let description = format!(
        "Find tools on this board by what you want to do. This board holds {tools} tools; only a \
         few are listed directly. Describe the task in a few words (\"convert miles to km\") or \
         give a tool's exact name; the best matches come first, with their input schemas. Then \
         call one with `{call_name}`.\nNamespaces on the board:\n{namespaces}"
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, or its exact name (at most 4 KiB are read)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                      "description": "How many tools to return (clamped to 1..=100)"}
        },
        "required": ["query"]
    });
    Tool::new(name.to_string(), description, object(schema))
}

/// The definition of `call_tool`, under `name`.
pub(crate) fn call_tool(name: &str, search_name: &str) -> Tool {
    let description = format!(
        "Call a tool of this board by the name `{search_name}` gave, with arguments that match \
         its input schema. The result is the tool's own result."
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name, as `{search_name}` returned it"},
            "arguments": {"type": "object", "description": "The tool's arguments"}
        },
        "required": ["name"]
    });
    Tool::new(name.to_string(), description, object(schema))
}

/// Run `search_tools` with the model's arguments.
///
/// # Errors
/// `invalid_params` when `query` is missing, not a string, or blank, or `limit` is not a number.
pub(crate) fn search(
    arguments: Option<&JsonObject>,
    rank: impl FnOnce(&str, usize) -> Vec<Value>,
) -> Result<CallToolResult, ErrorData> {
    let empty = Map::new();
    let arguments = arguments.unwrap_or(&empty);
    let query = match arguments.get("query") {
        Some(Value::String(query)) => query,
        Some(_) => return Err(invalid("`query` must be a string")),
        None => return Err(invalid("`query` is missing: say what the tool should do")),
    };
    if query.trim().is_empty() {
        return Err(invalid(
            "`query` is empty: say what the tool should do, or give its name",
        ));
    }
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(Value::Number(n)) => n
            .as_u64()
            .map_or(1, |n| usize::try_from(n).unwrap_or(MAX_LIMIT)),
        Some(_) => return Err(invalid("`limit` must be a whole number from 1 to 100")),
    };
    let tools = rank(query, limit);
    Ok(CallToolResult::structured(json!({ "tools": tools })))
}

/// One result of `search_tools` as the model sees it: the tool as `tools/list` lists it (see the
/// module docs of `crate::definitions`), with its namespace, and a description even when its
/// server gave none.
pub(crate) fn found_tool(tool: &pegboard::Tool, namespace: Option<&str>) -> Value {
    let mut listed = ListedTool::new(tool, namespace).to_json();
    listed
        .entry("description")
        .or_insert_with(|| Value::String(String::new()));
    listed.insert("namespace".to_string(), json!(namespace));
    Value::Object(listed)
}

/// The `tools/call` that `call_tool`'s arguments ask for.
///
/// # Errors
/// `invalid_params` when `name` is missing or not a string, or `arguments` is not an object.
pub(crate) fn unwrap_call(
    request: &CallToolRequestParams,
) -> Result<CallToolRequestParams, ErrorData> {
    let empty = Map::new();
    let outer = request.arguments.as_ref().unwrap_or(&empty);
    let name = match outer.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.clone(),
        Some(Value::String(_)) | None => {
            return Err(invalid(
                "`name` is missing: give the name of the tool to call",
            ));
        }
        Some(_) => return Err(invalid("`name` must be a string: the tool's name")),
    };
    let mut inner = CallToolRequestParams::new(name);
    match outer.get("arguments") {
        None | Some(Value::Null) => {}
        Some(Value::Object(arguments)) => inner = inner.with_arguments(arguments.clone()),
        Some(_) => {
            return Err(invalid(
                "`arguments` must be an object of the tool's arguments",
            ));
        }
    }
    inner.meta = request.meta.clone();
    // A 2026-07-28 client's retry after `input_required`: its answers go to the same tool.
    inner.input_responses = request.input_responses.clone();
    inner.request_state = request.request_state.clone();
    Ok(inner)
}

fn invalid(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_string(), None)
}
