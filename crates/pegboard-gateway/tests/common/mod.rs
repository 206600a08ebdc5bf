//! Real rmcp servers, in-process over `tokio::io::duplex`, for the integration tests.
// Each test binary uses some of these helpers (and of the re-exports below).
#![allow(dead_code, unused_imports)]

// The shared in-process helpers live once, in `demo-servers` (`testing::inproc`).
pub use demo_servers::testing::inproc::{
    FixedTools, Killable, add, connect, connect_killable, connect_watched, fingerprint, text,
};

use std::sync::Arc;

use pegboard::{BoxedService, ServiceOptions};

/// The client end of an in-process upstream (`client_io`), connected as `pegboard serve` connects
/// servers: an [`UpstreamClient`](pegboard_gateway::testing::UpstreamClient) over a
/// [`ProgressTap`](pegboard_gateway::testing::ProgressTap), with its
/// [`Hub`](pegboard_gateway::testing::Hub) in the options' extension, ready for
/// `add_service_with(Some(namespace), service, options)`.
pub async fn connect_as_gateway(
    client_io: tokio::io::DuplexStream,
    namespace: &str,
) -> (
    BoxedService,
    ServiceOptions,
    Arc<pegboard_gateway::testing::Hub>,
) {
    connect_as_gateway_with(client_io, namespace, rmcp::ClientLifecycleMode::Initialize).await
}

/// [`connect_as_gateway`] with the handshake of `lifecycle` (`Discover` for a server that speaks
/// only 2026-07-28, as `pegboard serve` falls back to for one).
pub async fn connect_as_gateway_with(
    client_io: tokio::io::DuplexStream,
    namespace: &str,
    lifecycle: rmcp::ClientLifecycleMode,
) -> (
    BoxedService,
    ServiceOptions,
    Arc<pegboard_gateway::testing::Hub>,
) {
    use pegboard_gateway::testing::{Hub, ProgressTap, UpstreamClient};
    use rmcp::{ClientServiceExt, ServiceExt};
    let (watching, watch) = pegboard::client::watch_tools();
    let hub = Hub::new(namespace);
    let client = UpstreamClient::new(watching, hub.clone(), true);
    let (read, write) = tokio::io::split(client_io);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(read, write);
    let service = client
        .into_dyn()
        .serve_with_lifecycle(ProgressTap::new(transport, hub.clone()), lifecycle)
        .await
        .expect("upstream handshake");
    let options = ServiceOptions::new().watch(watch).extension(hub.clone());
    (service, options, hub)
}
