//! PegBoard puts the tools of many MCP servers on one board for an LLM.
//!
//! Each server (an [rmcp](https://docs.rs/rmcp) client service) is added under a namespace; its
//! tools get prefixed names (`web` + `search` -> `web-search`), so tools of different servers never
//! clash, and a call by the prefixed name is routed back to the right server under the tool's
//! original name.
//!
//! # A tour
//!
//! A real rmcp server runs in-process here, connected over a `tokio::io::duplex` pipe; with a
//! child process or an HTTP server, only the transport changes.
//!
//! ```
//! use rmcp::{ServerHandler, ServiceExt, handler::server::wrapper::Parameters, tool, tool_handler, tool_router};
//! use pegboard::PegBoard;
//!
//! #[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
//! struct Query { query: String }
//!
//! #[derive(Clone)]
//! struct Web { tool_router: rmcp::handler::server::router::tool::ToolRouter<Self> }
//!
//! #[tool_router]
//! impl Web {
//!     #[tool(description = "Search the web")]
//!     async fn search(&self, Parameters(q): Parameters<Query>) -> String { format!("results for {}", q.query) }
//! }
//! #[tool_handler]
//! impl ServerHandler for Web {}
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (client_io, server_io) = tokio::io::duplex(64 * 1024);
//! tokio::spawn(async move {
//!     let server = Web { tool_router: Web::tool_router() }.serve(server_io).await?;
//!     server.waiting().await?;
//!     anyhow::Ok(())
//! });
//! let service = ().into_dyn().serve(client_io).await?;
//!
//! let board = PegBoard::new();
//! assert_eq!(board.add_service(Some("web".to_string()), service).await?, 1);
//! assert_eq!(board.list_all_tools(), ["web-search"]);
//! assert_eq!(board.get_tool_route("web-search"), Some((0, "search".to_string())));
//!
//! let result = board.call_tool("web-search", serde_json::json!({"query": "rust"})).await?;
//! assert_eq!(result.content[0].as_text().unwrap().text, "results for rust");
//!
//! // An unknown name is an error that says what was meant.
//! let err = board.call_tool("search", serde_json::json!({})).await.unwrap_err();
//! assert_eq!(err.to_string(), "tool `search` is not on the board; did you mean `web-search`?");
//! # Ok(()) }
//! ```
//!
//! # Where everything lives
//!
//! | module | what it holds |
//! |---|---|
//! | `board/mod.rs` | [`PegBoard`] itself and its one write path: a copy-on-write transaction that commits all or nothing and notifies watchers once |
//! | `board/builder.rs` | [`PegBoardBuilder`]: naming, timeouts, discovery limits |
//! | `board/reads.rs` | lock-free lookups: `get_tool`, `select_tools`, `get_tool_route`, listings, counts |
//! | `board/writes.rs` | `add_service`, `register_tool`, `unregister_tool`, `unregister_namespace` |
//! | `board/services.rs` | liveness (`wait_closed`), `remove_service`, `remove_closed_services`, `shutdown` |
//! | `board/calls.rs` | `call_tool`: routing a board name to its service under the original name |
//! | `board/refresh.rs` | re-listing a service (`refresh_*`) and following `tools/list_changed`, with retry |
//! | `board/search.rs` | `search_tools`: tool search on the snapshot's index |
//! | `search/` | the tool-search index: one immutable BM25F segment per service, exact names first |
//! | `registry.rs` | the immutable snapshot readers load (with its lazily built search index); `ServiceId`, the crate's service index |
//! | `slot.rs` | a stored service: its peer, its end signal, refresh tickets |
//! | `discovery.rs` | listing every page of a server's tools, with the limits |
//! | `tap.rs` | [`ToolListTap`]: the members of tool definitions rmcp's `Tool` drops, read from the `tools/list` answers as the transport receives them |
//! | `listed.rs` | [`ListedTool`]: a tool as the board lists it to clients (its `_meta`, and [`execution_for_clients`]) |
//! | `listing.rs` | [`ListingFilter`]: a per-service hook on every listing of tools and prompts (edit, drop, withhold with a reason) |
//! | `tool.rs`, `naming.rs`, `error.rs`, `options.rs` | [`Tool`], [`NamingPolicy`], [`PegBoardError`], [`ServiceOptions`] and [`CallOptions`] |
//! | `suggest.rs` | "did you mean" for unknown names, bounded work |
//! | `export.rs`, `client.rs` | provider JSON, the list_changed client handler |
//!
//! # What to read next
//! - [`PegBoard`]: every method, with the guarantees (atomic writes, lock-free reads).
//! - [`NamingPolicy`]: separators, LLM-safe names, stable hashes for long names.
//! - [`export`]: the board's tools as OpenAI, Anthropic or Gemini JSON (optionally `defer_loading`).
//! - [`search`] and [`PegBoard::search_tools`]: find the few tools that fit a request.
//! - [`client`]: follow a server's `tools/list_changed`.
//! - The board served as one MCP server (a gateway) lives in the `pegboard-gateway` crate.
//! - [`tokio_usage`]: sharing a board between tasks, concurrent calls, registering while serving.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod board;
pub mod client;
mod discovery;
mod error;
pub mod export;
mod listed;
mod listing;
pub mod naming;
mod options;
mod refresh;
mod registry;
pub mod search;
mod slot;
pub mod suggest;
mod tap;
mod tool;
pub mod uri;

#[doc = include_str!("../TOKIO_USAGE.md")]
pub mod tokio_usage {}

pub use board::{
    Added, DEFAULT_CALL_TIMEOUT, DEFAULT_DISCOVERY_TIMEOUT, PegBoard, PegBoardBuilder,
    PromptTarget, ResourceTarget, Route, ToolTarget,
};
pub use error::PegBoardError;
pub use listed::{ListedTool, execution_for_clients};
pub use listing::{Listing, ListingFilter, Named, Withheld};
pub use naming::NamingPolicy;
pub use options::{CallOptions, Extension, ServiceOptions};
pub use refresh::RefreshReport;
pub use search::ToolMatch;
pub use slot::{ServiceInfo, ServiceState};
pub use tap::{MAX_TAPPED_LINE, TappedReader, ToolListTap};
pub use tool::{Tool, ToolFields};

/// The shared string type of [`Tool`]'s text fields (re-exported from the `arcstr` crate):
/// one pointer, a clone is a reference count, and it compares with `&str` (`tool.name == "web-search"`).
pub use arcstr::ArcStr;

/// The service type the board stores: any rmcp client connection, type-erased.
///
/// Make one with `handler.into_dyn().serve(transport).await?` (`handler` may be `()`).
pub type BoxedService = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;
