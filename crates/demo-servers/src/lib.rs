//! Small, real MCP servers built with rmcp, used by PegBoard's demo and tests.
//!
//! Every server type here is a cheap-to-clone [`rmcp::ServerHandler`], so it can be served
//! in-process (for example over [`tokio::io::duplex`]) with `server.serve(io)`, over stdio, or
//! over streamable HTTP (see [`serve`]).
//!
//! * [`NotesServer`]: an in-memory notes store (`add_note`, `search`, `list_notes`).
//! * [`UnitsServer`]: a unit converter (`convert`, `list_units`).
//! * [`DocsServer`]: a tiny bundled doc set (`search`, `read`).
//! * `TestServer` (feature `testing`): a configurable server for liveness, pagination, cancellation and
//!   list_changed tests.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod docs;
pub mod launch;
pub mod notes;
pub mod serve;
#[cfg(feature = "testing")]
pub mod testing;
pub mod units;

pub use docs::DocsServer;
pub use notes::NotesServer;
#[cfg(feature = "testing")]
pub use testing::{TestServer, TestServerOptions};
pub use units::UnitsServer;
