//! Code mode's tools: the definitions of `describe_tools` and `run_code` (`search_tools` is
//! search mode's), the server's instructions, and `describe_tools`' answer.

use std::sync::Arc;

use pegboard::PegBoard;
use pegboard_codemode::{ToolEntry, declarations};
use rmcp::{
    ErrorData,
    model::{CallToolResult, ContentBlock as Content, JsonObject, Tool},
};
use serde_json::{Map, Value, json};

use crate::identity::Client;

/// Tools one `describe_tools` may describe.
pub(crate) const MAX_DESCRIBED: usize = 50;
/// Bytes of a script `run_code` accepts.
pub(crate) const MAX_CODE: usize = 256 * 1024;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// What the server's `instructions` say in code mode.
pub(crate) fn instructions(search: &str, describe: &str, run: &str) -> String {
    format!(
        "This gateway runs your JavaScript against its tools. 1. `{search}` finds tools by task. \
         2. `{describe}` {{\"names\": [...]}} gives their TypeScript declarations. 3. `{run}` \
         {{\"code\": \"...\"}} runs an async script: `await tools.<namespace>.<name>(args)` or \
         `await call(\"<tool name>\", args)`, Promise.all for calls at once; `return` what you \
         need (as JSON), console.log is kept. Do loops, filtering and joins in the script; only \
         its return value comes back to you."
    )
}

/// The definition of `describe_tools`.
pub(crate) fn describe_tool(name: &str, search: &str, run: &str) -> Tool {
    let description = format!(
        "TypeScript declarations of tools, for scripts you run with `{run}`: a function per tool \
         (`tools.<namespace>.<name>(args): Promise<result>`), its argument and result types and \
         its description. Give the names `{search}` returned (at most {MAX_DESCRIBED})."
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_DESCRIBED,
                      "description": "Tool names, as search_tools returned them"}
        },
        "required": ["names"]
    });
    Tool::new(name.to_string(), description, object(schema))
}

/// The definition of `run_code`.
pub(crate) fn run_tool(name: &str, describe: &str, limits: &pegboard_codemode::Limits) -> Tool {
    let description = format!(
        "Run a JavaScript (ES2023) script that calls this board's tools, and get back only what \
         it returns. The script is the body of an async function: `const r = await \
         tools.units.convert({{value: 1, from: \"mi\", to: \"km\"}}); return r;`. A call returns \
         the tool's structuredContent, else its text; a failing tool throws ToolError (message, \
         tool). Use `{describe}` for the types. No fetch, files, timers or modules. Limits: \
         {}s, {} MiB, {} calls ({} at once), {} KiB returned.",
        limits.timeout_secs,
        limits.memory_mib,
        limits.max_calls,
        limits.max_parallel,
        limits.max_output_kib
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The script (an async function's body; `return` its result)"}
        },
        "required": ["code"]
    });
    Tool::new(name.to_string(), description, object(schema))
}

/// `describe_tools` with the model's arguments: declarations of the named tools `client` may
/// see; names it may not see are answered as names not on the board.
///
/// # Errors
/// `invalid_params` when `names` is missing, not a list of strings, empty or too long.
pub(crate) fn describe(
    board: &PegBoard,
    arguments: Option<&JsonObject>,
    client: &Client,
) -> Result<CallToolResult, ErrorData> {
    let names = arguments
        .and_then(|a| a.get("names"))
        .and_then(Value::as_array)
        .and_then(|names| names.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .ok_or_else(|| {
            invalid("`names` must be a list of tool names, as search_tools gave them")
        })?;
    if names.is_empty() || names.len() > MAX_DESCRIBED {
        return Err(invalid(&format!(
            "`names` must hold 1 to {MAX_DESCRIBED} tool names"
        )));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let visible = client.sees_everything() || client.may_see_tool(name);
        match (visible, entry(board, name)) {
            (true, Some(described)) => found.push(described),
            _ => missing.push(name),
        }
    }
    let mut text = declarations::render(&found);
    for name in missing {
        text.push_str(&format!(
            "// `{name}` is not a tool on this board: find tools with search_tools\n"
        ));
    }
    Ok(CallToolResult::success(vec![Content::text(text)]))
}

/// A board tool as code mode reaches it, with its JSON definition.
pub(crate) fn entry(board: &PegBoard, name: &str) -> Option<(ToolEntry, Value)> {
    let tool = board.get_tool(name)?;
    let entry = tool_entry(board, name);
    // The definition as `tools/list` lists it (`crate::definitions`): members rmcp's types do not
    // model, such as `outputSchema`'s siblings, stay in.
    let definition =
        Value::Object(pegboard::ListedTool::new(&tool, entry.namespace.as_deref()).to_json());
    Some((entry, definition))
}

/// Where `name` sits: its namespace and original name (the board name itself when the board
/// does not say).
pub(crate) fn tool_entry(board: &PegBoard, name: &str) -> ToolEntry {
    ToolEntry {
        name: name.to_string(),
        namespace: board.namespace_of(name),
        original: board
            .route(name)
            .map_or_else(|| name.to_string(), |route| route.original.to_string()),
    }
}

fn invalid(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_string(), None)
}
