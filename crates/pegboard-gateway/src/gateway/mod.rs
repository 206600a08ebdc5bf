//! Layer 6: [`Gateway`], the one way to start and serve a config's servers — what `pegboard
//! serve` runs, and what an embedder gets: servers started concurrently while serving begins
//! (sessions wait for them during the startup grace period), supervised and restarted when they
//! die, brought in line with the config on SIGHUP when asked, served over stdio or streamable
//! HTTP, with search mode and the express lane as configured.

mod builder;
mod observe;
mod run;

pub use builder::{DEFAULT_DRAIN, GatewayBuilder};

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use pegboard::PegBoard;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::connect::{Progress, Started};
use crate::error::GatewayError;
use crate::http::{self, HttpOptions, serve::Timeouts};
use crate::reload::{Changes, Fleet};
use crate::server::BoardServer;
use crate::session::startup::Starting;

/// The servers of one config on one [`PegBoard`], served as one MCP server.
///
/// ```no_run
/// # async fn demo() -> Result<(), pegboard_gateway::GatewayError> {
/// use pegboard_gateway::{Gateway, HttpOptions};
/// use tokio_util::sync::CancellationToken;
///
/// let config = pegboard_gateway::load_config(None, false).map_err(|e| pegboard_gateway::GatewayError::Config(format!("{e:#}")))?;
/// let gateway = Gateway::builder(config).restart(true).build()?;
/// // Starts the servers beside the serving, supervises them, until the token is cancelled:
/// let stop = CancellationToken::new();
/// gateway.serve_http("127.0.0.1:8080".parse().unwrap(), &HttpOptions::default(), stop).await?;
/// gateway.shutdown().await;
/// # Ok(()) }
/// ```
pub struct Gateway {
    board: PegBoard,
    config: Config,
    server: BoardServer,
    settings: builder::Settings,
    /// Until the servers have been started: marks the startup settled when dropped.
    starting: Mutex<Option<Starting>>,
    /// The servers once started (supervised, reloadable).
    fleet: tokio::sync::Mutex<Option<Fleet>>,
    /// How each server's start went, once they were started.
    started: Mutex<Option<Vec<ServerStart>>>,
    /// SIGHUP, listened for from the build on (so one sent during startup reloads after it
    /// rather than killing the process), when reloads are on.
    hangup: Mutex<Option<crate::reload::Hangup>>,
    /// The config file, followed from the build on when asked to ([`GatewayBuilder::follow_config`]).
    follow: Mutex<Option<crate::follow::ConfigFollow>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("config", &self.config.source)
            .field("tools", &self.board.tool_count())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway for `config`, to set up and [`build`](GatewayBuilder::build).
    pub fn builder(config: Config) -> GatewayBuilder {
        GatewayBuilder::new(config)
    }

    /// Load the config at `path` (or search the usual places when `None`), start every server
    /// and wait until each has started or failed (each gets `startup_timeout`).
    ///
    /// # Errors
    /// [`GatewayError::Config`] when the file is missing or invalid, else as [`start`](Self::start).
    pub async fn from_path(
        path: Option<&Path>,
        startup_timeout: Duration,
    ) -> Result<Self, GatewayError> {
        let config = crate::load_config(path, false).map_err(|e| GatewayError::config(&e))?;
        Self::start(config, startup_timeout).await
    }

    /// Start every server of `config` and wait until each has started or failed; servers that
    /// fail are logged and listed in [`started`](Self::started).
    ///
    /// # Errors
    /// [`GatewayError::NoServers`] or [`GatewayError::NoneStarted`].
    pub async fn start(config: Config, startup_timeout: Duration) -> Result<Self, GatewayError> {
        let gateway = Self::builder(config)
            .startup_timeout(startup_timeout)
            .build()?;
        gateway.start_servers().await?;
        Ok(gateway)
    }

    /// The board holding every started server's tools.
    pub fn board(&self) -> &PegBoard {
        &self.board
    }

    /// The config the gateway was started from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The client the stdio front serves as ([`GatewayBuilder::stdio_client`]; by default one
    /// that sees everything): what `pegboard search --client` searches as.
    pub fn stdio_client(&self) -> &std::sync::Arc<crate::identity::Client> {
        self.server.client()
    }

