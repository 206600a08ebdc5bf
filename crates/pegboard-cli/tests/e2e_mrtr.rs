//! Multi round-trip requests (SEP-2322) through `pegboard serve`: the test server of the
//! 2026-07-28 generation with its `ask` tool (`--only-2026 --ask-tool`) as a child process,
//! rmcp clients over stdio and streamable HTTP. A client of an older protocol answers the
//! server's input requests as ordinary sampling/elicitation/roots requests on its own
//! connection (over HTTP: on its call's stream); a 2026-07-28 client drives the rounds itself.
// Sampling and roots are deprecated by SEP-2577 (2026-07-28) but live in 2025-11-25.
#![allow(deprecated)]

mod common;

use std::{process::Stdio, time::Duration};

use anyhow::Result;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationCapability, Implementation, ListRootsResult, ProtocolVersion,
        Root, RootsCapabilities, SamplingCapability, SamplingMessage,
    },
    service::RequestContext,
    transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// A client that answers sampling with its name, elicitation with `{"answer": name}` and roots
/// with `file:///name`.
#[derive(Clone)]
struct Answers(&'static str);

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(SamplingCapability::default());
        caps.elicitation = Some(ElicitationCapability::new());
        caps.roots = Some(RootsCapabilities::default());
        ClientConfig::new(caps, Implementation::new(self.0, "1"))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(self.0),
            "test".into(),
        ))
    }

    async fn create_elicitation(
        &self,
        _params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": self.0})))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(format!(
            "file:///{}",
            self.0
        ))]))
    }
}

fn config(dir: &std::path::Path) -> Result<std::path::PathBuf> {
    config_with(dir, &["--only-2026", "--ask-tool"])
}

/// The test server with `args` as `t`.
fn config_with(dir: &std::path::Path, args: &[&str]) -> Result<std::path::PathBuf> {
    let config = json!({"mcpServers": {
        "t": common::demo_server("test", args),
    }});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

fn ask(arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        unreachable!("arguments are an object")
    };
    CallToolRequestParams::new("t-ask").with_arguments(arguments)
}

/// A call as a client of an older protocol sends it: one request, no rounds of its own.
async fn call_once(
    client: &rmcp::service::RunningService<RoleClient, Answers>,
    arguments: Value,
) -> Result<CallToolResult> {
    Ok(tokio::time::timeout(WAIT, client.peer().call_tool(ask(arguments))).await??)
}

#[tokio::test]
async fn a_stdio_client_of_2025_answers_a_2026_server_through_pegboard_serve() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = config(dir.path())?;
    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve").arg("--config").arg(&path);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let client = tokio::time::timeout(WAIT, Answers("stdio").serve(transport)).await??;

    let result = call_once(&client, json!({"via": "sampling"})).await?;
    assert_eq!(common::first_text(&result), "stdio", "{result:?}");
    let result = call_once(&client, json!({"via": "roots", "rounds": 2})).await?;
    assert_eq!(
        common::first_text(&result),
        "file:///stdio | file:///stdio",
        "{result:?}"
    );
    Ok(())
}

#[tokio::test]
async fn http_clients_of_both_generations_get_their_input_asked() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    let (_child, url) = common::serve_http(&config(dir.path())?, &[], &[]).await?;

    // 2025-11-25: the elicitation comes on the stream of the client's own call.
    let legacy = tokio::time::timeout(
        WAIT,
        Answers("legacy").serve(StreamableHttpClientTransport::from_uri(url.as_str())),
    )
    .await??;
    let result = call_once(&legacy, json!({"via": "elicitation", "rounds": 2})).await?;
    let accepted = r#"accept {"answer":"legacy"}"#;
    assert_eq!(
        common::first_text(&result),
        format!("{accepted} | {accepted}"),
        "{result:?}"
    );

    // 2026-07-28: input_required passes through, rmcp's client answers and retries.
    let modern = tokio::time::timeout(
        WAIT,
        Answers("modern").serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.as_str()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await??;
    let result = tokio::time::timeout(
        WAIT,
        modern.call_tool(ask(json!({"via": "sampling", "rounds": 2}))),
    )
    .await??;
    assert_eq!(common::first_text(&result), "modern | modern", "{result:?}");
    Ok(())
}

#[tokio::test]
async fn a_2026_client_answers_a_server_connected_with_initialize_through_the_bridge() -> Result<()>
{
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir()?;
    // Both generations: pegboard connects it with `initialize`, and learns it speaks 2026-07-28
    // too, so it offers 2026-07-28 to its clients; the server then asks during the call.
    let path = config_with(dir.path(), &["--ask-tool"])?;
    let discover = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let (_child, url) = common::serve_http(&path, &[], &[]).await?;
    let client = tokio::time::timeout(
        WAIT,
        Answers("bridged").serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.as_str()),
            discover(),
        ),
    )
    .await??;
    let result = tokio::time::timeout(
        WAIT,
        client.call_tool(ask(json!({"via": "sampling", "rounds": 2}))),
    )
    .await??;
    assert_eq!(
        common::first_text(&result),
        "bridged | bridged",
        "{result:?}"
    );

    let cmd = tokio::process::Command::new(common::pegboard()).configure(|c| {
        c.arg("serve").arg("--config").arg(&path);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    let client = tokio::time::timeout(
        WAIT,
        Answers("stdio").serve_with_lifecycle(transport, discover()),
    )
    .await??;
    let result =
        tokio::time::timeout(WAIT, client.call_tool(ask(json!({"via": "elicitation"})))).await??;
    assert_eq!(
        common::first_text(&result),
        r#"accept {"answer":"stdio"}"#,
        "{result:?}"
    );
    Ok(())
}
