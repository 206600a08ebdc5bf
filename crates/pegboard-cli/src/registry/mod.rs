//! Installing from an MCP Registry: its API ([`client`]), its `server.json` ([`server_json`]),
//! the conversion into a config entry ([`entry`]) and the entry's name ([`name`]).

pub mod client;
pub mod entry;
pub mod name;
pub mod server_json;

pub use client::{DEFAULT_REGISTRY, RegistryClient};
