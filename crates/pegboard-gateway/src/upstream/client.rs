//! [`UpstreamClient`]: the client handler the gateway connects to each server with. It advertises
//! what the gateway can relay (sampling, elicitation form and url, roots with listChanged) and
//! relays it: server-to-client requests (progress: see [`super::ProgressTap`]) to the session whose call caused them, log
//! messages to every session (PASSTHROUGH.md §1.1, §2, §5, §6).

use std::sync::Arc;

use pegboard::client::WatchingClient;
#[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
use rmcp::{
    ClientHandler, ErrorData, RoleClient,
    model::{
        ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequest,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationCapability, FormElicitationCapability, Implementation,
        ListRootsResult, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam,
        RootsCapabilities, SamplingCapability, ServerRequest, UrlElicitationCapability,
    },
    service::{InboundStreamOrigin, NotificationContext, RequestContext},
};

use super::{
    flights::Flight,
    hub::Hub,
    sides::{Declared, ListKind},
};

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
        let can = |declared: &Declared| match declared {
            Declared::Capabilities(caps) => capable(caps),
            // Checked when the request reaches its call (`call/bridge.rs`).
            Declared::PerRequest => true,
            Declared::Modern | Declared::NoSession => false,
        };
        let stateless = || {
            not_found(format!(
                "pegboard --stateless has no session to ask its client ({method})"
            ))
        };
        let undeclared = || {
            not_found(format!(
                "the client calling through pegboard did not declare support for {method}"
            ))
        };
        if let Some(InboundStreamOrigin::OutboundRequest(id)) =
            context.extensions.get::<InboundStreamOrigin>()
            && let Some(flight) = flights.by_id(id)
        {
            return match flight.declared() {
                Declared::NoSession => Err(stateless()),
                declared if can(&declared) => Ok(flight),
                _ => Err(undeclared()),
            };
        }
        let in_flight: Vec<(Arc<Flight>, Declared)> = flights
            .matching(|_| true)
            .into_iter()
            .map(|flight| {
                let declared = flight.declared();
                (flight, declared)
            })
            .collect();
        if in_flight.is_empty() {
            return Err(ErrorData::invalid_request(
                format!("pegboard: no client call is in flight on '{ns}' to answer {method}"),
                None,
            ));
        }
        if in_flight
            .iter()
            .all(|(_, declared)| matches!(declared, Declared::NoSession))
        {
            return Err(stateless());
        }
        let modern = in_flight
            .iter()
            .any(|(_, declared)| matches!(declared, Declared::Modern));
        let mut candidates: Vec<_> = in_flight
            .into_iter()
            .filter(|(_, declared)| can(declared))
            .map(|(flight, _)| flight)
            .collect();
        match candidates.len() {
            1 => Ok(candidates.remove(0)),
            0 if modern => Err(not_found(format!(
                "the client speaks MCP 2026-07-28 with pegboard, which cannot send it {method} \
                 mid-call, and this call has no input_required bridge (only tools/call has \
                 one); connect with protocol 2025-11-25"
            ))),
            0 => Err(undeclared()),
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

/// Whether a client that declared `elicitation` accepts a request of this mode (`url`, else
/// form): one that declares no modes supports form only.
pub(crate) fn can_elicit(elicitation: &ElicitationCapability, url: bool) -> bool {
    if url {
        elicitation.url.is_some()
    } else {
        elicitation.url.is_none() || elicitation.form.is_some()
    }
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
        if let Some(relay) = self.hub.downstream() {
            relay
                .resource_updated(self.hub.board_namespace(), &params.uri)
                .await;
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(relay) = self.hub.downstream() {
            relay
                .list_changed(self.hub.board_namespace(), ListKind::Resources)
                .await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(relay) = self.hub.downstream() {
            relay
                .list_changed(self.hub.board_namespace(), ListKind::Prompts)
                .await;
        }
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(relay) = self.hub.downstream() {
            relay.broadcast_log(self.hub.namespace(), params).await;
        }
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        const METHOD: &str = "sampling/createMessage";
        let flight = self.pick(&context, METHOD, |c| c.sampling.is_some())?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match flight.side().ask(request).await? {
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
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match flight.side().ask(request).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected(METHOD)),
        }
    }

    #[expect(deprecated, reason = "SEP-2577 legacy, live in 2025-11-25")]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        // Servers ask at startup and after list_changed, with no call in flight: answer the
        // union of the sessions' roots, which the gateway keeps current.
        let roots = self.hub.downstream().map(|r| r.roots()).unwrap_or_default();
        Ok(ListRootsResult::new(roots))
    }
}
