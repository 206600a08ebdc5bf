//! A real rmcp server with prompts, resources, resource templates and completions, which
//! records what it was asked, for the catalog tests.

use std::sync::{Arc, Mutex};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
        PromptMessage, PromptsCapability, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
        ResourcesCapability, Role, ServerCapabilities, ServerConfig, Tool, ToolsCapability,
    },
    service::RequestContext,
};

/// A server offering `prompts` (each with a required `name` argument), `resources` and
/// `templates`, completions, and a `ping` tool when `tools` is set.
#[derive(Clone)]
pub struct Catalog {
    /// Marks its answers, to tell which server answered.
    pub label: &'static str,
    pub prompts: Vec<&'static str>,
    pub resources: Vec<&'static str>,
    pub templates: Vec<&'static str>,
    pub tools: bool,
    /// `prompts/list` answers an error.
    pub broken_prompts: bool,
    /// `prompts/list` and `resources/read` never answer.
    pub hangs: bool,
    /// `resources/list` answers pages of this many (cursor: the next index), when set.
    pub page: Option<usize>,
    /// What it was asked, one line a request: `get_prompt NAME ARGS`, `read URI`,
    /// `complete REF ARG=VALUE`.
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl Catalog {
    pub fn new(label: &'static str) -> Self {
        Self {
            label,
            prompts: vec!["greet"],
            resources: Vec::new(),
            templates: Vec::new(),
            tools: true,
            broken_prompts: false,
            hangs: false,
            page: None,
            seen: Arc::default(),
        }
    }

    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    fn record(&self, line: String) {
        self.seen.lock().unwrap().push(line);
    }

    /// A URI it serves: one of its resources, or a match of one of its templates' prefixes.
    fn serves(&self, uri: &str) -> bool {
        self.resources.contains(&uri)
            || self.templates.iter().any(|t| {
                t.split('{')
                    .next()
                    .is_some_and(|head| uri.starts_with(head))
            })
    }
}

impl ServerHandler for Catalog {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        caps.prompts = Some(PromptsCapability::default());
        caps.resources = Some(ResourcesCapability::default());
        caps.completions = Some(Default::default());
        if self.tools {
            caps.tools = Some(ToolsCapability::default());
        }
        ServerConfig::new(caps).with_server_info(Implementation::new(self.label, "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if !self.tools {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListToolsRequestMethod,
            >());
        }
        let tool = Tool::new("ping", "answers pong", Arc::new(Default::default()));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("pong")]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if self.hangs {
            std::future::pending::<()>().await;
        }
        if self.broken_prompts {
            return Err(ErrorData::internal_error("the prompt store is down", None));
        }
        let prompts = self
            .prompts
            .iter()
            .map(|name| {
                Prompt::new(
                    *name,
                    Some(format!("{} says hello", self.label)),
                    Some(vec![PromptArgument::new("name").with_required(true)]),
                )
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    /// The prompt greets its `name` argument, embeds the server's first resource and links
    /// its `ui://` widget.
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        self.record(format!("get_prompt {} {args}", request.name));
        if !self.prompts.contains(&request.name.as_str()) {
            return Err(ErrorData::invalid_params("no such prompt", None));
        }
        let who = args["name"].as_str().unwrap_or("nobody");
        let mut messages = vec![PromptMessage::new_text(
            Role::User,
            format!("{} greets {who}", self.label),
        )];
        if let Some(uri) = self.resources.first() {
            messages.push(PromptMessage::new_resource(
                Role::User,
                uri.to_string(),
                Some("text/plain".into()),
                Some(format!("{}:{uri}", self.label)),
                None,
                None,
                None,
            ));
        }
        messages.push(PromptMessage::new_resource_link(
            Role::User,
            Resource::new("ui://widget/a.html", "widget"),
        ));
        Ok(GetPromptResult::new(messages).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all: Vec<Resource> = self
            .resources
            .iter()
            .map(|uri| Resource::new(*uri, format!("{} {uri}", self.label)))
            .collect();
        let Some(page) = self.page else {
            return Ok(ListResourcesResult::with_all_items(all));
        };
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let end = (start + page).min(all.len());
        let mut result = ListResourcesResult::with_all_items(all[start..end].to_vec());
        result.next_cursor = (end < all.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self
            .templates
            .iter()
            .map(|t| ResourceTemplate::new(*t, format!("{} template", self.label)))
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    /// Contents `LABEL:URI` under the URI asked for; an unknown URI is an error that does not
    /// repeat it (so a huge URI's error size is the board's doing alone).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        self.record(format!("read {}", shorten(&uri)));
        if self.hangs {
            std::future::pending::<()>().await;
        }
        if !self.serves(&uri) {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let text = format!("{}:{uri}", self.label);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }

    /// Completes to `LABEL-VALUE`.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let what = match &request.r#ref {
            Reference::Prompt(p) => format!("prompt {}", p.name),
            Reference::Resource(r) => format!("resource {}", r.uri),
            _ => "other".to_string(),
        };
        let arg = &request.argument;
        self.record(format!("complete {what} {}={}", arg.name, arg.value));
        let values = vec![format!("{}-{}", self.label, arg.value)];
        Ok(CompleteResult::new(
            CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }
}

/// Huge URIs are recorded by their length.
fn shorten(uri: &str) -> String {
    if uri.len() > 200 {
        format!("<{} bytes>", uri.len())
    } else {
        uri.to_string()
    }
}
