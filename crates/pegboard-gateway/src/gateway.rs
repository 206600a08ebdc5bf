//! [`Gateway`]: a config's servers started, on one board, ready to be served.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::Router;
use pegboard::PegBoard;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::connect::{self, Progress, Started};
use crate::error::GatewayError;
use crate::http::{self, HttpOptions};
use crate::server::BoardServer;

/// The servers of one config, started and registered on one [`PegBoard`], served as one MCP server.
///
/// Servers are not restarted when they die here; `pegboard serve` adds supervision and reload on
/// top with [`crate::reload::Fleet`].
pub struct Gateway {
    board: PegBoard,
    config: Config,
    started: Started,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("config", &self.config.source)
            .field("servers", &self.started.ready())
            .field("tools", &self.board.tool_count())
            .finish()
    }
}

impl Gateway {
    /// Load the config at `path` (or search the usual places when `None`) and [`start`](Self::start) it.
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

    /// Start every server of `config` concurrently (each gets `startup_timeout` for its handshake)
    /// and register those that started. Servers that fail are logged and listed in [`started`](Self::started).
    ///
    /// # Errors
    /// [`GatewayError::NoServers`] or [`GatewayError::NoneStarted`].
    pub async fn start(config: Config, startup_timeout: Duration) -> Result<Self, GatewayError> {
        if config.servers.is_empty() {
            return Err(GatewayError::NoServers {
                path: config.source.clone(),
            });
        }
        let board = PegBoard::new();
        let started = connect::start_all(&board, &config, startup_timeout, Progress::Quiet).await;
        if started.ready() == 0 {
            board.shutdown().await;
            let which = match started.outcomes.len() {
                1 => "the configured server did not start".to_string(),
                n => format!("none of the {n} configured servers started"),
            };
            return Err(GatewayError::NoneStarted {
                which,
                path: config.source.clone(),
            });
        }
        Ok(Self {
            board,
            config,
            started,
        })
    }

    /// The board holding every started server's tools.
    pub fn board(&self) -> &PegBoard {
        &self.board
    }

    /// The config the gateway was started from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What happened to each configured server at startup.
    pub fn started(&self) -> &Started {
        &self.started
    }

    /// The MCP handler over the board, to serve on any rmcp transport.
    pub fn handler(&self) -> BoardServer {
        BoardServer::new(self.board.clone())
    }

    /// An axum router serving the gateway at [`http::MCP_PATH`] with the guards of `options`, to
    /// mount in your own app. Cancelling `ct` ends every session.
    ///
    /// # Errors
    /// [`GatewayError::HttpOption`] when an option is not valid.
    pub fn router(
        &self,
        options: &HttpOptions,
        ct: CancellationToken,
    ) -> Result<Router, GatewayError> {
        http::router(self.handler(), options, ct)
            .map_err(|e| GatewayError::HttpOption(format!("{e:#}")))
    }

    /// Serve over this process's stdin/stdout until the client closes the session, with the
    /// express lane in front of rmcp (see [`crate::express`]).
    ///
    /// # Errors
    /// [`GatewayError::Serve`] when the handshake fails or the session ends abnormally.
    pub async fn serve_stdio(&self) -> Result<(), GatewayError> {
        crate::express::pipe::widen(std::io::stdout());
        let (reader, writer) = rmcp::transport::stdio_pipes();
        let running = crate::express::serve(self.handler(), reader, writer)
            .await
            .map_err(|e| GatewayError::Serve(format!("the MCP client on stdio: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| GatewayError::Serve(format!("the stdio session ended abnormally: {e}")))?;
        Ok(())
    }

    /// Serve streamable HTTP on `addr` (at `/mcp`) until `ct` is cancelled. Every accepted
    /// connection gets `TCP_NODELAY` and the default
    /// [`Timeouts`](crate::http_serve::Timeouts) (10 s for headers, 30 s of silence in a body).
    ///
    /// # Errors
    /// [`GatewayError::Bind`], [`GatewayError::HttpOption`] or [`GatewayError::Serve`].
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        options: &HttpOptions,
        ct: CancellationToken,
    ) -> Result<(), GatewayError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| GatewayError::Bind { addr, source })?;
        let app = http::front(self.handler(), options, ct.child_token())
            .map_err(|e| GatewayError::HttpOption(format!("{e:#}")))?;
        crate::http_serve::serve(listener, app, crate::http_serve::Timeouts::default(), ct)
            .await
            .map_err(|e| GatewayError::Serve(format!("the HTTP server failed: {e}")))
    }

    /// Stop every server (children are killed, connections closed).
    pub async fn shutdown(self) {
        self.board.shutdown().await;
    }
}
