//! Start or connect every configured server, concurrently, and put each on the board.
//!
//! One server failing never stops the others: what started is registered, the rest is reported with the
//! reason and, for a child process, the tail of its stderr.

use std::time::Duration;

use anyhow::{Result, anyhow};
use pegboard::{PegBoard, ServiceOptions};

use crate::config::{Config, ServerConfig, SessionMode, Transport};

mod clash;
mod connection;
mod handshake;
pub(crate) mod per_client;
mod stderr;

pub use connection::Connection;
pub(crate) use handshake::handshake;
pub use stderr::StderrTail;
pub(crate) use stderr::plural;

/// What happened to one server.
pub struct Outcome {
    /// The config entry's key.
    pub name: String,
    /// `Ok(tools registered)` or the reason it is not on the board.
    pub result: Result<usize, anyhow::Error>,
    /// Where it is on the board (`PegBoard::services` index), when it is.
    pub index: Option<usize>,
    /// Its stderr tail (stdio servers that started).
    pub stderr: Option<StderrTail>,
}

/// A summary of [`start_all`].
pub struct Started {
    /// One per configured server, in config order.
    pub outcomes: Vec<Outcome>,
}

impl Started {
    /// How many servers are on the board.
    pub fn ready(&self) -> usize {
        self.outcomes.iter().filter(|o| o.result.is_ok()).count()
    }
}

/// How to report progress while servers start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// "notes: ready, 3 tools" lines on stderr.
    Stderr,
    /// Nothing (errors still go to the log).
    Quiet,
}

/// Connect every server of `config` at once and register each on `board` as soon as it is up.
///
/// A server that hangs (in its handshake or its `tools/list`) costs one timeout in all, not one each,
/// and delays no other: servers land on the board in the order they answer, and each one's progress
/// line is printed when it is done. The outcomes come back in config order.
pub async fn start_all(
    board: &PegBoard,
    config: &Config,
    handshake_timeout: Duration,
    progress: Progress,
) -> Started {
    let starting = config.servers.iter().map(|server| async move {
        let name = server.name.clone();
        let (result, index, stderr) = match connect(server, handshake_timeout).await {
            Ok(conn) => {
                let stderr = conn.stderr.clone();
                match register(board, server, conn).await {
                    Ok(added) => (Ok(added.tools), Some(added.index), stderr),
                    Err(e) => (Err(e), None, None),
                }
            }
            Err(e) => (Err(e), None, None),
        };
        match (&result, progress) {
            (Ok(n), Progress::Stderr) => {
                crate::io::stderr::line(format_args!("{name}: ready, {n} tool{}", plural(*n)));
            }
            (Err(e), Progress::Stderr) => {
                crate::io::stderr::line(format_args!("{name}: failed: {e:#}"));
            }
            (Ok(n), Progress::Quiet) => tracing::debug!(server = %name, tools = n, "ready"),
            (Err(e), Progress::Quiet) => tracing::error!(server = %name, "failed: {e:#}"),
        }
        Outcome {
            name,
            result,
            index,
            stderr,
        }
    });
    Started {
        outcomes: futures::future::join_all(starting).await,
    }
}

/// Put a connection on the board; returns where it was stored and how many tools it brought.
pub async fn register(
    board: &PegBoard,
    server: &ServerConfig,
    conn: Connection,
) -> Result<pegboard::Added> {
    // Pins, the description scan and stripping: on every listing of this server (see `pins`).
    let filter = crate::pins::PinFilter::new(server.name.clone(), server.guards.clone());
    conn.hub.set_result_cap(server.guards.max_result_tokens);
    conn.hub.set_entry(&server.name);
    let mut options = ServiceOptions::new()
        .deny(server.deny.iter().cloned())
        .watch(conn.watch)
        .extension(conn.hub)
        .tool_list_tap(conn.tap)
        .filter(std::sync::Arc::new(filter));
    if let Some(allow) = &server.allow {
        options = options.allow(allow.iter().cloned());
    }
    if let Some(t) = server.timeout {
        options = options.call_timeout(t);
    }
    match board
        .add_service_with(server.namespace.clone(), conn.service, options)
        .await
    {
        Ok(added) => Ok(added),
        Err(e) => {
            let mut msg =
                clash::described(board, &server.name, &e).unwrap_or_else(|| e.to_string());
            if let Some(tail) = &conn.stderr {
                let _ = tail.wait_closed(Duration::from_millis(300)).await;
                msg.push_str(&tail.render());
            }
            Err(anyhow!(msg))
        }
    }
}

/// Start (stdio) or connect (HTTP) one server and do the MCP handshake, within `handshake_timeout`;
/// then, for a stdio server, learn which protocol versions it supports (see
/// [`crate::upstream::Hub::learn_versions`]). For a `"session": "per-client"` server this is its
/// shared connection, which opens the sessions' own ones (`connect/per_client.rs`).
pub async fn connect(server: &ServerConfig, handshake_timeout: Duration) -> Result<Connection> {
    let connection = handshake(server, handshake_timeout).await?;
    // Not over HTTP: rmcp's HTTP client would carry the probe's 2026-07-28 version in the
    // headers of every later request, and the server would then expect 2026 requests. An HTTP
    // server is taken at the version its handshake settled on.
    if matches!(server.transport, Transport::Stdio { .. }) {
        connection
            .hub
            .learn_versions(connection.service.peer())
            .await;
    }
    if server.session == SessionMode::PerClient {
        connection.hub.set_per_session(per_client::PerClient::new(
            server.clone(),
            handshake_timeout,
        ));
    }
    Ok(connection)
}
