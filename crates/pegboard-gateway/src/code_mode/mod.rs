//! Code mode: `tools/list` offers `search_tools`, `describe_tools` and `run_code`, and the model
//! writes one JavaScript program that calls many tools (docs/code-mode.md).
//!
//! - `search_tools` is search mode's ([`crate::search_mode`]).
//! - `describe_tools` `{"names": [...]}` answers TypeScript declarations of the named tools the
//!   client may see ([`pegboard_codemode::declarations`]).
//! - `run_code` `{"code": "..."}` runs the script in the sandbox ([`pegboard_codemode::run`]);
//!   every tool call it makes goes through the one call pipeline as the request's client
//!   (`host.rs`), and the answer is the script's returned value, its log and its calls
//!   (`answer.rs`).
//! - With `keepTools`, the board's tools are listed beside them; a plain `tools/call` of a
//!   board tool works either way.
//! - A meta-tool's name already on the board at startup becomes `pegboard_<name>` (logged).
//!
//! Turned on by the config's `codeMode` or `--code-mode` ([`crate::config::CodeModeSettings`]).

mod answer;
mod host;
mod meta;
#[cfg(test)]
mod tests;
mod watch;

use std::time::{Instant, SystemTime};

use pegboard::PegBoard;
use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResult, Tool},
    service::RequestContext,
};
use serde_json::Value;

use crate::config::CodeModeSettings;
use crate::identity::Client;
use crate::search_mode::SearchMode;
use crate::server::BoardServer;

/// How the records name a call a script made (the audit line's `via`).
pub(crate) const VIA: &str = "code";

/// What the MCP handler does with a `tools/call` in code mode.
#[derive(Debug)]
pub(crate) enum Intercept {
    /// Answer with this (`search_tools`, `describe_tools`, or a bad `run_code`).
    Answer(Result<CallToolResult, ErrorData>),
    /// Run this script.
    Run(String),
    /// Not a code-mode tool: route it to the board.
    Call(CallToolRequestParams),
}

/// Code mode over a board: settings and the tools' names, fixed at startup.
#[derive(Clone, Debug)]
pub(crate) struct CodeMode {
    board: PegBoard,
    settings: CodeModeSettings,
    /// `search_tools` ranks as search mode does, with its settings (`toolSearch.ranking`).
    ranker: SearchMode,
    search_name: String,
    describe_name: String,
    run_name: String,
}

impl CodeMode {
    /// Code mode for `board`, its `search_tools` ranked by `ranker` (search mode's, with the
    /// config's `toolSearch`). Names that clash with board tools are replaced (and logged).
    pub(crate) fn new(board: PegBoard, settings: CodeModeSettings, ranker: SearchMode) -> Self {
        let pick = |name: &str| {
            if board.get_tool(name).is_some() {
                let other = format!("pegboard_{name}");
                tracing::warn!(
                    "the board already has a tool named `{name}`: the code-mode tool is `{other}`"
                );
                other
            } else {
                name.to_string()
            }
        };
        Self {
            search_name: pick(crate::search_mode::SEARCH_TOOLS),
            describe_name: pick("describe_tools"),
            run_name: pick("run_code"),
            board,
            settings,
            ranker,
        }
    }

    /// The server's instructions in code mode.
    pub(crate) fn instructions(&self) -> String {
        meta::instructions(&self.search_name, &self.describe_name, &self.run_name)
    }

    /// What `tools/list` returns to `client`.
    pub(crate) fn list(&self, client: &Client) -> Vec<Tool> {
        let mut tools = vec![self.search_tool(), self.describe_tool(), self.run_tool()];
        if self.settings.keep_tools {
            let mut board_tools = self.board.mcp_tools();
            if !client.sees_everything() {
                client
                    .view(&self.board)
                    .retain_tools(&mut board_tools, |t| &t.name);
            }
            tools.extend(board_tools);
        }
        tools
    }

    /// A code-mode tool's definition, by name.
    pub(crate) fn get_tool(&self, name: &str) -> Option<Tool> {
        if name == self.search_name {
            Some(self.search_tool())
        } else if name == self.describe_name {
            Some(self.describe_tool())
        } else if name == self.run_name {
            Some(self.run_tool())
        } else {
            None
        }
    }

    fn search_tool(&self) -> Tool {
        let namespaces = crate::search_mode::meta::namespace_lines(&self.board);
        crate::search_mode::meta::search_tool(
            &self.search_name,
            &self.describe_name,
            self.board.tool_count(),
            &namespaces,
        )
    }

    fn describe_tool(&self) -> Tool {
        meta::describe_tool(&self.describe_name, &self.search_name, &self.run_name)
    }

    fn run_tool(&self) -> Tool {
        meta::run_tool(&self.run_name, &self.describe_name, &self.settings.limits)
    }

    /// Handle a `tools/call` of `client`.
    pub(crate) fn intercept(&self, request: CallToolRequestParams, client: &Client) -> Intercept {
        let arguments = request.arguments.as_ref();
        if request.name == self.search_name {
            // The same answer as search mode's `search_tools`, ranked the same way.
            Intercept::Answer(crate::search_mode::meta::search(
                arguments,
                |query, limit| self.ranker.ranked(query, limit, client),
            ))
        } else if request.name == self.describe_name {
            Intercept::Answer(meta::describe(&self.board, arguments, client))
        } else if request.name == self.run_name {
            match arguments.and_then(|a| a.get("code")) {
                Some(Value::String(code)) if code.len() > meta::MAX_CODE => {
                    Intercept::Answer(Err(ErrorData::invalid_params(
                        format!(
                            "`code` is {} bytes; a script may be at most {} bytes",
                            code.len(),
                            meta::MAX_CODE
                        ),
                        None,
                    )))
                }
                Some(Value::String(code)) => Intercept::Run(code.clone()),
                _ => Intercept::Answer(Err(ErrorData::invalid_params(
                    "`code` must be a string: the body of an async JavaScript function".to_string(),
                    None,
                ))),
            }
        } else {
            Intercept::Call(request)
        }
    }

    /// Run `code` for the request in `context` on `server`: the `run_code` answer. Cancelling
    /// the request (or ending its session) cancels the run and its calls in flight.
    pub(crate) async fn run(
        &self,
        server: &BoardServer,
        code: &str,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let watch = watch::RunWatch::begin(server, context, &self.run_name);
        let host = host::GatewayHost::new(server, context, watch.parent());
        let (at, started) = (SystemTime::now(), Instant::now());
        let run = pegboard_codemode::run(code, &host, &self.settings.limits);
        let outcome = tokio::select! {
            outcome = run => Some(outcome),
            () = context.ct.cancelled() => None,
            () = server.session_ended().cancelled() => None,
        };
        watch.end(outcome.as_ref());
        let result = answer::result(outcome.as_ref());
        answer::audit(
            server,
            context,
            &self.run_name,
            (at, started),
            code.len(),
            &result,
            outcome.as_ref(),
        );
        result
    }
}
