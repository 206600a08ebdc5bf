//! A login offered through the client (issue 23, item 6): `pegboard serve` in front of the
//! TypeScript SDK's example server with its demo authorization server
//! (`simpleStreamableHttp.js --oauth`), never logged in. A real client (rmcp's, in this process)
//! that declares URL-mode elicitation calls one of the server's tools: the call is answered
//! "server `demo` needs a login", the gateway sends the client `elicitation/create` in `url`
//! mode with the authorization URL, the client follows it as the user's browser would, the
//! login completes, and the server's tools come onto the board (awaited on `list_changed`).
//! Another call while that login is offered (from another session too) offers nothing more, and
//! a client that takes form-mode elicitation only gets the answer alone and starts no login.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use common::oauth::{browser, oauth_config, ts_oauth_server};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::{Semaphore, mpsc, watch};

const WAIT: Duration = Duration::from_secs(60);

const NEEDS_LOGIN: &str = "server `demo` needs a login: run `pegboard login demo`";

/// A client that declares URL-mode elicitation, tells the test each URL it is offered, opens it
/// (as the user's browser) once the test lets it, and counts `tools/list_changed`.
#[derive(Clone)]
struct Browsing {
    offered: mpsc::UnboundedSender<(String, String)>,
    /// Each offered URL is opened once the test adds a permit.
    go: Arc<Semaphore>,
    changes: watch::Sender<u64>,
    /// What the redirect listener answered the browser.
    pages: Arc<Mutex<Vec<String>>>,
}

impl Browsing {
    fn new() -> (
        Self,
        mpsc::UnboundedReceiver<(String, String)>,
        watch::Receiver<u64>,
    ) {
        let (offered, urls) = mpsc::unbounded_channel();
        let (changes, changed) = watch::channel(0);
        let client = Self {
            offered,
            go: Arc::new(Semaphore::new(0)),
            changes,
            pages: Arc::default(),
        };
        (client, urls, changed)
    }
}

impl ClientHandler for Browsing {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("browsing-client", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams { message, url, .. } = request else {
            return Err(ErrorData::invalid_params(
                "this client takes URLs only",
                None,
            ));
        };
        let _ = self.offered.send((message, url.clone()));
        let permit = self.go.acquire().await;
        drop(permit);
        let page = async { browser().get(&url).send().await?.text().await };
        let page = page
            .await
            .map_err(|e| ErrorData::internal_error(format!("could not open {url}: {e}"), None))?;
        self.pages
            .lock()
            .map_err(|_| ErrorData::internal_error("lock", None))?
            .push(page);
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }
}

