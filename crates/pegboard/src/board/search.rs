//! Tool search on the board: one snapshot, no lock, an index built once per board change.

use super::PegBoard;
use crate::search::{MAX_LIMIT, SearchIndex, ToolMatch};

impl PegBoard {
    /// The tools that best fit `query`, best first.
    ///
    /// A tool whose name is the query, as on the board (`fs-read_file`) or on its server
    /// (`read_file`), is always first; the others follow by a lexical ranking (BM25F over the
    /// tool's name split into words, title, description, namespace and parameters, with
    /// stemming): see [`crate::search`].
    ///
    /// Runs on one snapshot without a lock, like every read. The index is part of the snapshot:
    /// the first search after a change builds it, analysing only the services whose tools
    /// changed; every later search on that board reuses it.
    ///
    /// # Bad input
    /// - `limit` is clamped to `1..=100` ([`MAX_LIMIT`]): 0 asks for one result, 10,000 for 100.
    /// - An empty or blank query finds nothing (an empty `Vec`).
    /// - Only the first 4 KiB of a query are read ([`crate::search::MAX_QUERY_BYTES`], cut at a
    ///   character boundary); the rest is ignored, so a 1 MB query is as fast as a long one.
    ///
    /// ```
    /// use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
    /// use pegboard::PegBoard;
    ///
    /// #[derive(Clone)]
    /// struct Files { tool_router: rmcp::handler::server::router::tool::ToolRouter<Self> }
    ///
    /// #[tool_router]
    /// impl Files {
    ///     #[tool(description = "Read a text file from disk")]
    ///     async fn read_file(&self) -> String { String::new() }
    ///     #[tool(description = "List the entries of a directory")]
    ///     async fn list_directory(&self) -> String { String::new() }
    /// }
    /// #[tool_handler]
    /// impl ServerHandler for Files {}
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    /// tokio::spawn(async move {
    ///     let server = Files { tool_router: Files::tool_router() }.serve(server_io).await?;
    ///     server.waiting().await?;
    ///     anyhow::Ok(())
    /// });
    /// let board = PegBoard::new();
    /// board.add_service(Some("fs".into()), ().into_dyn().serve(client_io).await?).await?;
    ///
    /// let found = board.search_tools("what entries are in this directory?", 5);
    /// assert_eq!(found[0].tool.name, "fs-list_directory");
    /// assert!(found[0].score > 0.0);
    ///
    /// // An exact name, on the board or on its server, always comes first.
    /// assert_eq!(board.search_tools("read_file", 5)[0].tool.name, "fs-read_file");
    /// assert!(board.search_tools("   ", 5).is_empty());
    /// # Ok(()) }
    /// ```
    pub fn search_tools(&self, query: &str, limit: usize) -> Vec<ToolMatch> {
        let limit = limit.clamp(1, MAX_LIMIT);
        self.snapshot().search_index().search(query, limit)
    }

    /// The search index of the current board (built now if this board was not searched yet).
    ///
    /// Cheap to clone and immutable: it keeps answering for the board as it was.
    pub fn search_index(&self) -> SearchIndex {
        self.snapshot().search_index().clone()
    }
}
