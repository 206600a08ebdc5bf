//! One server started (stdio) or reached (HTTP) and its MCP handshake done, with errors that say
//! what happened: the innermost cause, a hint for a program that cannot start, the stderr tail.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use axum::http::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::{
    connection::Connection,
    stderr::{STDERR_TAIL_LINES, StderrTail},
};
use crate::config::{ServerConfig, Transport};

/// Start or connect `server` and do the handshake, no more: a per-client session's own
/// connection needs no protocol versions (the shared one decides what the board offers).
///
/// The `initialize` handshake first; a server that answers it with an error (one of the
/// 2026-07-28 generation only refuses `initialize`) is tried again with `server/discover`
/// (spawned again for stdio, since the first try consumed its pipes). If that fails too, the
/// first error is the one reported.
pub(crate) async fn handshake(
    server: &ServerConfig,
    handshake_timeout: Duration,
) -> Result<Connection> {
    match handshake_with(server, handshake_timeout, ClientLifecycleMode::Initialize).await {
        Ok(connection) => Ok(connection),
        Err(Failed {
            error,
            refused: true,
        }) => {
            let discover = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            handshake_with(server, handshake_timeout, discover)
                .await
                .map_err(|second| {
                    tracing::debug!(server = %server.name, "server/discover failed too: {:#}", second.error);
                    error
                })
        }
        Err(Failed { error, .. }) => Err(error),
    }
}

/// Whether the server answered the handshake with a JSON-RPC error (it is there and speaks
/// MCP, but not this lifecycle).
fn answered_with_error(e: &rmcp::service::ClientInitializeError) -> bool {
    matches!(e, rmcp::service::ClientInitializeError::JsonRpcError(_))
}

/// Why a handshake failed; `refused`: the server answered the handshake with a JSON-RPC error
/// (such as "unsupported protocol version"), so another lifecycle may work.
struct Failed {
    error: anyhow::Error,
    refused: bool,
}

impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Self {
        Self {
            error,
            refused: false,
        }
    }
}

async fn handshake_with(
    server: &ServerConfig,
    handshake_timeout: Duration,
    lifecycle: ClientLifecycleMode,
) -> Result<Connection, Failed> {
    let (watching, watch) = pegboard::client::watch_tools();
    let tap = pegboard::ToolListTap::new();
    // Logs name the server either way; resource URIs carry the namespace only when it has one.
    let hub = match &server.namespace {
        Some(namespace) => crate::upstream::Hub::new(namespace.clone()),
        None => crate::upstream::Hub::unprefixed(server.name.clone()),
    };
    let handler = crate::upstream::UpstreamClient::new(watching, hub.clone(), true);
    match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            // The gateway's own bearer token is no business of the servers it starts (a config
            // that sets it for a server explicitly still can: `envs` comes after).
            cmd.env_remove("PEGBOARD_TOKEN");
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let (transport, stderr) = crate::upstream::child::spawn(
                cmd,
                server.message_limit(),
                hub.namespace(),
                tap.clone(),
            )
            .map_err(|e| spawn_error(command, cwd.as_deref(), &e))?;
            hub.set_lane(transport.lane());
            let tail = StderrTail::new(STDERR_TAIL_LINES);
            tail.follow(stderr, server.name.clone());
            match tokio::time::timeout(
                handshake_timeout,
                handler.into_dyn().serve_with_lifecycle(
                    crate::upstream::ProgressTap::new(transport, hub.clone()),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(service)) => Ok(Connection {
                    service,
                    watch,
                    stderr: Some(tail),
                    hub,
                    tap,
                }),
                Ok(Err(e)) => {
                    tracing::debug!(server = %server.name, "handshake error: {e:?}");
                    let refused = answered_with_error(&e);
                    let exited = tail.wait_closed(Duration::from_millis(500)).await;
                    if exited {
                        Err(Failed {
                            refused,
                            error: anyhow!(
                                "`{command}` exited during the MCP handshake ({}){}",
                                describe(&e),
                                tail.render()
                            ),
                        })
                    } else {
                        Err(Failed {
                            refused,
                            error: anyhow!(
                                "`{command}` started but the MCP handshake failed: {}{}",
                                describe(&e),
                                tail.render()
                            ),
                        })
                    }
                }
                Err(_) => {
                    // Dropping the serve future kills the child.
                    Err(anyhow!(
                        "`{command}` did not answer the MCP handshake within {}s (is it an MCP stdio server? \
                         raise --startup-timeout if it is slow){}",
                        handshake_timeout.as_secs_f64(),
                        tail.render()
                    )
                    .into())
                }
            }
        }
        Transport::Http {
            url,
            headers,
            oauth,
        } => {
            if let Ok(parsed) = url::Url::parse(url)
                && let Some(host) = parsed.host_str()
            {
                hub.set_address(host, parsed.port_or_known_default());
            }
            let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .max_sse_event_size(server.message_limit())
                .max_json_response_size(server.message_limit());
            let mut custom = HashMap::new();
            for (k, v) in headers {
                if k.eq_ignore_ascii_case("authorization")
                    && let Some(token) = v
                        .strip_prefix("Bearer ")
                        .or_else(|| v.strip_prefix("bearer "))
                {
                    cfg = cfg.auth_header(token.trim());
                    continue;
                }
                let name = HeaderName::from_bytes(k.as_bytes())
                    .with_context(|| format!("header name `{k}` is not valid"))?;
                let value = HeaderValue::from_str(v)
                    .with_context(|| format!("value of header `{k}` is not valid"))?;
                custom.insert(name, value);
            }
            if !custom.is_empty() {
                cfg = cfg.custom_headers(custom);
            }
            let client =
                crate::io::http_client::client().context("cannot set up the HTTP client (TLS)")?;
            let client = crate::io::limit_http::LimitedHttpClient::new(
                client,
                hub.namespace(),
                server.message_limit(),
            )
            .with_tap(tap.clone());
            // OAuth unless the config gives a static `Authorization` header: the stored token
            // (refreshed as needed) on every request, or none until a login.
            let auth = if cfg.auth_header.is_some() {
                crate::oauth::Upstream::anonymous(&server.name)
            } else {
                crate::oauth::Upstream::open(&server.name, url, oauth).await?
            };
            let client = crate::oauth::OAuthHttpClient::new(client, auth.clone());
            let transport = StreamableHttpClientTransport::with_client(client, cfg);
            match tokio::time::timeout(
                handshake_timeout,
                handler.into_dyn().serve_with_lifecycle(
                    crate::upstream::ProgressTap::new(transport, hub.clone()),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(service)) => {
                    auth.close_on_needs_login(service.cancellation_token());
                    Ok(Connection {
                        service,
                        watch,
                        stderr: None,
                        hub,
                        tap,
                    })
                }
                Ok(Err(_)) if auth.needs_login() => {
                    Err(anyhow::Error::new(crate::oauth::NeedsLogin {
                        server: server.name.clone(),
                    })
                    .into())
                }
                Ok(Err(e)) => {
                    tracing::debug!(server = %server.name, "handshake error: {e:?}");
                    Err(Failed {
                        refused: answered_with_error(&e),
                        error: anyhow!(
                            "could not connect to {url}: {} (is the server running, and is this its streamable \
                             HTTP endpoint, usually ending in /mcp?)",
                            describe(&e)
                        ),
                    })
                }
                Err(_) => Err(anyhow!(
                    "{url} did not answer the MCP handshake within {}s",
                    handshake_timeout.as_secs_f64()
                )
                .into()),
            }
        }
    }
}

