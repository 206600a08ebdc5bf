//! [`GatewayBuilder`]: how a [`Gateway`] starts and serves (what `pegboard serve`'s flags set).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pegboard::PegBoard;

use super::Gateway;
use crate::audit::{ArgumentsMode, AuditLog, AuditTarget, DEFAULT_QUEUE};
use crate::call::hooks::Hooks;
use crate::config::{CodeModeSettings, Config, SearchSettings, StoreSettings, StoreUrl};
use crate::connect::Progress;
use crate::error::GatewayError;
use crate::identity::{AuthOptions, Authenticator};
use crate::server::BoardServer;
use crate::session::startup::{DEFAULT_WAIT, Startup};
use crate::telemetry::{Telemetry, TelemetryOptions, TraceExport};

/// How long an HTTP gateway told to stop (its `ct` cancelled: SIGTERM for `pegboard serve`)
/// waits for the calls in flight before it ends its sessions, by default.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(30);

/// How long a server gets to start and list its tools, by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// What a built gateway keeps of its builder.
#[derive(Clone, Debug)]
pub(super) struct Settings {
    pub(super) startup_timeout: Duration,
    pub(super) restart: bool,
    pub(super) reload_on_hangup: bool,
    pub(super) follow_config: bool,
    pub(super) strict: bool,
    pub(super) progress: Progress,
    pub(super) max_message: Option<usize>,
    pub(super) max_result_tokens: Option<usize>,
    /// Where `/metrics` and `/status` are served, if anywhere.
    pub(super) metrics: Option<SocketAddr>,
    /// How long an HTTP gateway told to stop waits for the calls in flight.
    pub(super) drain: Duration,
}

/// Sets up a [`Gateway`] (see [`Gateway::builder`]).
///
/// ```
/// use std::time::Duration;
/// let config = pegboard_gateway::config::parse(
///     r#"{"mcpServers": {"units": {"command": "pegboard-demo-units"}}}"#,
///     std::path::Path::new("pegboard.json"),
///     &|_| None,
/// )?;
/// let gateway = pegboard_gateway::Gateway::builder(config)
///     .startup_timeout(Duration::from_secs(10))
///     .wait(Duration::ZERO)
///     .restart(false)
///     .build()?;
/// assert_eq!(gateway.board().tool_count(), 0); // nothing started yet
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[must_use]
pub struct GatewayBuilder {
    config: Config,
    settings: Settings,
    wait: Duration,
    tool_search: Option<SearchSettings>,
    code_mode: Option<CodeModeSettings>,
    express: bool,
    info: (String, String),
    audit: Option<(AuditTarget, ArgumentsMode)>,
    stdio_client: Option<String>,
}

impl GatewayBuilder {
    /// Telemetry and the audit log, as asked for.
    fn hooks(&self) -> Result<Hooks, GatewayError> {
        let export = TraceExport::from_env().map_err(|e| GatewayError::Setup(e.to_string()))?;
        let telemetry = match (self.settings.metrics.is_some(), export) {
            (false, None) => None,
            (_, trace_export) => {
                let clients = self
                    .config
                    .access
                    .as_ref()
                    .map(|a| a.clients.iter().map(|c| c.name.to_string()).collect())
                    .unwrap_or_default();
                let options = TelemetryOptions {
                    trace_export,
                    servers: self.config.servers.iter().map(|s| s.name.clone()).collect(),
                    clients,
                };
                Some(Telemetry::new(options).map_err(|e| GatewayError::Setup(e.to_string()))?)
            }
        };
        let audit = match &self.audit {
            None => None,
            Some((target, arguments)) => Some(Arc::new(
                AuditLog::open(target.clone(), *arguments, DEFAULT_QUEUE).map_err(|e| {
                    GatewayError::Setup(format!("cannot open the audit log {target}: {e}"))
                })?,
            )),
        };
        #[cfg(feature = "store")]
        let store = match &self.config.store {
            None => None,
            Some(settings) => Some(
                crate::store::Store::open(
                    settings,
                    telemetry
                        .as_ref()
                        .map(|t| t.metrics().store_errors_counter()),
                )
                .map_err(|e| GatewayError::Setup(e.to_string()))?,
            ),
        };
        // `"credentials": "store"`: the servers' OAuth credentials are read from the store,
        // sealed with the key in PEGBOARD_STORE_KEY (read now: a missing or short key stops
        // the start with what to do, as a missing store does).
        let credentials_in_store = self.config.servers.iter().any(|s| {
            matches!(&s.transport, crate::config::Transport::Http { oauth, .. }
                if oauth.credentials == crate::config::CredentialsBackend::Store)
        });
        if credentials_in_store {
            #[cfg(feature = "store")]
            match &store {
                Some(store) => crate::credentials::use_store(store.clone())
                    .map_err(|e| GatewayError::Setup(e.to_string()))?,
                None => {
                    return Err(GatewayError::Setup(
                        crate::credentials::StoreError::NoStore.to_string(),
                    ));
                }
            }
            #[cfg(not(feature = "store"))]
            return Err(GatewayError::Setup(
                crate::credentials::StoreError::NoStore.to_string(),
            ));
        }
        #[cfg(not(feature = "store"))]
        if let Some(settings) = &self.config.store {
            return Err(GatewayError::Setup(format!(
                "a store is set ({}), but this pegboard was built without the `store` feature: \
                 build it with `--features store`, or leave out --store, PEGBOARD_STORE and the config's `store`",
                settings.url
            )));
        }
        Ok(Hooks {
            telemetry,
            audit,
            #[cfg(feature = "store")]
            store,
        })
    }