    /// How each server's start went, in config order, once they have been started (`None`
    /// before).
    pub fn started(&self) -> Option<Vec<ServerStart>> {
        self.started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The MCP handler as the gateway serves it (search mode, the startup wait, the lane), for
    /// any other rmcp transport. Each client connection gets its own
    /// [`session`](BoardServer::session).
    pub fn handler(&self) -> BoardServer {
        self.server.session()
    }

    /// An axum router serving the gateway at [`http::MCP_PATH`] with the guards of `options`, to
    /// mount in your own app (the servers must be started: [`start_servers`](Self::start_servers)).
    /// Cancelling `ct` ends every session.
    ///
    /// # Errors
    /// [`GatewayError::HttpOption`] when an option is not valid.
    pub fn router(
        &self,
        options: &HttpOptions,
        ct: CancellationToken,
    ) -> Result<Router, GatewayError> {
        http::router_with(self.handler(), options, ct, self.config.access.as_ref())
            .map_err(|e| GatewayError::HttpOption(format!("{e:#}")))
    }

    /// Serve over this process's stdin/stdout until the client closes the session (or Ctrl-C /
    /// SIGTERM), with the servers starting beside it if they have not been started yet.
    ///
    /// # Errors
    /// [`GatewayError::Serve`] when the handshake fails or the session ends abnormally;
    /// [`GatewayError::NoneStarted`] when every server failed to start.
    pub async fn serve_stdio(&self) -> Result<(), GatewayError> {
        let stop = CancellationToken::new();
        let _stop_metrics = stop.clone().drop_guard();
        self.beside(run::stdio(self), None, stop).await
    }

    /// Serve streamable HTTP on `addr` (at `/mcp`) until `ct` is cancelled (or Ctrl-C /
    /// SIGTERM), with the servers starting beside it if they have not been started yet. Every
    /// accepted connection gets `TCP_NODELAY` and the default [`Timeouts`].
    ///
    /// # Errors
    /// [`GatewayError::Bind`], [`GatewayError::HttpOption`], [`GatewayError::Serve`], or
    /// [`GatewayError::NoneStarted`].
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        options: &HttpOptions,
        ct: CancellationToken,
    ) -> Result<(), GatewayError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| GatewayError::Bind { addr, source })?;
        self.serve_http_on(listener, options, Timeouts::default(), ct)
            .await
    }

    /// [`serve_http`](Self::serve_http) on a listener already bound, with these read timeouts.
    ///
    /// # Errors
    /// As [`serve_http`](Self::serve_http).
    pub async fn serve_http_on(
        &self,
        listener: TcpListener,
        options: &HttpOptions,
        timeouts: Timeouts,
        ct: CancellationToken,
    ) -> Result<(), GatewayError> {
        let token = options.token.clone();
        self.beside(
            run::http(self, listener, options, timeouts, ct.clone()),
            token.as_deref(),
            ct,
        )
        .await
    }

    /// Start every server now (concurrently) and wait until each has started or failed; from
    /// then on they are supervised (see [`GatewayBuilder::restart`]). Serving calls it by itself.
    ///
    /// # Errors
    /// [`GatewayError::NoneStarted`] when not one server started.
    pub async fn start_servers(&self) -> Result<(), GatewayError> {
        let mut fleet = self.fleet.lock().await;
        if fleet.is_some() {
            return Ok(());
        }
        let started = crate::connect::start_all(
            &self.board,
            &self.config,
            self.settings.startup_timeout,
            self.settings.progress,
        )
        .await;
        let outcomes = started.outcomes.iter().map(ServerStart::of).collect();
        *self.started.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcomes);
        let starting = self
            .starting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(starting) = starting {
            starting.finish();
        }
        // Nothing to serve, and nothing will come by itself: a server waiting for a login will
        // come (`pegboard login` in another terminal), unless nothing supervises it.
        let waits_for_login = started.outcomes.iter().any(|o| {
            o.result
                .as_ref()
                .err()
                .and_then(crate::oauth::needs_login)
                .is_some()
        });
        if started.ready() == 0 && (!self.settings.restart || !waits_for_login) {
            return Err(none_started(&started, &self.config));
        }
        let mut started_fleet = Fleet::new(
            &self.board,
            &self.config,
            started,
            self.settings.startup_timeout,
            self.settings.restart,
        );
        if let Some(bytes) = self.settings.max_message {
            started_fleet = started_fleet.with_max_message(bytes);
        }
        started_fleet = started_fleet.with_max_result_tokens(self.settings.max_result_tokens);
        *fleet = Some(started_fleet);
        Ok(())
    }

    /// Bring the running servers in line with `config`: added entries start, removed ones stop,
    /// changed ones restart with their new settings, unchanged ones keep running untouched
    /// (`reload.rs`). Nothing happens before the servers were started.
    pub async fn reload(&self, config: &Config) -> Changes {
        let mut fleet = self.fleet.lock().await;
        match fleet.as_mut() {
            Some(fleet) => fleet.reload(config, self.settings.progress).await,
            None => Changes::default(),
        }
    }

    /// Run `serving` with the servers' startup, supervision and reloads beside it, and the
    /// metrics listener (guarded by `token` beyond loopback) until `stop`; whichever ends first
    /// ends them all.
    async fn beside(
        &self,
        serving: impl Future<Output = Result<(), GatewayError>>,
        token: Option<&str>,
        stop: CancellationToken,
    ) -> Result<(), GatewayError> {
        tokio::select! {
            // Serving first: its first poll takes the stdio session or prints the "serving"
            // line, before a startup that fails at once can end everything.
            biased;
            r = serving => r,
            r = run::background(self) => r,
            r = run::metrics(self, token, stop) => r,
        }
    }

    /// Stop every server (supervisors first, so nothing restarts; then children are killed and
    /// connections closed).
    pub async fn shutdown(self) {
        if let Some(fleet) = self.fleet.into_inner() {
            fleet.shutdown().await;
        }
        self.board.shutdown().await;
        tracing::debug!("all servers shut down");
        let hooks = self.server.hooks();
        if let Some(audit) = &hooks.audit {
            audit.flush().await;
        }
        if let Some(telemetry) = &hooks.telemetry {
            telemetry.shutdown(Duration::from_secs(5)).await;
        }
    }
}

