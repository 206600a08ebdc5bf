//! Which protocol generation a server supports, beyond the one its `initialize` handshake
//! negotiated (which can never name 2026-07-28): asked once with `server/discover`.
//!
//! The gateway offers its clients versions up to the oldest its servers support
//! (`BoardServer::supported_protocol_versions`). A server that only knows `initialize` answers
//! `server/discover` with "method not found" and stays at its negotiated version; an rmcp 3.11
//! server lists 2026-07-28, and then a 2026-07-28 client can speak it through the gateway too.

use std::time::Duration;

use rmcp::{
    Peer, RoleClient,
    model::{ClientCapabilities, Implementation, ProtocolVersion, RequestMetaObject},
};

/// How long a server may take to answer `server/discover`; one that never answers unknown
/// requests costs this once, when it starts.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The newest version `peer` says it supports, or `None` when it does not answer discovery.
pub(crate) async fn newest_supported(peer: &Peer<RoleClient>) -> Option<ProtocolVersion> {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
        ClientCapabilities::default(),
    );
    match tokio::time::timeout(PROBE_TIMEOUT, peer.discover(meta)).await {
        Ok(Ok(result)) => result
            .supported_versions
            .into_iter()
            .max_by(|a, b| a.as_str().cmp(b.as_str())),
        Ok(Err(e)) => {
            tracing::debug!("server/discover: {e} (a server of the initialize generation)");
            None
        }
        Err(_) => {
            tracing::debug!("server/discover: no answer within {PROBE_TIMEOUT:?}");
            None
        }
    }
}
