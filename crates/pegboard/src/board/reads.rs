//! Reads: each loads one snapshot, takes no lock, and never waits for a writer.

use std::collections::HashMap;

use arcstr::ArcStr;

use super::PegBoard;
use crate::PegBoardError;
use crate::{ListedTool, ServiceInfo, Tool, listed::add_board_meta, registry::ServiceId};

/// Where a call goes: see [`PegBoard::route`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route {
    /// The index of the service that answers the call.
    pub service: usize,
    /// The tool's name at that service.
    pub original: ArcStr,
}

impl PegBoard {
    /// The tool the LLM knows by `tool_name`.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_tool("web-search").is_none());
    /// ```
    pub fn get_tool(&self, tool_name: &str) -> Option<Tool> {
        self.snapshot().tools.get(tool_name).map(|e| e.tool.clone())
    }

    /// The tools named, in the order asked, or `None` if any one is missing.
    ///
    /// All are looked up on one snapshot, so the answer is never a mix of two boards.
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// assert_eq!(board.select_tools(&[]), Some(vec![]));
    /// assert_eq!(board.select_tools(&["web-search"]), None);
    /// ```
    pub fn select_tools(&self, tool_names: &[&str]) -> Option<Vec<Tool>> {
        let registry = self.snapshot();
        tool_names
            .iter()
            .map(|name| registry.tools.get(*name).map(|e| e.tool.clone()))
            .collect()
    }

    /// Why `tool_name` is off the board, if a service's [`ListingFilter`](crate::ListingFilter)
    /// withheld it at its last listing: the reason a call of it is answered with. `None` for a
    /// tool that is on the board or that no filter withheld. A lookup on one snapshot, no lock;
    /// meant for the path where a name was not found.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().withheld("web-search"), None);
    /// ```
    pub fn withheld(&self, tool_name: &str) -> Option<std::sync::Arc<str>> {
        let registry = self.snapshot();
        if registry.tools.contains_key(tool_name) {
            return None;
        }
        super::calls::withheld(&registry, tool_name)
    }

    /// The error for a name that is not on the board, as seen by a caller who may see only the
    /// tools `visible` admits: its close matches come from those alone, so the answer reveals
    /// no name the caller may not see (a hidden tool is answered as one that does not exist).
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// let error = board.not_found_for("web-search", |_| true);
    /// assert!(matches!(error, pegboard::PegBoardError::ToolNotFound { .. }));
    /// ```
    pub fn not_found_for(&self, tool_name: &str, visible: impl Fn(&str) -> bool) -> PegBoardError {
        let registry = self.snapshot();
        PegBoardError::ToolNotFound {
            name: tool_name.to_string(),
            suggestions: crate::suggest::close_matches(
                tool_name,
                registry
                    .tools
                    .keys()
                    .map(|n| n.as_str())
                    .filter(|n| visible(n)),
            ),
        }
    }

    /// Where a call to `tool_name` goes: the service index and the tool's original name.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().get_tool_route("web-search"), None);
    /// ```
    pub fn get_tool_route(&self, tool_name: &str) -> Option<(usize, String)> {
        self.snapshot()
            .tools
            .get(tool_name)
            .map(|e| (e.service.index(), String::from(e.original.as_str())))
    }

    /// [`get_tool_route`](Self::get_tool_route) without allocating: the original name is shared.
    ///
    /// For hot paths that route many calls (a gateway, an agent loop), this avoids the `String`
    /// that the seed signature of `get_tool_route` has to allocate on every lookup.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().route("web-search").is_none());
    /// ```
    pub fn route(&self, tool_name: &str) -> Option<Route> {
        self.snapshot().tools.get(tool_name).map(|e| Route {
            service: e.service.index(),
            original: e.original.clone(),
        })
    }

    /// The namespace that owns `tool_name`, if the tool is on the board and has one.
    pub fn namespace_of(&self, tool_name: &str) -> Option<String> {
        self.snapshot().owner_of(tool_name).flatten()
    }

