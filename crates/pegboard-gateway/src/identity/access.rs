//! The `clients` and `auth` sections of the config, parsed and checked: data only (the
//! compiled patterns are data too: they compare by their source).

use std::sync::Arc;

use crate::limits::LimitSettings;
use crate::policy::ToolPatterns;

use super::claims::ClaimsMatch;
use super::token::TokenDigest;

/// Who may call the gateway, and what each caller may see.
///
/// ```json
/// { "mcpServers": { "...": {} },
///   "clients": {
///     "ci-bot":  { "token": "${CI_BOT_TOKEN}", "tools": ["units-*", "!units-list_units"] },
///     "analyst": { "tokenSha256": "<hex sha-256 of the token>", "tools": ["docs-*", "notes-search"] },
///     "alice":   { "jwt": { "sub": "alice@example.com" } },
///     "readers": { "jwt": { "scope": "mcp:read" }, "tools": ["*-search", "*-read"] }
///   },
///   "auth": { "issuer": "https://idp.example.com", "audience": "https://gateway.example.com/mcp" } }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AccessConfig {
    /// The clients, in file order (the first whose credential matches wins).
    pub clients: Vec<ClientConfig>,
    /// The OAuth issuer whose JWTs are accepted, when any client has `jwt`.
    pub auth: Option<AuthConfig>,
}

/// One entry of `clients`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// Its key in `clients`: in errors, logs and the audit log.
    pub name: Arc<str>,
    /// Its static token (from `token` or `tokenSha256`), as a digest.
    pub token: Option<TokenDigest>,
    /// The claims a JWT must carry to be this client.
    pub jwt: Option<ClaimsMatch>,
    /// The tools and prompts it may see (`tools`; absent: everything).
    pub tools: ToolPatterns,
    /// Whether it may see resources at all (`resources`, default `true`).
    pub resources: bool,
    /// Its limits.
    pub limits: LimitSettings,
}

/// The `auth` section: the gateway as an OAuth 2.1 resource server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// The authorization server; its metadata (OIDC discovery, else RFC 8414) names its keys.
    pub issuer: String,
    /// The gateway's own resource URL (`aud` of the tokens it accepts, RFC 8707), e.g.
    /// `https://gateway.example.com/mcp`.
    pub audience: String,
}

impl AccessConfig {
    /// The client named `name`.
    pub fn client(&self, name: &str) -> Option<&ClientConfig> {
        self.clients.iter().find(|c| &*c.name == name)
    }

    /// One warning per `tools` pattern that matches none of `names` (the board's tool and
    /// prompt names): a typo, or a server that has not joined yet. For the log at start.
    pub fn unmatched_patterns<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let names: Vec<&str> = names.into_iter().collect();
        let mut out = Vec::new();
        for client in &self.clients {
            for pattern in client.tools.unmatched(names.iter().copied()) {
                out.push(format!(
                    "client `{}`: pattern `{pattern}` in `tools` matches no tool or prompt on the \
                     board (a typo, or a server that has not started yet)",
                    client.name
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn unmatched_patterns() {
        use crate::identity::access::{AccessConfig, ClientConfig};
        use crate::policy::ToolPatterns;
        let access = AccessConfig {
            auth: None,
            clients: vec![ClientConfig {
                name: "ci-bot".into(),
                token: None,
                jwt: None,
                resources: true,
                tools: ToolPatterns::new(["units-*", "dcos-*"]).unwrap(),
                limits: Default::default(),
            }],
        };
        let warnings = access.unmatched_patterns(["units-convert"]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("`dcos-*`"));
    }
}