/// How one server's start went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStart {
    /// The config entry's key.
    pub name: String,
    /// How many tools it put on the board, or why it is not there (with its stderr's tail).
    pub result: Result<usize, String>,
    /// It is not there because it needs a login (`pegboard login NAME`); it joins the board when
    /// the login completes.
    pub needs_login: bool,
}

impl ServerStart {
    fn of(outcome: &crate::connect::Outcome) -> Self {
        let needs_login = outcome
            .result
            .as_ref()
            .err()
            .and_then(crate::oauth::needs_login)
            .is_some();
        Self {
            name: outcome.name.clone(),
            result: match &outcome.result {
                Ok(tools) => Ok(*tools),
                Err(e) => Err(format!("{e:#}")),
            },
            needs_login,
        }
    }
}

impl std::fmt::Display for ServerStart {
    /// `notes: ready, 3 tools`, or `notes: failed: why`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.result {
            Ok(n) => write!(
                f,
                "{}: ready, {n} tool{}",
                self.name,
                crate::connect::plural(*n)
            ),
            Err(why) => write!(f, "{}: failed: {why}", self.name),
        }
    }
}

/// The error when not one server of `config` started (each one's reason was reported already).
fn none_started(started: &Started, config: &Config) -> GatewayError {
    let which = match started.outcomes.len() {
        1 => "the configured server did not start".to_string(),
        n => format!("none of the {n} configured servers started"),
    };
    let logins: Vec<String> = started
        .outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err().and_then(crate::oauth::needs_login))
        .map(|n| format!("`pegboard login {}`", n.server))
        .collect();
    let what_to_do = match logins.is_empty() {
        true => format!("fix {}", config.source.display()),
        false => format!("log in first: {}", logins.join(", ")),
    };
    GatewayError::NoneStarted { which, what_to_do }
}

/// The progress lines of startup (`Progress::Stderr`) or their log lines.
pub(crate) fn report(progress: Progress, line: &str) {
    match progress {
        Progress::Stderr => crate::io::stderr::line(format_args!("pegboard: {line}")),
        Progress::Quiet => tracing::info!("{line}"),
    }
}