    /// The board names of the tools in `namespace`, in registration order (empty if unknown).
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_tools_in_namespace("web").is_empty());
    /// ```
    pub fn list_tools_in_namespace(&self, namespace: &str) -> Vec<String> {
        self.snapshot()
            .namespaces
            .get(namespace)
            .map(|names| names.iter().map(|n| String::from(n.as_str())).collect())
            .unwrap_or_default()
    }

    /// The tools in `namespace`, in registration order (empty if unknown).
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_tools_in_namespace("web").is_empty());
    /// ```
    pub fn get_tools_in_namespace(&self, namespace: &str) -> Vec<Tool> {
        let registry = self.snapshot();
        registry
            .namespaces
            .get(namespace)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| registry.tools.get(n).map(|e| e.tool.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every board name, in registration order: what to send to the LLM.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_all_tools().is_empty());
    /// ```
    pub fn list_all_tools(&self) -> Vec<String> {
        self.snapshot()
            .tools
            .keys()
            .map(|n| String::from(n.as_str()))
            .collect()
    }

    /// Every tool, in registration order: what to send to the LLM.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_all_tools().is_empty());
    /// ```
    pub fn get_all_tools(&self) -> Vec<Tool> {
        self.snapshot()
            .tools
            .values()
            .map(|e| e.tool.clone())
            .collect()
    }

    /// Every tool as its clients are told about it, in registration order: board names, the
    /// board's `_meta` (the owning namespace under
    /// [`NAMESPACE_META_KEY`](crate::export::NAMESPACE_META_KEY), an MCP Apps
    /// `_meta.ui.resourceUri` namespaced as the board's resources, [`crate::uri`]), and every
    /// member the server sent, `execution` as [`execution_for_clients`](crate::execution_for_clients)
    /// says. Serialise the list for a `tools/list` result (see [`ListedTool`]).
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// let tools = serde_json::to_value(board.listed_tools()).unwrap();
    /// assert_eq!(tools, serde_json::json!([]));
    /// ```
    pub fn listed_tools(&self) -> Vec<ListedTool> {
        self.snapshot()
            .tools
            .values()
            .map(|entry| ListedTool::new(&entry.tool, entry.namespace.as_deref()))
            .collect()
    }

    /// [`listed_tools`](Self::listed_tools) as rmcp's type, which has no room for the members it
    /// does not model ([`Tool::extra`]): for an rmcp API that takes only that type.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().mcp_tools().is_empty());
    /// ```
    pub fn mcp_tools(&self) -> Vec<rmcp::model::Tool> {
        self.snapshot()
            .tools
            .values()
            .map(|entry| {
                let mut tool = entry.tool.to_rmcp();
                if let Some(ns) = &entry.namespace {
                    add_board_meta(tool.meta.get_or_insert_with(Default::default), ns);
                }
                tool
            })
            .collect()
    }

    /// Every namespace on the board, in order of registration.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_namespaces().is_empty());
    /// ```
    pub fn list_namespaces(&self) -> Vec<String> {
        self.snapshot()
            .namespaces
            .keys()
            .map(|n| String::from(&**n))
            .collect()
    }

    /// Number of tools on the board.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().tool_count(), 0);
    /// ```
    pub fn tool_count(&self) -> usize {
        self.snapshot().tools.len()
    }

    /// Number of services stored (removed ones not counted).
    ///
    /// This is not the next service's index: indices are never reused, so after a removal the
    /// highest index is at least `service_count()`. Use the index `add_service_with` returns.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().service_count(), 0);
    /// ```
    pub fn service_count(&self) -> usize {
        self.snapshot().services.iter().flatten().count()
    }

    /// Number of namespaces.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().namespace_count(), 0);
    /// ```
    pub fn namespace_count(&self) -> usize {
        self.snapshot().namespaces.len()
    }

    /// Every stored service: index, namespace, state (running or closed), number of tools.
    pub fn services(&self) -> Vec<ServiceInfo> {
        let registry = self.snapshot();
        let mut tools_per_service: HashMap<ServiceId, usize> = HashMap::new();
        for entry in registry.tools.values() {
            *tools_per_service.entry(entry.service).or_default() += 1;
        }
        registry
            .stored()
            .map(|(id, slot)| ServiceInfo {
                index: id.index(),
                namespace: slot.namespace.as_deref().map(str::to_string),
                state: slot.state(),
                tools: tools_per_service.get(&id).copied().unwrap_or(0),
                summary: slot.summary(),
            })
            .collect()
    }
}
