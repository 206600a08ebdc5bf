//! [`UpstreamClient`]: the client handler the gateway connects to each server with. It advertises
//! what the gateway can relay (sampling, elicitation form and url, roots with listChanged) and
//! relays it: server-to-client requests (progress: see [`super::ProgressTap`]) to the session whose call caused them, log
//! messages to every session (PASSTHROUGH.md §1.1, §2, §5, §6).
// Logging, sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25,
// which the gateway relays.
#![allow(deprecated)]

use std::sync::Arc;

use pegboard::client::WatchingClient;
use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceError,
    model::{
        ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequest,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationCapability, FormElicitationCapability, GetExtensions,
        Implementation, InputRequest, ListRootsResult, LoggingMessageNotificationParam,
        ResourceUpdatedNotificationParam, RootsCapabilities, SamplingCapability, ServerRequest,
        UrlElicitationCapability,
    },
    service::{InboundStreamOrigin, NotificationContext, OriginatingRequestId, RequestContext},
};

use serde_json::Value;

use super::{Flight, Hub};
use crate::relay::ListKind;

/// The gateway's rmcp [`ClientHandler`] for one upstream server.
#[derive(Clone, Debug)]
pub struct UpstreamClient {
    watching: WatchingClient,
    hub: Arc<Hub>,
    info: ClientConfig,
}

/// The capabilities the gateway serves on behalf of its clients.
fn capabilities() -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    caps.sampling = Some(SamplingCapability::default());
    caps.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::new())
            .with_url(UrlElicitationCapability::new()),
    );
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(true);
    caps.roots = Some(roots);
    caps
}

impl UpstreamClient {
    /// Wrap the board's tool-list watcher; `relay` says whether to advertise the client
    /// capabilities (not in `--stateless` mode, where no client can be asked).
    pub fn new(watching: WatchingClient, hub: Arc<Hub>, relay: bool) -> Self {
        let capabilities = if relay {
            capabilities()
        } else {
            ClientCapabilities::default()
        };
        Self {
            watching,
            hub,
            info: ClientConfig::new(
                capabilities,
                Implementation::new("pegboard", env!("CARGO_PKG_VERSION")),
            ),
        }
    }

    /// The session that must answer a server-to-client request: the one whose call's stream it
    /// came on (HTTP upstreams), else the only call in flight that can answer it.
    fn pick(
        &self,
        context: &RequestContext<RoleClient>,
        method: &str,
        capable: impl Fn(&ClientCapabilities) -> bool,
    ) -> Result<Arc<Flight>, ErrorData> {
        let flights = self.hub.flights();
        let ns = self.hub.namespace();
        let can = |f: &Flight| {
            f.can_ask
                && match &f.bridge {
                    // A 2026-07-28 client declares its capabilities per request: checked when
                    // the request reaches its call (`bridge.rs`).
                    Some(_) => true,
                    None => f
                        .ds_peer
                        .peer_info()
                        .is_some_and(|info| capable(&info.capabilities)),
                }
        };
        if let Some(InboundStreamOrigin::OutboundRequest(id)) =
            context.extensions.get::<InboundStreamOrigin>()
            && let Some(flight) = flights.by_id(id)
        {
            if !flight.can_ask {
                return Err(not_found(format!(
                    "pegboard --stateless has no session to ask its client ({method})"
                )));
            }
            return if can(&flight) {
                Ok(flight)
            } else {
                Err(not_found(format!(
                    "the client calling through pegboard did not declare support for {method}"
                )))
            };
        }
        let in_flight = flights.matching(|_| true);
        if in_flight.is_empty() {
            return Err(ErrorData::invalid_request(
                format!("pegboard: no client call is in flight on '{ns}' to answer {method}"),
                None,
            ));
        }
        if in_flight.iter().all(|f| !f.can_ask) {
            return Err(not_found(format!(
                "pegboard --stateless has no session to ask its client ({method})"
            )));
        }
        // No legacy handshake: the session speaks 2026-07-28, where rmcp sends no
        // server-to-client requests.
        let modern = in_flight
            .iter()
            .any(|f| f.bridge.is_none() && f.ds_peer.peer_info().is_none());
        let mut candidates: Vec<_> = in_flight.into_iter().filter(|f| can(f)).collect();
        match candidates.len() {
            1 => Ok(candidates.remove(0)),
            0 if modern => Err(not_found(format!(
                "the client speaks MCP 2026-07-28 with pegboard, which cannot send it {method} \
                 mid-call, and this call has no input_required bridge (only tools/call has \
                 one); connect with protocol 2025-11-25"
            ))),
            0 => Err(not_found(format!(
                "the client calling through pegboard did not declare support for {method}"
            ))),
            n => Err(ErrorData::invalid_request(
                format!(
                    "pegboard: {n} client calls are in flight on '{ns}'; cannot tell which client should \
                     answer {method}; connect this server over HTTP, or give its config entry \
                     \"session\": \"per-client\""
                ),
                None,
            )),
        }
    }
}