/// The innermost cause of an error: rmcp's outer messages name transport types, the inner ones say what
/// actually happened ("Connection refused", "Broken pipe", an HTTP status).
fn describe(e: &rmcp::service::ClientInitializeError) -> String {
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            format!("{}, when trying to {context}", root_cause(error))
        }
        other => other.to_string(),
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

fn spawn_error(command: &str, cwd: Option<&std::path::Path>, e: &std::io::Error) -> anyhow::Error {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => match cwd {
            Some(dir) if !dir.is_dir() => format!(
                " (the working directory `{}` does not exist)",
                dir.display()
            ),
            _ if command.contains('/') => " (no such file; check the path)".to_string(),
            _ => " (not found on PATH; install it or give the full path)".to_string(),
        },
        std::io::ErrorKind::PermissionDenied => {
            " (not executable; check its permissions)".to_string()
        }
        _ => String::new(),
    };
    anyhow!("could not start `{command}`: {e}{hint}")
}

#[cfg(test)]
mod tests {
    use super::super::connect;
    use super::*;
    use crate::config::ServerConfig;
    use std::time::Duration;

    #[tokio::test]
    async fn a_missing_program_is_reported_with_a_hint() {
        let server = ServerConfig {
            name: "ghost".into(),
            namespace: Some("ghost".into()),
            transport: Transport::Stdio {
                command: "pegboard-no-such-program-xyz".into(),
                args: vec![],
                env: Default::default(),
                cwd: None,
            },
            allow: None,
            deny: vec![],
            timeout: None,
            max_message: None,
            session: Default::default(),
            guards: Default::default(),
        };
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_secs(5))
                .await
                .err()
                .expect("must fail")
        );
        assert!(msg.contains("not found on PATH"), "{msg}");
    }

    /// A stdio server that is a shell script.
    fn sh_server(name: &str, script: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            namespace: Some(name.into()),
            transport: Transport::Stdio {
                command: "sh".into(),
                args: vec!["-c".into(), script.into()],
                env: Default::default(),
                cwd: None,
            },
            allow: None,
            deny: vec![],
            timeout: None,
            max_message: None,
            session: Default::default(),
            guards: Default::default(),
        }
    }

    #[tokio::test]
    async fn a_crashing_server_shows_its_stderr() {
        let server = sh_server("crash", "echo 'boom: missing API key' >&2; exit 3");
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_secs(5))
                .await
                .err()
                .expect("must fail")
        );
        assert!(
            msg.contains("exited during the MCP handshake")
                && msg.contains("boom: missing API key"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn a_silent_server_times_out() {
        let server = sh_server("mute", "echo waiting >&2; sleep 30");
        let msg = format!(
            "{:#}",
            connect(&server, Duration::from_millis(500))
                .await
                .err()
                .expect("must fail")
        );
        assert!(
            msg.contains("did not answer") && msg.contains("waiting"),
            "{msg}"
        );
    }
}
