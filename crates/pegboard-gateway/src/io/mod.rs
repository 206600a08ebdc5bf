//! Layer 1: bytes. Lines in and out of pipes shared by two writers ([`writer`]), wide pipes
//! ([`pipe`]), the message-size limit on what servers send ([`limit`], [`limit_http`]), the id
//! scan it needs ([`message_id`]) and the count of its refusals ([`over_limit`]), spans of raw
//! JSON ([`span`]), the upstream HTTP client ([`http_client`]), and lines
//! for the terminal that never panic ([`stderr`]). Nothing here knows MCP
//! beyond the shape of a JSON-RPC line.

pub(crate) mod http_client;
pub(crate) mod limit;
pub(crate) mod limit_http;
mod message_id;
pub(crate) mod over_limit;
pub(crate) mod pipe;
pub(crate) mod span;
pub(crate) mod stderr;
pub(crate) mod writer;
