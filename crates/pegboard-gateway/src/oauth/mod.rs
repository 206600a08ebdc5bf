//! Logging in to `url` servers that ask for OAuth 2.1, and keeping their tokens fresh.
//!
//! The protocol is rmcp's (`auth` feature): discovery (RFC 9728, RFC 8414 / OIDC, issuer
//! checked), registration (pre-registered, Client ID Metadata Document, Dynamic Client
//! Registration), authorization code with PKCE, refresh. What PegBoard adds:
//! - [`login`] / [`logout`] / [`auth_state`]: `pegboard login`, `logout` and `auth`.
//! - [`Upstream`] and `OAuthHttpClient`: one connection's token on every request, refreshed
//!   ahead of expiry and after a 401, shared safely with other processes through the store
//!   (`crate::credentials`); a refused refresh closes the connection and marks the server as
//!   needing a login (`NeedsLogin`).
//! - `pending` and `wait_for_login`: the running gateway's view of servers waiting for a
//!   login, for the call pipeline's error message and the supervisor's restart.
//! - `elicit`: offering the authorization URL to an MCP client (URL-mode elicitation).
//!
//! Tokens are never logged (every type holding one redacts it in `Debug`), never sent to
//! another server than the one they were issued for, never passed downstream; the downstream
//! client's own token is never passed upstream.

mod callback;
mod client;
mod discovery;
pub(crate) mod elicit;
mod error;
mod in_store;
pub(crate) mod keeper;
pub(crate) mod login;
mod logout;
mod pending;
mod status;
mod token;

pub use error::LoginError;
pub use in_store::credentials_in_store;
pub use login::{LoggedIn, LoginOptions, login};
pub use logout::{LoggedOut, logout};
pub use status::{AuthState, auth_state};

pub(crate) use client::OAuthHttpClient;
pub(crate) use error::{NeedsLogin, needs_login};
pub(crate) use keeper::Upstream;
pub(crate) use pending::{pending, tools_of, wait_for_login};
