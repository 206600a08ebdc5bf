//! `DocsServer`: a tiny bundled documentation set about Rust and MCP.

use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// One bundled passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passage {
    /// Stable id, e.g. `rust-ownership`.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Text of the passage.
    pub text: &'static str,
}

/// The bundled doc set.
pub const PASSAGES: &[Passage] = &[
    Passage {
        id: "rust-ownership",
        title: "Ownership in Rust",
        text: "Every value in Rust has a single owner. When the owner goes out of scope the value is dropped. \
               Values can be moved to a new owner or borrowed through references; the borrow checker ensures \
               that a value has either one mutable reference or any number of shared references at a time.",
    },
    Passage {
        id: "rust-async",
        title: "Async Rust and tokio",
        text: "An async fn returns a future that does nothing until it is polled. A runtime such as tokio polls \
               futures on worker threads; tokio::spawn runs a future as an independent task, and dropping a \
               future cancels it at its next await point.",
    },
    Passage {
        id: "rust-errors",
        title: "Error handling in Rust",
        text: "Recoverable errors use Result<T, E> and are propagated with the ? operator. Libraries usually \
               define error enums (often with thiserror); applications often use anyhow for context-rich errors. \
               panic! is reserved for bugs.",
    },
    Passage {
        id: "mcp-overview",
        title: "What is MCP",
        text: "The Model Context Protocol (MCP) lets AI applications talk to servers that expose tools, resources \
               and prompts. Messages are JSON-RPC 2.0; a client first sends initialize, then can list and call tools.",
    },
    Passage {
        id: "mcp-transports",
        title: "MCP transports",
        text: "MCP servers are usually reached over stdio, where the client spawns the server as a child process \
               and exchanges newline-delimited JSON on stdin and stdout, or over streamable HTTP, where requests are \
               POSTed to one endpoint and responses may stream back as server-sent events.",
    },
    Passage {
        id: "mcp-tools",
        title: "MCP tools and list_changed",
        text: "A tool has a name, a description and a JSON Schema for its input. tools/list is paginated with \
               cursors. A server that advertises listChanged sends notifications/tools/list_changed when its tool \
               set changes, and clients should list the tools again.",
    },
];

/// Finds a passage by id (case-insensitive).
pub fn passage(id: &str) -> Option<&'static Passage> {
    PASSAGES
        .iter()
        .find(|p| p.id.eq_ignore_ascii_case(id.trim()))
}

/// Passages matching `query`, best first, with their scores.
///
/// The query is split into words; a passage scores 3 per word found in its title or id and 1 per
/// word found in its text (case-insensitive). Passages scoring 0 are omitted.
pub fn search_passages(query: &str) -> Vec<(&'static Passage, usize)> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut hits: Vec<(&'static Passage, usize)> = PASSAGES
        .iter()
        .map(|p| {
            let head = format!("{} {}", p.id, p.title).to_lowercase();
            let text = p.text.to_lowercase();
            let score = words
                .iter()
                .map(|w| {
                    (if head.contains(w.as_str()) { 3 } else { 0 })
                        + usize::from(text.contains(w.as_str()))
                })
                .sum();
            (p, score)
        })
        .filter(|(_, s)| *s > 0)
        .collect();
    hits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(b.0.id)));
    hits
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words to look for in the passages' ids, titles and text.
    pub query: String,
}

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// Passage id as returned by `search`, e.g. `mcp-overview`.
    pub id: String,
}

/// An MCP server over a small bundled doc set. Server info name: `pegboard-demo-docs`.
///
/// Tools: `search {query}` (same name as the notes server's, on purpose) and `read {id}`.
#[derive(Debug, Clone)]
pub struct DocsServer {
    tool_router: ToolRouter<Self>,
}

impl Default for DocsServer {
    fn default() -> Self {
        Self::new()
    }
}

impl DocsServer {
    /// A new docs server (stateless).
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl DocsServer {
    /// Tool `search`.
    #[tool(
        name = "search",
        description = "Search the bundled Rust/MCP documentation. Returns matching passage ids and titles, best match first, with a snippet; use `read` for the full text."
    )]
    async fn search(
        &self,
        Parameters(SearchArgs { query }): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let hits = search_passages(&query);
        let text = if hits.is_empty() {
            format!("no passages match {query:?}")
        } else {
            let mut out = format!("{} passage(s) match {query:?}:", hits.len());
            for (p, score) in hits {
                let snippet: String = p.text.chars().take(80).collect();
                out.push_str(&format!(
                    "\n- {} \"{}\" (score {score}): {snippet}...",
                    p.id, p.title
                ));
            }
            out
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Tool `read`.
    #[tool(
        name = "read",
        description = "Read the full text of one documentation passage by id."
    )]
    async fn read(
        &self,
        Parameters(ReadArgs { id }): Parameters<ReadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match passage(&id) {
            Some(p) => CallToolResult::success(vec![ContentBlock::text(format!(
                "{}\n\n{}",
                p.title, p.text
            ))]),
            None => {
                let ids: Vec<&str> = PASSAGES.iter().map(|p| p.id).collect();
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "no passage with id {id:?}; known ids: {}",
                    ids.join(", ")
                ))])
            }
        })
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "pegboard-demo-docs",
    instructions = "A tiny bundled doc set about Rust and MCP: search it, then read passages."
)]
impl ServerHandler for DocsServer {}
