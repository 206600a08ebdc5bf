//! `NotesServer`: an in-memory notes store.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// One stored note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Numeric id, assigned in insertion order starting at 1.
    pub id: u64,
    /// Short title.
    pub title: String,
    /// Free-text body.
    pub body: String,
}

impl Note {
    fn render(&self) -> String {
        format!("#{} {}\n{}", self.id, self.title, self.body)
    }
}

#[derive(Debug, Default)]
struct Store {
    notes: Vec<Note>,
    next_id: u64,
}

impl Store {
    fn add(&mut self, title: String, body: String) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.notes.push(Note { id, title, body });
        id
    }
}

/// Arguments of `add_note`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddNoteArgs {
    /// Title of the new note.
    pub title: String,
    /// Body text of the new note.
    pub body: String,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Text to look for (case-insensitive substring of the title or the body).
    pub query: String,
}

/// An MCP server holding notes in memory, seeded with a few notes.
///
/// Clones share the same store. Server info name: `pegboard-demo-notes`.
/// Tools: `add_note {title, body}`, `search {query}`, `list_notes {}`.
#[derive(Debug, Clone)]
pub struct NotesServer {
    store: Arc<Mutex<Store>>,
    tool_router: ToolRouter<Self>,
}

impl Default for NotesServer {
    fn default() -> Self {
        Self::new()
    }
}

impl NotesServer {
    /// A store seeded with four notes.
    pub fn new() -> Self {
        let server = Self::empty();
        {
            let mut store = server.lock();
            store.add(
                "Shopping list".into(),
                "Milk, eggs, coffee beans and a new notebook.".into(),
            );
            store.add(
                "Gateway idea".into(),
                "PegBoard merges the tools of many MCP servers under namespaces.".into(),
            );
            store.add(
                "Rust reading".into(),
                "Finish the chapter on async Rust and tokio tasks.".into(),
            );
            store.add(
                "Meeting notes".into(),
                "Discussed release plan; ship the demo servers first.".into(),
            );
        }
        server
    }

    /// A store with no notes at all.
    pub fn empty() -> Self {
        Self {
            store: Arc::new(Mutex::new(Store::default())),
            tool_router: Self::tool_router(),
        }
    }

    /// A snapshot of all notes, in insertion order.
    pub fn notes(&self) -> Vec<Note> {
        self.lock().notes.clone()
    }

    /// Adds a note directly (without MCP) and returns its id.
    pub fn add(&self, title: impl Into<String>, body: impl Into<String>) -> u64 {
        self.lock().add(title.into(), body.into())
    }

    /// Notes whose title or body contains `query`, case-insensitively.
    pub fn find(&self, query: &str) -> Vec<Note> {
        let q = query.to_lowercase();
        self.lock()
            .notes
            .iter()
            .filter(|n| n.title.to_lowercase().contains(&q) || n.body.to_lowercase().contains(&q))
            .cloned()
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[tool_router]
impl NotesServer {
    /// Tool `add_note`.
    #[tool(
        name = "add_note",
        description = "Add a note with a title and a body to the notes store. Returns the new note's numeric id."
    )]
    async fn add_note(
        &self,
        Parameters(AddNoteArgs { title, body }): Parameters<AddNoteArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        if title.trim().is_empty() {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "title must not be empty",
            )]));
        }
        let id = self.add(title, body);
        Ok(CallToolResult::success(vec![ContentBlock::text(
            id.to_string(),
        )]))
    }

    /// Tool `search`.
    #[tool(
        name = "search",
        description = "Search the notes: case-insensitive substring match on title and body. Returns the matching notes as text."
    )]
    async fn search(
        &self,
        Parameters(SearchArgs { query }): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let hits = self.find(&query);
        let text = if hits.is_empty() {
            format!("no notes match {query:?}")
        } else {
            let mut out = format!("{} note(s) match {query:?}:", hits.len());
            for n in &hits {
                out.push_str("\n\n");
                out.push_str(&n.render());
            }
            out
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Tool `list_notes`.
    #[tool(
        name = "list_notes",
        description = "List every note in the store (id, title and body)."
    )]
    async fn list_notes(&self) -> Result<CallToolResult, ErrorData> {
        let notes = self.notes();
        let mut out = format!("{} note(s):", notes.len());
        for n in &notes {
            out.push_str("\n\n");
            out.push_str(&n.render());
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(out)]))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "pegboard-demo-notes",
    instructions = "An in-memory notes store: add, search and list notes."
)]
impl ServerHandler for NotesServer {}
