//! The streamable HTTP gateway: rmcp's `StreamableHttpService` at `/mcp`, behind our guards.
//!
//! Guards, in order: who the request is (401 or 403: `identity::HttpAuth`), then the sessions'
//! bounds per client and in all (429, 503: `sessions.rs`), then rmcp's own Origin check (403 when
//! present and not allowed: browsers' cross-site requests). rmcp's own Host check (DNS rebinding) stays on
//! inside the service. In front of them all, the express lane answers plain calls of open sessions
//! and checks for itself what they would (no Origin, the token, an allowed Host; see
//! `crate::express::http`); anything else it passes on unchanged. [`router`] puts the lane in as
//! the router's outermost layer, for mounting in another app; [`front`] keeps it apart, and
//! [`crate::http::serve::serve`] runs it on each request before the router is entered at all.
//!
//! With a store (`--store`, cargo feature `store`), a request of a session this replica does not
//! hold is taken over from the store before rmcp sees it (`adopt.rs`, inside the sessions' bounds),
//! and every session opened here is written there (`crate::store::sessions`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::express::http::{FrontRules, HttpLane};
use crate::identity::{AccessConfig, AuthOptions, Authenticator, Client, HttpAuth};
use crate::protocol::headers::SESSION_HEADER;
use crate::server::BoardServer;
use crate::session::http_sessions::Sessions;
use crate::telemetry::{DenyReason, Telemetry};

#[cfg(feature = "store")]
mod adopt;
pub(crate) mod health;
mod origins;
mod replica;
mod room;
pub mod serve;
mod sessions;
mod shared;
pub use crate::protocol::headers::MCP_PATH;
pub use health::{HEALTH_PATH, READY_PATH};
pub use replica::{MAX_REPLICA_ID_LEN, ReplicaId, ReplicaIdError, ReplicaSessionError};
pub use sessions::SessionLimits;

/// What the HTTP front door accepts.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The address bound (its host is added to the allowed Host values when it is not loopback).
    pub bind: Option<SocketAddr>,
    /// Require `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Extra allowed Origins, besides http(s)://localhost, 127.0.0.1 and `[::1]` on any port.
    pub allow_origins: Vec<String>,
    /// Extra allowed Host values.
    pub allow_hosts: Vec<String>,
    /// No sessions (rmcp's stateless mode, JSON responses): for replicas behind a load balancer.
    pub stateless: bool,
    /// How many sessions may be open and how long an idle one lives.
    pub sessions: SessionLimits,
    /// This replica's name: every session id it issues starts with `ID.`, for a proxy to route on.
    pub replica_id: Option<ReplicaId>,
}

/// The router: `/mcp` served by `server`, guarded, with the express lane as its outermost layer.
/// `ct` stops every session when cancelled. To mount in another axum app; `pegboard serve` serves
/// [`front`] instead, which answers the lane's requests before the router.
pub fn router(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
) -> anyhow::Result<Router> {
    Ok(front(server, options, ct)?.into_router())
}

/// [`router`] for the clients of `access` (the config's `clients` and `auth`).
pub(crate) fn router_with(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
    access: Option<&AccessConfig>,
) -> anyhow::Result<Router> {
    Ok(front_with(server, options, ct, access)?.into_router())
}

/// The HTTP front as [`crate::http::serve::serve`] runs it: the express lane, and the guarded
/// router for everything the lane does not take.
pub struct Front {
    pub(crate) router: Router,
    pub(crate) lane: Option<Arc<HttpLane>>,
    /// Readiness and the requests in flight (see `health`); none for a plain router.
    pub(crate) health: Option<Arc<health::Health>>,
}

impl Front {
    /// One router with the lane as its outermost layer (what [`router`] returns).
    pub fn into_router(self) -> Router {
        match self.lane {
            Some(lane) => self.router.layer(middleware::from_fn_with_state(
                lane,
                crate::express::http::serve,
            )),
            None => self.router,
        }
    }
}

impl From<Router> for Front {
    /// Any router, served as it is (no lane in front).
    fn from(router: Router) -> Self {
        Self {
            router,
            lane: None,
            health: None,
        }
    }
}

impl std::fmt::Debug for Front {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Front")
            .field("lane", &self.lane.is_some())
            .finish_non_exhaustive()
    }
}