/// Send `request` to the flight's session, tied to the downstream call that caused it.
async fn ask(flight: &Flight, mut request: ServerRequest) -> Result<ClientResult, ErrorData> {
    // From a spawned task: the serve loop's task-local origin is the *upstream's* request id,
    // and rmcp would stamp it over ours (PASSTHROUGH.md §6).
    request
        .extensions_mut()
        .insert(OriginatingRequestId(flight.ds_id.clone()));
    let peer = flight.ds_peer.clone();
    let reply = tokio::spawn(async move { peer.send_request(request).await })
        .await
        .map_err(|e| ErrorData::internal_error(format!("pegboard relay task failed: {e}"), None))?;
    reply.map_err(client_error)
}

/// Why a request to a downstream client got no result, as the error to pass on.
pub(crate) fn client_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(
            format!("pegboard could not reach the client: {other}"),
            None,
        ),
    }
}

/// Whether a client that declared `elicitation` accepts a request of this mode (`url`, else
/// form): one that declares no modes supports form only.
pub(crate) fn can_elicit(elicitation: &ElicitationCapability, url: bool) -> bool {
    if url {
        elicitation.url.is_some()
    } else {
        elicitation.url.is_none() || elicitation.form.is_some()
    }
}

/// A 2026-07-28 client's answer (the result's JSON, as `inputResponses` carry it) as the result
/// the server asked for.
fn from_answer<T: serde::de::DeserializeOwned>(
    answer: Value,
    method: &str,
) -> Result<T, ErrorData> {
    serde_json::from_value(answer).map_err(|e| {
        ErrorData::invalid_params(
            format!("the client's answer to {method} is not a {method} result: {e}"),
            None,
        )
    })
}

fn not_found(message: String) -> ErrorData {
    ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, message, None)
}

fn unexpected(method: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the client answered {method} with another result type"),
        None,
    )
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.watching.on_tool_list_changed(context).await;
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(relay) = self.hub.relay() {
            relay
                .resource_updated(self.hub.board_namespace(), &params.uri)
                .await;
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(relay) = self.hub.relay() {
            relay.list_changed(ListKind::Resources).await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(relay) = self.hub.relay() {
            relay.list_changed(ListKind::Prompts).await;
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(relay) = self.hub.relay() {
            relay.broadcast_log(self.hub.namespace(), params).await;
        }
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        const METHOD: &str = "sampling/createMessage";
        let flight = self.pick(&context, METHOD, |c| c.sampling.is_some())?;
        if let Some(inlet) = &flight.bridge {
            let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
            return from_answer(inlet.ask(request, METHOD).await?, METHOD);
        }
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match ask(&flight, request).await? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(unexpected(METHOD)),
        }
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        const METHOD: &str = "elicitation/create";
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        let flight = self.pick(&context, METHOD, |c| {
            c.elicitation.as_ref().is_some_and(|e| can_elicit(e, url))
        })?;
        if let Some(inlet) = &flight.bridge {
            let request = InputRequest::Elicitation(ElicitRequest::new(params));
            return from_answer(inlet.ask(request, METHOD).await?, METHOD);
        }
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match ask(&flight, request).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected(METHOD)),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        // Servers ask at startup and after list_changed, with no call in flight: answer the
        // union of the sessions' roots, which the gateway keeps current.
        let roots = self.hub.relay().map(|r| r.roots()).unwrap_or_default();
        Ok(ListRootsResult::new(roots))
    }
}
