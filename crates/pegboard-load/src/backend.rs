//! The built-in backend (`pegboard-load backend`): an rmcp stdio server with a tool that does
//! nothing (`echo`), a tool that takes `ms` milliseconds (`work`), and as many filler tools as
//! asked for, so a board of 1,000 tools can be listed.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
        Tool,
    },
    service::RequestContext,
};
use serde_json::json;

/// The tools every backend has, before the fillers.
const BASE: usize = 2;

#[derive(Clone)]
struct Backend {
    tools: Arc<Vec<Tool>>,
}

fn schema(value: serde_json::Value) -> Arc<JsonObject> {
    match value {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

impl Backend {
    /// `total` tools in all (at least the two base tools).
    fn new(total: usize) -> Self {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Returns `text` unchanged.",
                schema(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                ),
            ),
            Tool::new(
                "work",
                "Waits `ms` milliseconds (like a tool doing I/O), then answers.",
                schema(
                    json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]}),
                ),
            ),
        ];
        // Fillers look like ordinary tools: a sentence of description, two typed arguments.
        for i in 0..total.saturating_sub(BASE) {
            tools.push(Tool::new(
                format!("filler_{i:04}"),
                format!("Filler tool number {i}: looks up a record by key and returns it as text."),
                schema(json!({
                    "type": "object",
                    "properties": {
                        "key": {"type": "string", "description": "The record's key."},
                        "limit": {"type": "integer", "minimum": 1, "description": "At most this many."}
                    },
                    "required": ["key"]
                })),
            ));
        }
        Self {
            tools: Arc::new(tools),
        }
    }
}

fn text(s: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(s)]).into()
}

impl ServerHandler for Backend {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("pegboard-load-backend", env!("CARGO_PKG_VERSION")),
        )
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => match args.get("text").and_then(|v| v.as_str()) {
                Some(t) => Ok(text(t.to_owned())),
                None => Err(ErrorData::invalid_params(
                    "echo needs a string `text`",
                    None,
                )),
            },
            "work" => {
                let ms = args
                    .get("ms")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(1)
                    .min(60_000);
                // tokio's timer rounds up to its 1 ms tick (a 1 ms sleep takes ~2 ms); a blocking
                // sleep on the blocking pool takes the time asked for, as a tool waiting on I/O would.
                tokio::task::spawn_blocking(move || std::thread::sleep(Duration::from_millis(ms)))
                    .await
                    .map_err(|e| ErrorData::internal_error(format!("work failed: {e}"), None))?;
                Ok(text(format!("worked {ms} ms")))
            }
            name if name.starts_with("filler_") => Ok(text(name.to_owned())),
            name => Err(ErrorData::invalid_params(
                format!("no tool named {name:?}"),
                None,
            )),
        }
    }
}

/// Serve the backend over stdio until the client closes it.
/// The backend's answer to `tools/list` with `total` tools, as one JSON-RPC line (for
/// `parse-cost`: what the harness reads of it).
pub fn tools_list_answer(total: usize) -> anyhow::Result<Vec<u8>> {
    let list = ListToolsResult::with_all_items(Backend::new(total).tools.to_vec());
    Ok(serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 1, "result": list}),
    )?)
}

pub async fn run(total_tools: usize) -> anyhow::Result<()> {
    let running = Backend::new(total_tools)
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    running.waiting().await?;
    Ok(())
}
