//! Calls: route a board name to its service and call the tool there under its original name.

use rmcp::model::{CallToolRequestParams, CallToolResult};

use super::PegBoard;
use crate::{CallOptions, PegBoardError, registry::Registry};

impl PegBoard {
    /// Call the tool the LLM knows as `tool_name` with these arguments.
    ///
    /// The call goes to the tool's service under the tool's original name. `arguments` must be a
    /// JSON object, or `null` for none. A tool that runs but reports failure is an `Ok` result
    /// with `is_error: Some(true)`, as MCP has it; an `Err` means the call did not get through.
    ///
    /// # Errors
    /// [`PegBoardError::ToolNotFound`] (with close matches), [`PegBoardError::ToolWithheld`],
    /// [`PegBoardError::InvalidArguments`],
    /// [`PegBoardError::ServiceError`], [`PegBoardError::ServiceClosed`],
    /// [`PegBoardError::Timeout`] (the request is cancelled towards the server).
    ///
    /// ```no_run
    /// # async fn demo(pegboard: pegboard::PegBoard) -> Result<(), pegboard::PegBoardError> {
    /// let result = pegboard.call_tool("web-search", serde_json::json!({"query": "rust programming"})).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool(
        &self,
        tool_name: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, PegBoardError> {
        self.call_tool_with(tool_name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool`](Self::call_tool) with options, such as a timeout for this call.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    ///
    /// ```no_run
    /// # async fn demo(board: pegboard::PegBoard) -> Result<(), pegboard::PegBoardError> {
    /// use std::time::Duration;
    /// let options = pegboard::CallOptions::new().timeout(Duration::from_secs(5));
    /// let result = board.call_tool_with("web-search", serde_json::json!({"query": "rust"}), options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_with(
        &self,
        tool_name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, PegBoardError> {
        let arguments = match arguments {
            serde_json::Value::Null => None,
            serde_json::Value::Object(map) => Some(map),
            other => {
                return Err(PegBoardError::InvalidArguments {
                    tool: tool_name.to_string(),
                    reason: format!(
                        "arguments must be a JSON object (or null), not {}",
                        json_kind(&other)
                    ),
                });
            }
        };
        // Route on the snapshot, keep the service alive with its Arc, and let go of the
        // snapshot before awaiting: no lock or guard is held across the call.
        let (slot, original) =
            {
                let registry = self.snapshot();
                let entry = registry
                    .tools
                    .get(tool_name)
                    .ok_or_else(|| missing(&registry, tool_name))?;
                let slot = registry.service(entry.service).cloned().ok_or(
                    PegBoardError::UnknownService {
                        index: entry.service.index(),
                    },
                )?;
                (slot, entry.original.clone())
            };
        let namespace = || slot.namespace.as_deref().map(str::to_string);
        if slot.peer.is_transport_closed() {
            return Err(PegBoardError::ServiceClosed {
                namespace: namespace(),
            });
        }
        let mut params = CallToolRequestParams::new(String::from(original.as_str()));
        params.arguments = arguments;
        let call = slot.peer.call_tool(params);
        let timeout = options
            .timeout
            .or(slot.call_timeout())
            .or(self.inner.call_timeout);
        let outcome = match timeout {
            None => call.await,
            // Dropping rmcp's call future on timeout sends `notifications/cancelled` to the server.
            Some(after) => {
                tokio::time::timeout(after, call)
                    .await
                    .map_err(|_| PegBoardError::Timeout {
                        operation: tool_name.to_string(),
                        namespace: namespace(),
                        after,
                    })?
            }
        };
        outcome.map_err(|source| match source {
            rmcp::ServiceError::TransportClosed => PegBoardError::ServiceClosed {
                namespace: namespace(),
            },
            source => PegBoardError::ServiceError {
                tool: tool_name.to_string(),
                namespace: namespace(),
                source,
            },
        })
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Why `name` is not on the board: a [`ListingFilter`](crate::ListingFilter) withheld it
/// (`ToolWithheld`, with its reason), else `ToolNotFound` with the closest names.
pub(super) fn missing(registry: &Registry, name: &str) -> PegBoardError {
    match withheld(registry, name) {
        Some(reason) => PegBoardError::ToolWithheld {
            name: name.to_string(),
            reason: reason.to_string(),
        },
        None => not_found(registry, name),
    }
}

/// Why the tool the board would call `name` is withheld, if a service's filter withheld it.
pub(super) fn withheld(registry: &Registry, name: &str) -> Option<std::sync::Arc<str>> {
    registry
        .stored()
        .filter(|(_, slot)| !slot.is_withdrawn())
        .find_map(|(_, slot)| slot.withheld(name))
}

/// A `ToolNotFound` with the closest names on the board.
pub(super) fn not_found(registry: &Registry, name: &str) -> PegBoardError {
    PegBoardError::ToolNotFound {
        name: name.to_string(),
        suggestions: crate::suggest::close_matches(name, registry.tools.keys().map(|n| n.as_str())),
    }
}
