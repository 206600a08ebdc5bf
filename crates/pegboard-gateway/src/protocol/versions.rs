//! Protocol generations: 2026-07-28 (`server/discover`, `input_required`, per-request metadata)
//! and the legacy ones before it (`initialize`; the server may ask the client mid-call).

use rmcp::{Peer, RoleClient, RoleServer, model::ProtocolVersion, service::RequestContext};

/// Whether `version` is 2026-07-28 or later.
pub(crate) fn is_2026(version: &ProtocolVersion) -> bool {
    // ISO dates compare as strings, as rmcp compares them.
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// Whether the upstream connection `peer` speaks 2026-07-28 (its handshake was `server/discover`).
pub(crate) fn upstream_speaks_2026(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| is_2026(&info.protocol_version))
}

/// Whether the client of this request speaks 2026-07-28: it takes `input_required` itself.
pub(crate) fn client_speaks_2026(context: &RequestContext<RoleServer>) -> bool {
    // As `RequestContext::protocol_version`, without copying the version.
    match context.meta.protocol_version() {
        Some(version) => is_2026(&version),
        None => context
            .peer
            .peer_info()
            .is_some_and(|info| is_2026(&info.protocol_version)),
    }
}

/// Whether the client of `peer` finished a legacy handshake (`initialize`, before 2026-07-28):
/// its results carry no `resultType`, and the server may ask it things mid-call.
pub(crate) fn legacy_client(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !is_2026(&info.protocol_version))
}
