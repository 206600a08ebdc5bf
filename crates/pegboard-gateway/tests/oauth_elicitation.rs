//! A login offered to the MCP client through URL-mode elicitation (MCP 2025-11-25): the server
//! side asks the downstream client to open the authorization URL; the client (here the test,
//! playing the user's browser) opens it; the login completes and the credentials are stored.
//! Real rmcp on both sides, `oidc-provider` as the authorization server.

mod oauth_servers;

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use oauth_servers::{authorization_server, browse, free_port, resource_server};
use pegboard_gateway::config::{CredentialsBackend, OAuthSettings, ServerConfig, Transport};
use pegboard_gateway::testing::{Store, StoreKey};
use pegboard_gateway::testing::{login_through_client_in, offers_url_elicitation};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig as Info,
    Tool, UrlElicitationCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, RoleClient, RoleServer, ServerHandler, ServiceExt};

/// A server whose tool `login` logs in to `upstream` through the calling client.
#[derive(Clone)]
struct Gatewayish {
    store: Store,
    upstream: ServerConfig,
}

impl ServerHandler for Gatewayish {
    fn get_info(&self) -> Info {
        Info::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(serde_json::Map::from_iter([(
            "type".to_string(),
            serde_json::json!("object"),
        )]));
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "login", "log in", schema,
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !offers_url_elicitation(&context.peer) {
            return Err(ErrorData::invalid_request("no URL elicitation", None));
        }
        let logged_in = login_through_client_in(&self.store, context.peer.clone(), &self.upstream)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "logged in, refreshable: {}",
            logged_in.refreshable
        ))])
        .into())
    }
}

/// A client that declares URL-mode elicitation and opens every URL it is given.
#[derive(Clone, Default)]
struct Browsing {
    asked: Arc<Mutex<Vec<(String, String)>>>,
}

impl ClientHandler for Browsing {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation =
            Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        ClientConfig::new(caps, rmcp::model::Implementation::new("browsing", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams { message, url, .. } = request else {
            return Err(ErrorData::invalid_params("expected URL mode", None));
        };
        self.asked
            .lock()
            .expect("lock")
            .push((message.clone(), url.clone()));
        browse(&url)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

#[tokio::test]
async fn the_authorization_url_goes_to_a_client_that_takes_urls() -> Result<()> {
    let (_as, issuer) = authorization_server().await?;
    let (_rs, url) = resource_server("alpha", &issuer).await?;
    let dir = tempfile::tempdir()?;
    let store = Store::file_in(dir.path().join("pegboard"));
    let settings = OAuthSettings {
        redirect_port: Some(free_port()),
        credentials: CredentialsBackend::File,
        ..OAuthSettings::default()
    };
    let upstream = ServerConfig {
        name: "alpha".into(),
        namespace: Some("alpha".into()),
        transport: Transport::Http {
            url: url.clone(),
            headers: Default::default(),
            oauth: settings.clone(),
        },
        allow: None,
        deny: vec![],
        timeout: None,
        max_message: None,
        session: Default::default(),
        guards: Default::default(),
    };
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = Gatewayish {
        store: store.clone(),
        upstream,
    };
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let browsing = Browsing::default();
    let client = browsing.clone().serve(client_io).await?;
    let result = client
        .call_tool(CallToolRequestParams::new("login"))
        .await
        .context("the login tool")?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert_eq!(text, "logged in, refreshable: true");
    let asked = browsing.asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].0.contains("log in to `alpha`"), "{asked:?}");
    assert!(
        asked[0].1.starts_with(&format!("{issuer}/auth?")),
        "{asked:?}"
    );
    let record = store
        .server(StoreKey::new(&url, &settings))
        .load()
        .await?
        .context("stored")?;
    assert!(record.is_logged_in() && record.has_refresh_token());
    client.cancel().await?;
    Ok(())
}
