//! How an upstream connection reaches the layers above it without knowing them: the traits it
//! owns, implemented there. [`Downstream`] is every session at once (a server's log messages,
//! list changes, resource updates, the roots to offer); [`CallSide`] is the client end of one
//! call in flight (where the server's progress and its requests during the call go: the
//! session's rmcp peer, the HTTP lane's event stream, or a 2026-07-28 client's `input_required`).

use std::{fmt, future::Future, pin::Pin};

#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    ErrorData, Peer, RoleServer,
    model::{
        ClientCapabilities, ClientResult, GetExtensions, LoggingMessageNotificationParam,
        ProgressNotificationParam, RequestId, Root, ServerRequest,
    },
    service::OriginatingRequestId,
};

/// A boxed future, as the traits here return (object safe).
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which list changed at a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

/// Every downstream session of the gateway, as one upstream connection sees them.
pub(crate) trait Downstream: Send + Sync + fmt::Debug {
    /// A resource of the server added under `namespace` (`None`: no prefix) changed.
    fn resource_updated<'a>(&'a self, namespace: Option<&'a str>, uri: &'a str) -> Boxed<'a, ()>;
    /// A list of the server added under `namespace` (`None`: no prefix) changed.
    fn list_changed<'a>(&'a self, namespace: Option<&'a str>, kind: ListKind) -> Boxed<'a, ()>;
    /// A log message of the server (namespace `namespace`) for every session that wants it.
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn broadcast_log<'a>(
        &'a self,
        namespace: &'a str,
        message: LoggingMessageNotificationParam,
    ) -> Boxed<'a, ()>;
    /// The roots to answer a server's `roots/list` with (no call to tie it to).
    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    fn roots(&self) -> Vec<Root>;
}

/// What the client of a call declared it can be asked during the call.
#[derive(Debug, Clone)]
pub(crate) enum Declared {
    /// A session with these capabilities (from its `initialize`).
    Capabilities(ClientCapabilities),
    /// Decided per request when the request reaches the call (a 2026-07-28 client's capabilities
    /// come with each request: see `call/bridge.rs`).
    PerRequest,
    /// A 2026-07-28 session with no way to be asked mid-call (rmcp sends it no requests).
    Modern,
    /// No session at all (`--stateless`).
    NoSession,
}

/// The client end of one call in flight.
pub(crate) trait CallSide: Send + Sync + fmt::Debug {
    /// What the client can be asked.
    fn declared(&self) -> Declared;
    /// Ask the client (sampling, elicitation, roots) on the call's behalf.
    fn ask(&self, request: ServerRequest) -> Boxed<'_, Result<ClientResult, ErrorData>>;
    /// Pass a progress notification of the call, already under the client's token.
    fn progress(&self, progress: ProgressNotificationParam) -> Boxed<'_, ()>;
}

/// A call's client end that is an rmcp session: its peer, and the id of the request the call
/// answers (which ties the server's requests to the call's own stream over HTTP).
#[derive(Debug, Clone)]
pub(crate) struct PeerSide {
    peer: Peer<RoleServer>,
    id: RequestId,
    /// Whether the session can be asked anything (not `--stateless`).
    can_ask: bool,
}

impl PeerSide {
    /// The call `id` of the session `peer`.
    pub(crate) fn new(peer: Peer<RoleServer>, id: RequestId, can_ask: bool) -> Self {
        Self { peer, id, can_ask }
    }
}

impl CallSide for PeerSide {
    fn declared(&self) -> Declared {
        if !self.can_ask {
            return Declared::NoSession;
        }
        match self.peer.peer_info() {
            Some(info) => Declared::Capabilities(info.capabilities.clone()),
            // No legacy handshake: the session speaks 2026-07-28.
            None => Declared::Modern,
        }
    }

    fn ask(&self, mut request: ServerRequest) -> Boxed<'_, Result<ClientResult, ErrorData>> {
        // Sent from a task of its own: inside the upstream's serve loop the task-local origin is
        // the *upstream's* request id, and rmcp would stamp it over ours (PASSTHROUGH.md §6).
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.id.clone()));
        let peer = self.peer.clone();
        Box::pin(async move {
            tokio::spawn(async move { peer.send_request(request).await })
                .await
                .map_err(|e| {
                    ErrorData::internal_error(format!("pegboard relay task failed: {e}"), None)
                })?
                .map_err(client_error)
        })
    }

    fn progress(&self, progress: ProgressNotificationParam) -> Boxed<'_, ()> {
        Box::pin(async move {
            if let Err(e) = self.peer.notify_progress(progress).await {
                tracing::debug!("could not forward progress downstream: {e}");
            }
        })
    }
}

/// Why a request to a downstream client got no result, as the error to pass on.
pub(crate) fn client_error(error: rmcp::ServiceError) -> ErrorData {
    match error {
        rmcp::ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(
            format!("pegboard could not reach the client: {other}"),
            None,
        ),
    }
}
