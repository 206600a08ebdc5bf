//! A client that holds a call open until the test lets it finish: the test server's `ask` tool
//! asks the client for input during the call (an elicitation), and [`Latched`] answers only when
//! the test releases it. Drain tests keep a call in flight across a SIGTERM this way, by an event
//! and not a timer.

use anyhow::Result;
use rmcp::{
    ClientHandler, ErrorData, RoleClient,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationCapability, Implementation,
    },
    service::RequestContext,
};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

/// A client whose elicitations are answered only when the test releases them: each one it gets
/// is reported on `asked`, with the sender that answers it.
#[derive(Clone)]
pub struct Latched {
    /// Each elicitation, with the sender that answers it.
    pub asked: mpsc::Sender<oneshot::Sender<()>>,
}

impl ClientHandler for Latched {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(ElicitationCapability::new());
        ClientConfig::new(caps, Implementation::new("latched", "1"))
    }

    async fn create_elicitation(
        &self,
        _params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (release, released) = oneshot::channel();
        self.asked
            .send(release)
            .await
            .map_err(|_| ErrorData::internal_error("the test is gone", None))?;
        released
            .await
            .map_err(|_| ErrorData::internal_error("never released", None))?;
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": "late"})))
    }
}

/// A config of the test server with its `ask` tool, in `dir`.
pub fn ask_config(dir: &std::path::Path) -> Result<std::path::PathBuf> {
    let config = dir.join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"t": super::demo_server("test", &["--ask-tool"])}}).to_string(),
    )?;
    Ok(config)
}

/// Call `t-ask` (an elicitation) in a task of its own: it ends when the test releases it.
pub fn call_ask(
    client: rmcp::service::RunningService<RoleClient, Latched>,
) -> tokio::task::JoinHandle<Result<rmcp::model::CallToolResult, rmcp::service::ServiceError>> {
    tokio::spawn(async move {
        let arguments = json!({"via": "elicitation"});
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        client
            .peer()
            .call_tool(CallToolRequestParams::new("t-ask").with_arguments(arguments))
            .await
    })
}
