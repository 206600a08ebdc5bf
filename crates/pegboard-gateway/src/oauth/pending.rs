//! Servers waiting for a login, for the call pipeline and the supervisor.
//!
//! When a server needs a login its tools leave the board; a call of one of them would then read
//! "unknown tool". [`PendingLogins::message_for_tool`] gives the pipeline the better answer,
//! "server `NAME` needs a login: run `pegboard login NAME`", from a lock-free snapshot.
//! [`wait_for_login`] is what a supervisor awaits before starting such a server again.

use std::sync::{Arc, LazyLock};

use arc_swap::ArcSwap;

use super::error::NeedsLogin;
use crate::config::{ServerConfig, Transport};
use crate::credentials::{CredentialRecord, Store, StoreKey};

/// One server waiting for a login.
#[derive(Debug, Clone)]
struct Pending {
    server: String,
    /// Its namespace, when its tools are prefixed.
    namespace: Option<String>,
    /// Its tools' board names when it was last on the board.
    tools: Vec<String>,
    /// Its entry, for a login offered to a client ([`super::elicit::offer_login_for_tool`]).
    config: Arc<ServerConfig>,
}

/// The servers of this process that wait for a login.
#[derive(Debug, Default)]
pub struct PendingLogins {
    list: ArcSwap<Vec<Pending>>,
}

static PENDING: LazyLock<PendingLogins> = LazyLock::new(PendingLogins::default);

/// The process's [`PendingLogins`].
pub fn pending() -> &'static PendingLogins {
    &PENDING
}

impl PendingLogins {
    /// `server` needs a login; `tools` are the board names its tools had (empty if it never
    /// got on the board).
    pub fn mark(&self, server: &ServerConfig, tools: Vec<String>) {
        let config = Arc::new(server.clone());
        self.list.rcu(|list| {
            let mut next: Vec<Pending> = list
                .iter()
                .filter(|p| p.server != server.name)
                .cloned()
                .collect();
            next.push(Pending {
                server: server.name.clone(),
                namespace: server.namespace.clone(),
                tools: tools.clone(),
                config: Arc::clone(&config),
            });
            next
        });
    }

    /// `server` is logged in again.
    pub fn clear(&self, server: &str) {
        self.list.rcu(|list| {
            list.iter()
                .filter(|p| p.server != server)
                .cloned()
                .collect::<Vec<_>>()
        });
    }

    /// Whether `server` waits for a login.
    pub fn is_pending(&self, server: &str) -> bool {
        self.list.load().iter().any(|p| p.server == server)
    }

    /// For a call of `tool` that is not on the board: the error to answer when it belongs to a
    /// server waiting for a login (by its last known tools, else by its namespace prefix).
    /// No allocation unless it does.
    pub fn message_for_tool(&self, tool: &str) -> Option<String> {
        let server = self.server_of_tool(tool)?;
        Some(
            NeedsLogin {
                server: server.name.clone(),
            }
            .to_string(),
        )
    }

    /// The entry of the server waiting for a login that `tool` belongs to (as
    /// [`PendingLogins::message_for_tool`] finds it).
    pub fn server_of_tool(&self, tool: &str) -> Option<Arc<ServerConfig>> {
        let list = self.list.load();
        let owner = list
            .iter()
            .find(|p| p.tools.iter().any(|t| t == tool))
            .or_else(|| {
                list.iter().find(|p| {
                    p.namespace.as_deref().is_some_and(|ns| {
                        tool.strip_prefix(ns)
                            .is_some_and(|rest| rest.starts_with('-'))
                    })
                })
            })?;
        Some(Arc::clone(&owner.config))
    }
}

/// The board names of the tools routed to the service at `index` (for [`PendingLogins::mark`]).
pub fn tools_of(board: &pegboard::PegBoard, index: usize) -> Vec<String> {
    board
        .list_all_tools()
        .into_iter()
        .filter(|name| board.get_tool_route(name).is_some_and(|(i, _)| i == index))
        .collect()
}

/// Wait until `server` (a `url` server) has usable stored credentials: a `pegboard login` in any
/// process completed. Returns at once for a server that is not a `url` server or already has.
pub async fn wait_for_login(server: &ServerConfig) {
    let Transport::Http { url, oauth, .. } = &server.transport else {
        return;
    };
    let store = loop {
        match Store::open(oauth.credentials).await {
            Ok(store) => break store,
            Err(e) => {
                tracing::warn!(server = %server.name, "cannot watch for a login: {e}");
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            }
        }
    };
    store
        .server(StoreKey::new(url, oauth))
        .wait_for(CredentialRecord::is_logged_in)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, namespace: Option<&str>) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            namespace: namespace.map(str::to_string),
            transport: Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: Default::default(),
                oauth: Default::default(),
            },
            allow: None,
            deny: vec![],
            timeout: None,
            max_message: None,
            session: Default::default(),
            guards: Default::default(),
        }
    }

    #[test]
    fn a_pending_servers_tools_get_the_login_message() {
        let logins = PendingLogins::default();
        logins.mark(&server("linear", Some("linear")), vec![]);
        logins.mark(&server("plain", None), vec!["search".into()]);
        assert_eq!(
            logins.message_for_tool("linear-create_issue").as_deref(),
            Some("server `linear` needs a login: run `pegboard login linear`")
        );
        assert_eq!(
            logins.message_for_tool("search").as_deref(),
            Some("server `plain` needs a login: run `pegboard login plain`")
        );
        assert_eq!(logins.message_for_tool("linearx-y"), None);
        assert_eq!(logins.message_for_tool("other-tool"), None);
        logins.clear("linear");
        assert_eq!(logins.message_for_tool("linear-create_issue"), None);
        assert!(logins.is_pending("plain") && !logins.is_pending("linear"));
    }
}
