//! The names the HTTP front, the express lane and the MCP handler share (read on every request:
//! named once, a name given as `&str` is parsed at each lookup).

use axum::http::HeaderName;

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// The streamable-HTTP header carrying the session id.
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// The protocol version a streamable-HTTP client speaks after its handshake.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// SEP-2243's method header (2026-07-28 clients).
pub(crate) const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");

/// Whether `path` is the MCP endpoint or below it (`/mcp`, `/mcp/…`; not `/mcpx`).
pub(crate) fn is_mcp_path(path: &str) -> bool {
    path.strip_prefix(MCP_PATH)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}
