//! [`Connection`]: one server's live connection, handshake done, not yet on the board.

use std::sync::Arc;

use super::stderr::StderrTail;
use crate::upstream::Hub;

/// The connected (rmcp client) end of one server, as the board stores it.
pub type DynService = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;

/// A live connection, not yet on the board.
pub struct Connection {
    /// The rmcp client.
    pub service: DynService,
    /// Hand to the board so `tools/list_changed` is followed.
    pub watch: pegboard::client::ToolListWatch,
    /// The child's stderr tail (stdio servers only).
    pub stderr: Option<StderrTail>,
    /// Ties the connection's in-flight calls to downstream sessions.
    pub(crate) hub: Arc<Hub>,
    /// What the transport read of the server's `tools/list` answers that rmcp drops.
    pub(crate) tap: pegboard::ToolListTap,
}