    pub(super) fn new(config: Config) -> Self {
        Self {
            config,
            settings: Settings {
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                restart: true,
                reload_on_hangup: false,
                follow_config: false,
                strict: false,
                progress: Progress::Quiet,
                max_message: None,
                max_result_tokens: None,
                metrics: None,
                drain: DEFAULT_DRAIN,
            },
            wait: DEFAULT_WAIT,
            tool_search: None,
            code_mode: None,
            express: true,
            info: ("pegboard".into(), env!("CARGO_PKG_VERSION").into()),
            audit: None,
            stdio_client: None,
        }
    }

    /// The config it will run.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// How long each server gets to start (or connect) and list its tools (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.settings.startup_timeout = timeout;
        self
    }

    /// How long sessions' first lists (and calls of tools not on the board yet) wait for the
    /// servers still starting (default [`DEFAULT_WAIT`]; zero: never).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// How long serving HTTP drains once told to stop (default [`DEFAULT_DRAIN`]): `/readyz`
    /// answers 503, a request that would open a session gets 503 with `Retry-After`, the
    /// sessions held here are served on, and the calls in flight get this long to finish before
    /// the sessions end. Zero: end them at once.
    pub fn drain(mut self, drain: Duration) -> Self {
        self.settings.drain = drain;
        self
    }

    /// Restart servers that die, with backoff (default on).
    pub fn restart(mut self, restart: bool) -> Self {
        self.settings.restart = restart;
        self
    }

    /// Read the config file again on SIGHUP and bring the servers in line with it (default
    /// off; `pegboard serve` turns it on). With `strict`, a reloaded config with an unusable
    /// entry is refused as a whole.
    pub fn reload_on_hangup(mut self, on: bool, strict: bool) -> Self {
        self.settings.reload_on_hangup = on;
        self.settings.strict = strict;
        self
    }

    /// Follow the config file: when its content changes (and has stayed so for a moment), read it
    /// again and bring the servers in line as at SIGHUP (default off; `pegboard serve` turns it
    /// on unless `--no-follow`). A file that does not load is logged and changes nothing.
    pub fn follow_config(mut self, on: bool) -> Self {
        self.settings.follow_config = on;
        self
    }

    /// Print each server's startup (`notes: ready, 3 tools`) on stderr, or only log it.
    pub fn progress(mut self, progress: Progress) -> Self {
        self.settings.progress = progress;
        self
    }

    /// Limit every server whose entry sets no `maxMessageMib` to messages of `bytes`, also
    /// after a reload.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.config = self.config.with_max_message(bytes);
        self.settings.max_message = Some(bytes);
        self
    }

    /// Cut the results of every server whose entry (or config) sets no `maxResultTokens` at
    /// `tokens` (estimated as UTF-8 bytes / 4; `None`: no cap from here), also after a reload.
    pub fn max_result_tokens(mut self, tokens: Option<usize>) -> Self {
        if let Some(tokens) = tokens {
            self.config = self.config.with_max_result_tokens(tokens);
        }
        self.settings.max_result_tokens = tokens;
        self
    }

    /// Search mode (default: the config's `toolSearch`).
    pub fn tool_search(mut self, settings: SearchSettings) -> Self {
        self.tool_search = Some(settings);
        self
    }

    /// Code mode (default: the config's `codeMode`): `search_tools`, `describe_tools` and
    /// `run_code` in `tools/list` (see docs/code-mode.md).
    pub fn code_mode(mut self, settings: CodeModeSettings) -> Self {
        self.code_mode = Some(settings);
        self
    }

    /// Whether plain `tools/call` and `tools/list` may take the express lane (default on;
    /// off: every request goes through rmcp).
    pub fn express(mut self, on: bool) -> Self {
        self.express = on;
        self
    }

    /// Keep the fleet's shared state (sessions any replica can serve) in the store at `url`
    /// (`--store`, `PEGBOARD_STORE`): over the config's `store.url`, keeping its `store.prefix`.
    /// Needs the cargo feature `store`; without it [`build`](Self::build) fails and says so.
    pub fn store(mut self, url: StoreUrl) -> Self {
        self.config.store = Some(match self.config.store.take() {
            Some(settings) => StoreSettings { url, ..settings },
            None => StoreSettings::new(url),
        });
        self
    }

    /// Serve Prometheus metrics (`GET /metrics`) and the status page (`GET /status`) on `addr`
    /// (default: nowhere). Spans are exported over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, whether or not this is given.
    pub fn metrics(mut self, addr: Option<SocketAddr>) -> Self {
        self.settings.metrics = addr;
        self
    }

    /// Write an audit line for every call that reaches a server or is refused by policy, to
    /// `target`, keeping `arguments` of them.
    pub fn audit_log(mut self, target: AuditTarget, arguments: ArgumentsMode) -> Self {
        self.audit = Some((target, arguments));
        self
    }

    /// Serve stdio as the config's client `name` (its view of the board; default: everything).
    pub fn stdio_client(mut self, name: Option<String>) -> Self {
        self.stdio_client = name;
        self
    }

    /// The server name and version clients are told.
    pub fn info(mut self, name: &str, version: &str) -> Self {
        self.info = (name.into(), version.into());
        self
    }

    /// `server` in code mode when this builder or the config asks for it.
    #[cfg(feature = "code-mode")]
    #[expect(
        clippy::unnecessary_wraps,
        reason = "an error in a build without code mode"
    )]
    fn with_code_mode(&self, server: BoardServer) -> Result<BoardServer, GatewayError> {
        let settings = self
            .code_mode
            .clone()
            .or_else(|| self.config.code_mode.clone());
        Ok(server.with_code_mode(settings))
    }

    /// Code mode is not in this build: asking for it is an error that says how to get it.
    #[cfg(not(feature = "code-mode"))]
    fn with_code_mode(&self, server: BoardServer) -> Result<BoardServer, GatewayError> {
        let asked_by = if self.code_mode.is_some() {
            "--code-mode".to_string()
        } else if self.config.code_mode.is_some() {
            format!("`codeMode` in {}", self.config.source.display())
        } else {
            return Ok(server);
        };
        Err(GatewayError::NoCodeMode { asked_by })
    }

    /// The gateway, its servers not started yet (serving starts them, or
    /// [`Gateway::start_servers`]).
    ///
    /// # Errors
    /// [`GatewayError::NoServers`] when the config has no enabled server;
    /// [`GatewayError::NoCodeMode`] when code mode is asked for in a build without it.
    pub fn build(self) -> Result<Gateway, GatewayError> {
        if self.config.servers.is_empty() {
            return Err(GatewayError::NoServers {
                path: self.config.source.clone(),
            });
        }
        // Listing a server's tools is part of starting it: the same timeout bounds both.
        let board = PegBoard::builder()
            .discovery_timeout(self.settings.startup_timeout)
            .build();
        let (startup, starting) = Startup::begin(self.wait);
        let hooks = self.hooks()?;
        let audit_to_file = matches!(&self.audit, Some((AuditTarget::File(_), _)));
        let search = self
            .tool_search
            .clone()
            .unwrap_or_else(|| self.config.tool_search.clone());
        let stdio_client =
            Authenticator::new(self.config.access.as_ref(), None, AuthOptions::default())
                .map_err(|e| {
                    GatewayError::Config(format!("{}: {e}", self.config.source.display()))
                })?
                .stdio_client(self.stdio_client.as_deref())
                .map_err(GatewayError::Config)?;
        let server = BoardServer::new(board.clone())
            .with_info(&self.info.0, &self.info.1)
            .with_tool_search(search);
        let server = self
            .with_code_mode(server)?
            .with_startup(startup)
            .with_express(self.express)
            .with_hooks(hooks)
            .with_client(stdio_client);
        let follow = self
            .settings
            .follow_config
            .then(|| crate::follow::ConfigFollow::new(&self.config.source));
        Ok(Gateway {
            board,
            config: self.config,
            server,
            starting: Mutex::new(Some(starting)),
            fleet: tokio::sync::Mutex::new(None),
            started: Mutex::new(None),
            // SIGHUP reloads the config when asked to, and reopens the audit log file (after
            // logrotate moved it) whenever there is one.
            hangup: Mutex::new(
                (self.settings.reload_on_hangup || audit_to_file)
                    .then(crate::reload::Hangup::listen),
            ),
            follow: Mutex::new(follow),
            settings: self.settings,
        })
    }
}
