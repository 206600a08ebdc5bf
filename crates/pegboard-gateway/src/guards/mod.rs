//! Guards on what servers send: the description scan (heuristics for tool poisoning, with
//! invisible characters stripped) and caps on the size of tool results.
//!
//! | file | what it holds |
//! |---|---|
//! | `invisible.rs` | invisible and bidirectional-control characters: find, strip, show |
//! | `scan.rs`, `patterns.rs` | the per-tool scan: markers, findings; the phrases, tags and paths it looks for |
//! | `board.rs` | the board-wide scan: descriptions naming other servers' tools; a watcher that logs news |
//! | `caps.rs` | `maxResultTokens`: cut a typed result, and a cheap check on a raw answer's size |

pub(crate) mod board;
pub(crate) mod caps;
pub(crate) mod invisible;
mod patterns;
pub(crate) mod scan;

pub use board::{BoardTool, board_tools, other_server_mentions};
pub use scan::{Finding, Marker};
