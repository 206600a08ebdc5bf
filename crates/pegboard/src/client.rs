//! An rmcp client handler that tells the board when a server's tools change.
//!
//! MCP servers send `notifications/tools/list_changed` when their tool set changes. Connect with
//! the [`WatchingClient`] from [`watch_tools`] and hand the [`ToolListWatch`] to
//! [`ServiceOptions::watch`](crate::ServiceOptions::watch): the board then re-lists that service
//! (bursts are coalesced) and swaps its tools in one atomic step.
//!
//! ```no_run
//! # async fn demo(transport: tokio::io::DuplexStream) -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! use pegboard::{PegBoard, ServiceOptions};
//!
//! let board = PegBoard::new();
//! let (handler, watch) = pegboard::client::watch_tools();
//! let service = handler.into_dyn().serve(transport).await?;
//! board.add_service_with(Some("notes".into()), service, ServiceOptions::new().watch(watch)).await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use rmcp::{
    ClientHandler, RoleClient,
    model::{ClientCapabilities, ClientConfig, Implementation},
    service::NotificationContext,
};
use tokio::sync::watch;

/// Make a connected pair: the client handler to serve a transport with, and the watch to give the board.
pub fn watch_tools() -> (WatchingClient, ToolListWatch) {
    let (tx, rx) = watch::channel(0u64);
    let client = WatchingClient {
        changes: Arc::new(tx),
        info: ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
        ),
    };
    (client, ToolListWatch { changes: rx })
}

/// An rmcp [`ClientHandler`] that counts `tools/list_changed` notifications for the board.
///
/// It presents itself as `pegboard` (not rmcp's default identity) in the `initialize` handshake.
#[derive(Clone, Debug)]
pub struct WatchingClient {
    changes: Arc<watch::Sender<u64>>,
    info: ClientConfig,
}

impl WatchingClient {
    /// Present another client name and version to the server.
    #[must_use]
    pub fn with_client_info(mut self, name: &str, version: &str) -> Self {
        self.info.client_info = Implementation::new(name, version);
        self
    }

    /// Declare client capabilities to the server (sampling, elicitation, roots...). Declare only
    /// what a handler wrapping this one answers: `WatchingClient` itself answers none of them.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.info.capabilities = capabilities;
        self
    }
}

impl ClientHandler for WatchingClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!("server sent tools/list_changed");
        self.changes
            .send_modify(|count| *count = count.wrapping_add(1));
    }
}

/// The receiving end of a [`WatchingClient`]: hand it to [`ServiceOptions::watch`](crate::ServiceOptions::watch).
#[derive(Clone, Debug)]
pub struct ToolListWatch {
    pub(crate) changes: watch::Receiver<u64>,
}