/// `/mcp` served by `server`, guarded, and the express lane (see [`Front`]). `ct` stops every
/// session when cancelled.
///
/// ```no_run
/// # async fn demo(server: pegboard_gateway::BoardServer) -> anyhow::Result<()> {
/// use pegboard_gateway::http::{HttpOptions, front};
/// use pegboard_gateway::http::serve::{Timeouts, serve};
/// let stop = tokio_util::sync::CancellationToken::new();
/// let app = front(server, &HttpOptions::default(), stop.child_token())?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
/// serve(listener, app, Timeouts::default(), stop).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// An option that is not valid: a blank token, an allowed Origin that is not one.
pub fn front(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
) -> anyhow::Result<Front> {
    front_with(server, options, ct, None)
}

/// [`front`] for the clients of `access` (the config's `clients` and `auth`), beside the
/// token of `options`.
pub(crate) fn front_with(
    server: BoardServer,
    options: &HttpOptions,
    ct: CancellationToken,
    access: Option<&AccessConfig>,
) -> anyhow::Result<Front> {
    check_token(options.token.as_deref())?;
    let max_sessions = options.sessions.max;
    // With a store, the clients' limits are counted there for the whole fleet.
    #[cfg(feature = "store")]
    let shared: Option<Arc<dyn crate::limits::SharedLimits>> =
        server.hooks().store.as_ref().map(|store| {
            Arc::new(crate::limits::FleetLimits::new(store.clone()))
                as Arc<dyn crate::limits::SharedLimits>
        });
    #[cfg(not(feature = "store"))]
    let shared: Option<Arc<dyn crate::limits::SharedLimits>> = None;
    let authenticator = Authenticator::counted_in(
        access,
        options.token.as_deref(),
        AuthOptions {
            max_sessions,
            ..AuthOptions::default()
        },
        shared.as_ref(),
    )?;
    let auth = Arc::new(HttpAuth::new(
        Arc::new(authenticator),
        access.and_then(|a| a.auth.as_ref()),
    ));
    let guard = Guard::new(
        Arc::clone(&auth),
        Arc::clone(server.relay().express_sessions()),
        server.hooks().telemetry.clone(),
    );
    let health = health::Health::new(server.startup().clone());
    let server = server.stateless(options.stateless);
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if let Some(addr) = options.bind
        && !addr.ip().is_loopback()
        && !addr.ip().is_unspecified()
    {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allow_hosts.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(ct.clone());
    config = match origins::allowed(&options.allow_origins)? {
        Some(allowed) => config
            .with_allowed_origins(allowed)
            .enforce_origin_validation(),
        None => config.disable_allowed_origins(),
    };
    if options.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    let book = crate::limits::SessionBook::new(options.sessions.max);
    // With a store (and sessions), any replica serves any session (`crate::store::sessions`).
    #[cfg(feature = "store")]
    let stored = match (&server.hooks().store, options.stateless) {
        (Some(store), false) => {
            let stored =
                crate::store::sessions::StoredSessions::new(store.clone(), options.sessions.idle);
            stored.sweep_until(ct.clone());
            config.session_store = Some(stored.for_rmcp());
            Some(stored)
        }
        _ => None,
    };
    #[cfg(feature = "store")]
    let server = server.with_stored(stored.clone());
    let manager = sessions::manager(
        options.sessions,
        options.replica_id.clone(),
        Arc::clone(&book),
        #[cfg(feature = "store")]
        stored.clone(),
    );
    let cap = sessions::Cap {
        manager: Arc::clone(&manager),
        book: Arc::clone(&book),
        sessions: Arc::clone(server.relay().express_sessions()),
        #[cfg(feature = "store")]
        stored: stored.map(|stored| (stored, Arc::clone(&health))),
    };
    let lane = HttpLane::new(
        !options.stateless && server.express(),
        server.board().clone(),
        Arc::clone(server.relay().express_sessions()),
        server.startup().clone(),
        FrontRules {
            hosts: config.allowed_hosts.clone(),
            auth: Arc::clone(&auth),
            idle: options.sessions.idle,
            max_body: config.max_request_body_bytes,
            hooks: server.hooks().clone(),
            book,
        },
    );
    let board = server.board().clone();
    let service: StreamableHttpService<BoardServer, replica::ReplicaSessions> =
        StreamableHttpService::new(move || Ok(server.session()), manager, config);
    let service = shared::Shared::new(service);
    // Routes, not a nest: rmcp reads no path, and a nest rebuilds each request's URI to strip
    // its prefix. `/mcp/...` is served as before. The express lane goes in front of it all and
    // checks the path and the token itself (see `crate::express::http`).
    let mut router = Router::new()
        .route_service(MCP_PATH, service.clone())
        .route_service("/mcp/", service.clone())
        .route_service("/mcp/{*rest}", service)
        // rmcp's typed `tools/list` answers go out whole, as the lane's do.
        .route_layer(middleware::from_fn_with_state(
            board,
            crate::definitions::whole_tools,
        ))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(cap, sessions::cap))
        .layer(middleware::from_fn_with_state(Arc::new(guard), check));
    // RFC 9728 metadata, outside authentication: clients read it before they have a token.
    if let Some(metadata) = auth.metadata_router() {
        router = metadata.merge(router);
    }
    // The probes, outside authentication too: a probe carries no token.
    router = health.router().merge(router);
    Ok(Front {
        router,
        lane: Some(lane),
        health: Some(health),
    })
}

