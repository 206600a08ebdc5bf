//! Tool definitions as their servers sent them, on every path a client is told about tools.
//!
//! The one listing is the board's ([`PegBoard::listed_tools`]): each tool under its board name,
//! with the board's `_meta` added and every member its server sent, those rmcp's typed
//! [`rmcp::model::Tool`] does not model included (read from the server's raw `tools/list` by the
//! connection's [`pegboard::ToolListTap`]; `execution.taskSupport` of `required`/`optional` is
//! left out, as the gateway runs such tools itself: [`pegboard::execution_for_clients`]).
//! [`listing`] is that listing as one client sees it; the express lane serialises it as it is
//! (`express/tools_list.rs`), tool search answers from it (`search_mode/`), and so may any
//! later reader of definitions (code mode's declarations).
//!
//! rmcp's way ([`crate::BoardServer`]'s `tools/list`: 2026-07-28 sessions, `--no-express`,
//! search mode) can only answer a typed list, which drops those members, and rmcp serialises it
//! itself. So the answer is made whole on its way out: [`Whole`] puts back each tool's listed
//! definition in place of the typed one it was made from, over stdio in the transport
//! (`transport.rs`), over HTTP in a layer around rmcp's service (`http.rs`).

mod http;
mod transport;

use std::collections::HashMap;

use pegboard::{ListedTool, PegBoard};
use rmcp::model::{JsonObject, ListToolsResult, Tool};
use serde::Deserialize;
use serde_json::Value;

use crate::identity::Client;
use crate::policy::ClientView;

pub(crate) use http::{AsksToolsList, whole_tools};
pub(crate) use transport::WholeTools;

/// The board's tools as `client` is told about them (see the module docs): every tool it may
/// see, in the board's order, each as its server defined it.
pub(crate) fn listing(board: &PegBoard, client: &Client) -> Vec<ListedTool> {
    if client.sees_everything() {
        return board.listed_tools();
    }
    listing_in(board, &client.view(board))
}

/// [`listing`] for a client's `view` of the board.
pub(crate) fn listing_in(board: &PegBoard, view: &ClientView) -> Vec<ListedTool> {
    let mut tools = board.listed_tools();
    view.retain_tools(&mut tools, |t| &t.tool().name);
    tools
}

/// The board's tools that rmcp's typed form would cut (those with members rmcp does not
/// model), by board name: what a typed `tools/list` answer is made whole from.
pub(crate) struct Whole {
    tools: HashMap<String, ListedTool>,
}

impl Whole {
    /// For the board as it is now.
    pub(crate) fn of(board: &PegBoard) -> Self {
        let tools = board
            .listed_tools()
            .into_iter()
            .filter(|tool| tool.extra().is_some())
            .map(|tool| (tool.tool().name.to_string(), tool))
            .collect();
        Self { tools }
    }

    /// `typed` as the board lists it, when the board's tool of that name has members rmcp does
    /// not model and is the one `typed` was made from (a tool changed or removed since, or a
    /// tool of the gateway's own, such as tool search's, is left as it is).
    fn restore(&self, typed: &Tool) -> Option<JsonObject> {
        let listed = self.tools.get(typed.name.as_ref())?;
        (listed.to_rmcp() == *typed).then(|| listed.to_json())
    }

    /// `result` as JSON with its tools whole, or `None` when none of them needs it.
    pub(crate) fn result(&self, result: &ListToolsResult) -> Option<Value> {
        if self.tools.is_empty() {
            return None;
        }
        let mut restored = false;
        let mut tools = Vec::with_capacity(result.tools.len());
        for typed in &result.tools {
            match self.restore(typed) {
                Some(whole) => {
                    restored = true;
                    tools.push(Value::Object(whole));
                }
                None => tools.push(serde_json::to_value(typed).ok()?),
            }
        }
        if !restored {
            return None;
        }
        let mut json = serde_json::to_value(result).ok()?;
        json.as_object_mut()?
            .insert("tools".to_string(), Value::Array(tools));
        Some(json)
    }

    /// A JSON-RPC message as text with the tools of its `tools/list` result whole (its other
    /// members as they were), or `None` when it is no such answer or none of them needs it.
    pub(crate) fn message(&self, message: &[u8]) -> Option<Vec<u8>> {
        if self.tools.is_empty() {
            return None;
        }
        let mut json: Value = serde_json::from_slice(message).ok()?;
        let tools = json.get_mut("result")?.get_mut("tools")?.as_array_mut()?;
        let mut restored = false;
        for tool in tools.iter_mut() {
            let Ok(typed) = Tool::deserialize(&*tool) else {
                continue;
            };
            if let Some(whole) = self.restore(&typed) {
                *tool = Value::Object(whole);
                restored = true;
            }
        }
        restored.then(|| serde_json::to_vec(&json).ok()).flatten()
    }
}

#[cfg(test)]
mod tests;
