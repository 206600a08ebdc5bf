//! Who may see what: a client's `tools` patterns ([`ToolPatterns`]) and its view of the board
//! ([`ClientView`]), cached per board generation ([`ViewCache`]).
//!
//! The same patterns select tools and prompts by board name, and resources by server: a client
//! sees a server's resources when it may see at least one of its tools or prompts, unless its
//! `"resources"` is `false`. A name a client may not see must be answered exactly as a name
//! that does not exist (same code, same message, no close matches that reveal it): the
//! pipeline asks here and then takes its usual "not found" path.

mod pattern;
#[cfg(test)]
mod tests;
mod view;

pub use pattern::{PatternError, ToolPatterns};
pub use view::{ClientView, ViewCache};
