//! Search mode: instead of every tool, `tools/list` offers `search_tools` and `call_tool`.
//!
//! With many tools on the board, listing them all costs the model thousands of tokens and
//! worsens its choices. In search mode the model searches the board ([`PegBoard::search_tools`])
//! and calls what it found through `call_tool`; a direct `tools/call` of any board tool still
//! works, for clients that remember names.
//!
//! - `search_tools` `{"query": string, "limit"?: integer}` (limit 5 by default, clamped to
//!   1..=100; a blank query is an `invalid_params` error; at most 4 KiB of a query are read)
//!   answers `structuredContent` `{"tools": [...]}`, best first, and the same JSON as text:
//!   each tool's definition as `tools/list` would list it (`crate::definitions`: every member
//!   its server sent, the board's `_meta`), with `namespace` added and `description` always
//!   present (empty when the server gave none).
//! - `call_tool` `{"name": string, "arguments"?: object}` routes like `tools/call`; a missing
//!   name or non-object arguments are `invalid_params` errors.
//! - If the board already has a tool named `search_tools` or `call_tool` at startup, the
//!   meta-tool is named `pegboard_search_tools` / `pegboard_call_tool` instead (logged).
//!
//! Turned on by the config's `toolSearch` or `--tool-search` ([`crate::config::SearchSettings`]),
//! or by [`crate::BoardServer::with_tool_search`].

#[cfg(feature = "embed")]
mod hybrid;
pub(crate) mod meta;
#[cfg(test)]
mod tests;

use pegboard::PegBoard;

use crate::identity::Client;
use rmcp::{
    ErrorData,
    model::{CallToolRequestParams, CallToolResult, Tool},
};

pub use crate::config::tool_search::{SearchSettings, ToolSearch};

/// The meta-tools' names, unless the board already uses them.
pub const SEARCH_TOOLS: &str = "search_tools";
/// See [`SEARCH_TOOLS`].
pub const CALL_TOOL: &str = "call_tool";

/// What the MCP handler does with a `tools/call`.
#[derive(Debug)]
pub enum Intercept {
    /// Answer with this (a `search_tools` call, or a bad `call_tool`).
    Answer(Result<CallToolResult, ErrorData>),
    /// Route this call to the board (the request as it came, or the tool `call_tool` names).
    Call(CallToolRequestParams),
}

/// Search mode over a board: settings and the meta-tools' names, fixed at startup.
#[derive(Clone, Debug)]
pub struct SearchMode {
    board: PegBoard,
    settings: SearchSettings,
    search_name: String,
    call_name: String,
    /// The hybrid ranker, when the settings ask for it (and the table could be read).
    #[cfg(feature = "embed")]
    hybrid: Option<std::sync::Arc<hybrid::Hybrid>>,
}

impl SearchMode {
    /// Search mode for `board`. Names that clash with board tools are replaced (and logged).
    pub fn new(board: PegBoard, settings: SearchSettings) -> Self {
        let pick = |name: &str| {
            if board.get_tool(name).is_some() {
                let other = format!("pegboard_{name}");
                tracing::warn!(
                    "the board already has a tool named `{name}`: the search-mode meta-tool is `{other}`"
                );
                other
            } else {
                name.to_string()
            }
        };
        let search_name = pick(SEARCH_TOOLS);
        let call_name = pick(CALL_TOOL);
        for pinned in &settings.pinned {
            if board.get_tool(pinned).is_none() {
                tracing::warn!("pinned tool `{pinned}` is not on the board (yet)");
            }
        }
        #[cfg(feature = "embed")]
        let hybrid = (settings.ranking == crate::config::Ranking::Hybrid)
            .then(hybrid::Hybrid::new)
            .flatten()
            .map(|h| {
                h.warm(&board);
                std::sync::Arc::new(h)
            });
        Self {
            board,
            settings,
            search_name,
            call_name,
            #[cfg(feature = "embed")]
            hybrid,
        }
    }

    /// `search_tools`' results for `client`: hybrid or lexical, as the settings say (code
    /// mode's `search_tools` answers with these too).
    pub(crate) fn ranked(
        &self,
        query: &str,
        limit: usize,
        client: &Client,
    ) -> Vec<serde_json::Value> {
        #[cfg(feature = "embed")]
        if let Some(hybrid) = &self.hybrid {
            return hybrid
                .search(&self.board, client, query, limit)
                .iter()
                .map(|h| meta::found_tool(&h.tool, h.namespace.as_deref()))
                .collect();
        }
        client
            .search_tools(&self.board, query, limit)
            .iter()
            .map(|m| meta::found_tool(&m.tool, m.namespace.as_deref()))
            .collect()
    }

    /// What `tools/list` returns in search mode to `client`, or `None` when it is off for this
    /// board now.
    pub fn list(&self, client: &Client) -> Option<Vec<Tool>> {
        let count = self.board.tool_count();
        if !self.settings.active(count) {
            return None;
        }
        let namespaces = meta::namespace_lines(&self.board);
        let mut tools = vec![
            meta::search_tool(&self.search_name, &self.call_name, count, &namespaces),
            meta::call_tool(&self.call_name, &self.search_name),
        ];
        // Pinned tools as the board lists them (rmcp's typed form of them: the answer is made
        // whole on its way out, `crate::definitions`).
        let mut pinned: Vec<_> = crate::definitions::listing(&self.board, client)
            .into_iter()
            .filter(|tool| {
                self.settings
                    .pinned
                    .iter()
                    .any(|p| p.as_str() == tool.tool().name.as_str())
            })
            .collect();
        pinned.sort_by_key(|tool| {
            self.settings
                .pinned
                .iter()
                .position(|p| p.as_str() == tool.tool().name.as_str())
        });
        tools.extend(pinned.iter().map(pegboard::ListedTool::to_rmcp));
        Some(tools)
    }

    /// A meta-tool's definition, by name.
    pub fn get_tool(&self, name: &str) -> Option<Tool> {
        if name == self.search_name {
            let namespaces = meta::namespace_lines(&self.board);
            let count = self.board.tool_count();
            Some(meta::search_tool(name, &self.call_name, count, &namespaces))
        } else if name == self.call_name {
            Some(meta::call_tool(name, &self.search_name))
        } else {
            None
        }
    }

    /// Handle a `tools/call` of `client`: a meta-tool is answered (with what the client may
    /// see) or unwrapped, any other call goes on.
    pub fn intercept(&self, request: CallToolRequestParams, client: &Client) -> Intercept {
        if request.name == self.search_name {
            return Intercept::Answer(meta::search(request.arguments.as_ref(), |q, l| {
                self.ranked(q, l, client)
            }));
        }
        if request.name != self.call_name {
            return Intercept::Call(request);
        }
        match meta::unwrap_call(&request) {
            Ok(inner) if inner.name == self.search_name => {
                Intercept::Answer(meta::search(inner.arguments.as_ref(), |q, l| {
                    self.ranked(q, l, client)
                }))
            }
            Ok(inner) if inner.name == self.call_name => Intercept::Answer(Err(
                ErrorData::invalid_params(format!("`{}` cannot call itself", self.call_name), None),
            )),
            Ok(inner) => Intercept::Call(inner),
            Err(error) => Intercept::Answer(Err(error)),
        }
    }
}

/// [`SearchMode::intercept`] when search mode is configured, else the call as it came.
pub fn intercept(
    mode: Option<&SearchMode>,
    request: CallToolRequestParams,
    client: &Client,
) -> Intercept {
    match mode {
        Some(mode) => mode.intercept(request, client),
        None => Intercept::Call(request),
    }
}
