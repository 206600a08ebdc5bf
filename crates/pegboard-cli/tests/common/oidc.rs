//! A real OpenID provider for the end-to-end JWT tests: the gateway tests' own
//! `crates/pegboard-gateway/tests/oidc_support/oidc_provider.mjs` (panva's `oidc-provider`, run by
//! Node on a loopback port, issuing JWT access tokens for one resource to two machine clients by
//! the client_credentials grant: `reader-bot` may ask for `mcp:read`, `writer-bot` for `mcp:read
//! mcp:write`), and that grant against it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Upper bound for the provider to say it listens (it starts in well under a second).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The running provider (killed when dropped; it also exits when its stdin closes).
pub struct Idp {
    /// `http://127.0.0.1:PORT`, the `iss` of its tokens.
    pub issuer: String,
    /// The resource its tokens are for: their `aud`.
    pub resource: String,
    _child: Child,
}

impl Idp {
    /// Start the provider issuing tokens for `resource` and wait for its `listening` line.
    pub async fn start(resource: &str) -> Result<Idp> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pegboard-gateway/tests/oidc_support/oidc_provider.mjs");
        let modules = super::installed(super::test_deps().join("node/node_modules"));
        super::installed(modules.join("oidc-provider/package.json"));
        let mut child = Command::new("node")
            .arg(script)
            .arg(&modules)
            .arg(resource)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("run node (is Node.js installed?)")?;
        let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let listening = tokio::time::timeout(START_TIMEOUT, async {
            while let Some(line) = lines.next_line().await? {
                if let Ok(event) = serde_json::from_str::<Value>(&line)
                    && event["event"] == "listening"
                {
                    return Ok(event);
                }
            }
            bail!("the provider exited before it listened")
        })
        .await
        .context("no `listening` line from the provider")??;
        // Nothing more is read from stdout; drain it so the provider never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Idp {
            issuer: listening["issuer"]
                .as_str()
                .context("the provider's issuer")?
                .to_string(),
            resource: resource.to_string(),
            _child: child,
        })
    }

    /// An access token for the resource by the client_credentials grant (`scope` may be empty:
    /// a token with no scope).
    pub async fn token(&self, client: &str, secret: &str, scope: &str) -> Result<String> {
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("resource", self.resource.as_str()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(secret))
            .form(&form)
            .send()
            .await?;
        let status = response.status();
        let body: Value = serde_json::from_slice(&response.bytes().await?)?;
        if !status.is_success() || body["token_type"] != "Bearer" {
            bail!("token request for {client} refused: {status} {body}");
        }
        Ok(body["access_token"]
            .as_str()
            .context("access_token")?
            .to_string())
    }
}
