//! Who is calling: named clients from the config's `clients` and `auth` sections, and the
//! [`Authenticator`] that maps a request's bearer token to one of them.
//!
//! - [`AccessConfig`] (`access.rs`): the sections parsed and checked ([`parse_access`],
//!   called by [`crate::config`]); [`AccessConfig::unmatched_patterns`] for the warning at start.
//! - [`Client`] (`client.rs`): a client at run time: what it may see ([`crate::policy`]), its
//!   limits ([`crate::limits`]).
//! - [`Authenticator`] (`authenticator.rs`): static tokens (SHA-256, constant-time) and JWTs
//!   of the issuer (`jwt.rs`, keys from `keys.rs` and `discovery.rs`).
//! - [`HttpAuth`] (`http.rs`): headers to client or to the 401/403 the MCP authorization spec
//!   asks for; the RFC 9728 metadata router.
//!
//! A client's token is never passed to an upstream server: nothing here hands it on, and no
//! `Debug` or message shows it.

mod access;
mod authenticator;
mod claims;
mod client;
mod discovery;
mod errors;
mod http;
mod jwt;
mod keys;
mod parse;
mod raw;
#[cfg(test)]
mod tests;
mod token;
mod verified;

pub use access::AccessConfig;
pub use authenticator::{AuthOptions, Authenticator};
pub use client::{CallAdmission, Client, DEFAULT_CLIENT};
pub use errors::AccessConfigError;
#[cfg(feature = "testing")]
pub use errors::AuthError;
pub use http::HttpAuth;
#[cfg(feature = "testing")]
pub use keys::KeyOptions;
pub use parse::parse_access;
pub use raw::RawClients;