/// Refuse a token that is empty or only whitespace: it would otherwise read as "auth required"
/// while no client can ever send it (or, filtered out, silently serve with no auth at all).
///
/// # Errors
/// When `token` is `Some` and blank, with what to do instead.
pub fn check_token(token: Option<&str>) -> anyhow::Result<()> {
    match token {
        Some(t) if t.trim().is_empty() => anyhow::bail!(
            "the bearer token is empty (`--token \"\"` or `PEGBOARD_TOKEN=` set to nothing): give a real \
             token, or unset PEGBOARD_TOKEN and drop --token to serve without authentication"
        ),
        _ => Ok(()),
    }
}

async fn not_found() -> (StatusCode, &'static str) {
    (
        StatusCode::NOT_FOUND,
        "not found: the PegBoard MCP endpoint is at /mcp\n",
    )
}

/// The checks done before rmcp sees a request, and the end of a session its client deletes.
#[derive(Debug)]
struct Guard {
    auth: Arc<HttpAuth>,
    sessions: Arc<Sessions>,
    telemetry: Option<Arc<Telemetry>>,
}

impl Guard {
    fn new(
        auth: Arc<HttpAuth>,
        sessions: Arc<Sessions>,
        telemetry: Option<Arc<Telemetry>>,
    ) -> Self {
        Self {
            auth,
            sessions,
            telemetry,
        }
    }

    fn denied(&self, reason: DenyReason) {
        if let Some(telemetry) = &self.telemetry {
            telemetry.denied(reason);
        }
    }
}

/// The client of a request, authenticated once: by the lane before it (which leaves it in the
/// request's extensions), else here. A request of a session must come from the client that
/// opened it.
pub(crate) async fn admit(
    auth: &HttpAuth,
    sessions: &Sessions,
    request: &mut Request,
) -> Result<Arc<Client>, Response> {
    let client = match request.extensions().get::<Arc<Client>>() {
        Some(client) => Arc::clone(client),
        None => {
            let client = auth.authorize(request.headers()).await?;
            request.extensions_mut().insert(Arc::clone(&client));
            client
        }
    };
    if let Some(id) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
        && let Some(owner) = sessions.client_of(id)
        && !Arc::ptr_eq(&owner, &client)
    {
        tracing::debug!(
            client = client.name(),
            "refused a request of another client's session"
        );
        return Err((
            StatusCode::FORBIDDEN,
            "forbidden: this session belongs to another client; open a session of your own\n",
        )
            .into_response());
    }
    Ok(client)
}

async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    if let Err(refusal) = admit(&guard.auth, &guard.sessions, &mut request).await {
        guard.denied(match refusal.status() {
            StatusCode::FORBIDDEN => DenyReason::Forbidden,
            _ => DenyReason::Unauthorized,
        });
        return refusal;
    }
    let has_origin = request.headers().contains_key(header::ORIGIN);
    let deleted = (request.method() == axum::http::Method::DELETE)
        .then(|| request.headers().get(SESSION_HEADER))
        .flatten()
        .and_then(|id| id.to_str().ok())
        .map(str::to_string);
    let mut response = next.run(request).await;
    if has_origin && response.status() == StatusCode::FORBIDDEN {
        guard.denied(DenyReason::Origin);
        // rmcp refused the Origin (see `origins`); say how to let it in.
        return (
            StatusCode::FORBIDDEN,
            "forbidden: this Origin is not allowed (start pegboard with --allow-origin ORIGIN to allow it)\n",
        )
            .into_response();
    }
    if let Some(id) = &deleted
        && response.status().is_success()
    {
        // The session ends now: its calls still running, on either path, are cancelled
        // upstream at once (rmcp ends the session's own tasks in its own time).
        guard.sessions.end(id);
        // rmcp answers a session's DELETE with 202; clients expect 200 or 204 (the Python SDK
        // logs "Session termination failed: 202" at every close otherwise).
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(test)]
mod tests;