/// A client that takes form-mode elicitation only: it must get the answer alone, never a URL.
/// It keeps every elicitation it is sent, and declines it.
#[derive(Clone, Default)]
struct FormOnly {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for FormOnly {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("form-only-client", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked
            .lock()
            .map_err(|_| ErrorData::internal_error("lock", None))?
            .push(format!("{request:?}"));
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}

type Client = RunningService<RoleClient, Browsing>;

async fn greet<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
) -> Result<CallToolResult> {
    let arguments = serde_json::json!({"name": name});
    let request = CallToolRequestParams::new("demo-greet")
        .with_arguments(arguments.as_object().cloned().context("arguments")?);
    Ok(client.call_tool(request).await?)
}

/// The call is answered "needs a login", as an error result.
fn assert_needs_login(result: &CallToolResult) {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(common::first_text(result), NEEDS_LOGIN, "{result:?}");
}

/// The first URL offered to a client, within [`WAIT`].
async fn offered(urls: &mut mpsc::UnboundedReceiver<(String, String)>) -> Result<(String, String)> {
    tokio::time::timeout(WAIT, urls.recv())
        .await
        .context("no elicitation/create came")?
        .context("the client ended")
}

/// The login offered to `client`, after a second call (`again`, maybe from another session)
/// while it is offered: one URL, opened; the server comes onto the board and its tool answers.
async fn login_through(
    client: &Client,
    browsing: &Browsing,
    urls: &mut mpsc::UnboundedReceiver<(String, String)>,
    changes: &mut watch::Receiver<u64>,
    log: &mut watch::Receiver<Vec<String>>,
    again: impl AsyncFnOnce() -> Result<CallToolResult>,
) -> Result<()> {
    let before = client.list_all_tools().await?;
    ensure!(before.iter().all(|t| t.name != "demo-greet"), "{before:?}");
    assert_needs_login(&greet(client, "Ada").await?);
    let (message, url) = offered(urls).await?;
    assert!(message.contains("log in to `demo`"), "{message}");
    assert!(
        url.contains("/authorize?") && url.contains("code_challenge="),
        "{url}"
    );
    // While it is offered, another call gets the same answer and no second offer.
    assert_needs_login(&again().await?);
    common::wait_for_line(log, "a login is already offered to a client").await?;

    browsing.go.add_permits(1);
    common::changes::after_changes(changes, WAIT, "demo-greet", async || {
        let tools = client.list_all_tools().await.ok()?;
        tools.iter().any(|t| t.name == "demo-greet").then_some(())
    })
    .await?;
    assert_eq!(
        common::first_text(&greet(client, "Bo").await?),
        "Hello, Bo!"
    );
    let pages = browsing
        .pages
        .lock()
        .map_err(|_| anyhow::anyhow!("lock"))?
        .clone();
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(pages[0].contains("PegBoard got the login"), "{}", pages[0]);
    ensure!(urls.try_recv().is_err(), "a second URL was offered");
    Ok(())
}

/// The gateway's log filter: the offers' debug lines.
const LOG: &str = "warn,pegboard_gateway::oauth=debug";

#[tokio::test]
async fn over_http_a_client_that_takes_urls_is_offered_the_login_once() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("demo", &url)])?;
    let data_env = data.to_string_lossy().into_owned();
    let (_gateway, gateway_url, mut log) = common::serve_http_logged(
        &config,
        &[],
        &[("XDG_DATA_HOME", &data_env), ("RUST_LOG", LOG)],
    )
    .await?;
    common::wait_for_line(&mut log, NEEDS_LOGIN).await?;

    let (browsing, mut urls, mut changes) = Browsing::new();
    let client = tokio::time::timeout(
        WAIT,
        browsing
            .clone()
            .serve(StreamableHttpClientTransport::from_uri(
                gateway_url.as_str(),
            )),
    )
    .await??;
    // Another session that takes URLs too: the login is being offered, so it is not offered
    // again.
    let (other, mut other_urls, _) = Browsing::new();
    let other = tokio::time::timeout(
        WAIT,
        other.serve(StreamableHttpClientTransport::from_uri(
            gateway_url.as_str(),
        )),
    )
    .await??;
    // A client that does not take URLs gets the answer alone and starts no login: the first
    // call of the client that takes them is still offered one (`login_through`).
    let form_only = FormOnly::default();
    let plain = tokio::time::timeout(
        WAIT,
        form_only
            .clone()
            .serve(StreamableHttpClientTransport::from_uri(
                gateway_url.as_str(),
            )),
    )
    .await??;
    assert_needs_login(&greet(&plain, "Di").await?);
    login_through(
        &client,
        &browsing,
        &mut urls,
        &mut changes,
        &mut log,
        async || greet(&other, "Cy").await,
    )
    .await?;
    ensure!(
        other_urls.try_recv().is_err(),
        "the other session was offered a URL"
    );
    let asked = form_only
        .asked
        .lock()
        .map_err(|_| anyhow::anyhow!("lock"))?
        .clone();
    ensure!(
        asked.is_empty(),
        "the form-only client was asked: {asked:?}"
    );
    client.cancel().await?;
    other.cancel().await?;
    plain.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn over_stdio_a_client_that_takes_urls_is_offered_the_login_once() -> Result<()> {
    let (_server, url) = ts_oauth_server().await?;
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let config = oauth_config(dir.path(), &[("demo", &url)])?;
    let mut command = tokio::process::Command::new(common::pegboard());
    command
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .env("XDG_DATA_HOME", &data)
        .env("RUST_LOG", LOG);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let mut log = common::collect_lines(stderr.context("stderr")?);
    let (browsing, mut urls, mut changes) = Browsing::new();
    let client = tokio::time::timeout(WAIT, browsing.clone().serve(transport)).await??;
    common::wait_for_line(&mut log, NEEDS_LOGIN).await?;
    login_through(
        &client,
        &browsing,
        &mut urls,
        &mut changes,
        &mut log,
        async || greet(&client, "Cy").await,
    )
    .await?;
    client.cancel().await?;
    Ok(())
}
