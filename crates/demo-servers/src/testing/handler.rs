//! The MCP side of [`TestServer`]: its handshake (one protocol generation or all), tool list and
//! calls.

// The server's own helpers (argument types, `Kind`, `text`, `parse`) and its rmcp imports.
use super::*;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResponse,
};

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if self.options.ask_tool {
            capabilities.prompts = Some(Default::default());
            capabilities.resources = Some(Default::default());
        }
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                TEST_SERVER_NAME,
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "PegBoard test server: echo, sleep, crash, add_tool, remove_tool, pid.",
            );
        if self.options.only_2026 {
            // With a version that has no `initialize` as its own, rmcp refuses `initialize`.
            config.with_protocol_version(ProtocolVersion::V_2026_07_28)
        } else {
            config
        }
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.options.only_2026 {
            std::borrow::Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.read()
            .iter()
            .find(|e| e.tool.name == name)
            .map(|e| e.tool.clone())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.counters.list_calls.fetch_add(1, Ordering::SeqCst);
        self.event();
        let failing =
            self.counters
                .failing_lists
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if failing.is_ok() {
            return Err(ErrorData::internal_error(
                "tools/list failed (on purpose)",
                None,
            ));
        }
        let mut paused = self.counters.lists_paused.subscribe();
        let _ = paused.wait_for(|paused| !*paused).await;
        if self.options.hang_list {
            // Never answer; only give the task up once the client cancels the request.
            context.ct.cancelled().await;
            return Err(ErrorData::internal_error("tools/list cancelled", None));
        }
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.count_call();
        let name = request.name.as_ref();
        let kind = self
            .read()
            .iter()
            .find(|e| e.tool.name == name)
            .map(|e| e.kind)
            .ok_or_else(|| ErrorData::invalid_params(format!("tool not found: {name}"), None))?;
        if kind == Kind::Ask {
            let modern = context
                .protocol_version()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
            return if modern {
                mrtr::call(&request)
            } else {
                mrtr::call_directly(&request, &context).await
            };
        }
        let args = request.arguments.unwrap_or_default();
        match kind {
            Kind::Echo => Ok(text(parse::<EchoArgs>(&args)?.text)),
            Kind::Sleep => {
                let ms = parse::<SleepArgs>(&args)?.ms;
                // Tests of a process wait for this line to know a call is in flight.
                tracing::info!(ms, "sleep started");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                        // Tests of a process wait for this line to know a call ran to its end.
                        tracing::info!(ms, "sleep finished");
                        Ok(text(format!("slept {ms} ms")))
                    }
                    _ = context.ct.cancelled() => {
                        self.counters.cancelled.fetch_add(1, Ordering::SeqCst);
                        self.event();
                        tracing::info!(ms, "sleep cancelled by the client");
                        Err(ErrorData::internal_error("sleep cancelled", None))
                    }
                }
            }
            Kind::Crash => {
                if self.options.exit_on_crash {
                    tracing::warn!("crash requested: exiting with code 3");
                    std::process::exit(3);
                }
                Ok(tool_error(
                    "crash requested, but exit_on_crash is off (in-process server)",
                ))
            }
            Kind::AddTool => {
                let new = parse::<NameArgs>(&args)?.name;
                if !valid_tool_name(&new) {
                    return Ok(tool_error(format!(
                        "invalid tool name {new:?} (1-128 chars of [A-Za-z0-9_.-])"
                    )));
                }
                if !self.add_tool_silently(&new) {
                    return Ok(tool_error(format!("tool {new:?} already exists")));
                }
                Self::notify_changed(&context).await?;
                Ok(text(format!(
                    "added tool {new}; {} tools now",
                    self.read().len()
                )))
            }
            Kind::RemoveTool => {
                let old = parse::<NameArgs>(&args)?.name;
                if !self.remove_tool_silently(&old) {
                    return Ok(tool_error(format!("no tool named {old:?}")));
                }
                Self::notify_changed(&context).await?;
                Ok(text(format!(
                    "removed tool {old}; {} tools now",
                    self.read().len()
                )))
            }
            Kind::Pid => Ok(text(std::process::id().to_string())),
            Kind::Extra | Kind::Listing | Kind::Ask => Ok(text(name.to_string())),
            Kind::EchoMeta => Ok(super::parity::echo_meta(&context)),
            Kind::Progress => super::parity::progress(&args, &context).await,
            Kind::Malformed => Ok(super::parity::malformed_unserved()),
            Kind::Huge => Ok(text("x".repeat(parse::<HugeArgs>(&args)?.bytes))),
            Kind::Dynamic => Ok(text(format!(
                "{name} called with {}",
                serde_json::Value::Object(args)
            ))),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = if self.options.ask_tool {
            vec![mrtr::prompt()]
        } else {
            Vec::new()
        };
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.options.ask_tool || request.name != "ask" {
            return Err(ErrorData::invalid_params(
                format!("no prompt {}", request.name),
                None,
            ));
        }
        mrtr::get_prompt(&request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = if self.options.ask_tool {
            mrtr::resources()
        } else {
            Vec::new()
        };
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.options.ask_tool {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        mrtr::read_resource(&request)
    }
}
