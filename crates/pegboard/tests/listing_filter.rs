//! `ServiceOptions::filter`: a `ListingFilter` sees every listing of a service's tools and prompts
//! (add, refresh, prompts/list, prompts/get), may edit or withhold them, and a withheld item's
//! request is answered with the filter's reason.

mod common;

use std::sync::{Arc, Mutex};

use pegboard::{Listing, ListingFilter, PegBoard, PegBoardError, ServiceOptions};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
        ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
};

/// A server whose tools (name, description) the test changes between listings.
#[derive(Clone, Default)]
struct Changing {
    tools: Arc<Mutex<Vec<(String, String)>>>,
    prompts: Arc<Mutex<Vec<(String, String)>>>,
}

impl Changing {
    fn set_tools(&self, tools: &[(&str, &str)]) {
        *self.tools.lock().unwrap() = tools
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .collect();
    }
}

impl ServerHandler for Changing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("changing", "1.2.3"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .lock()
            .unwrap()
            .iter()
            .map(|(n, d)| Tool::new(n.clone(), d.clone(), Arc::new(Default::default())))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(
            CallToolResult::success(vec![ContentBlock::text(format!("ran {}", request.name))])
                .into(),
        )
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .prompts
            .lock()
            .unwrap()
            .iter()
            .map(|(n, d)| Prompt::new(n.clone(), Some(d.clone()), None))
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("prompt {}", request.name),
        )])
        .into())
    }
}

/// Withholds what says HIDE, trims the rest, and counts the listings it saw.
#[derive(Default)]
struct HideMarked {
    tool_listings: Mutex<Vec<Vec<String>>>,
    servers: Mutex<Vec<String>>,
}

impl ListingFilter for HideMarked {
    fn tools(&self, listing: &mut Listing<'_, Tool>) {
        self.tool_listings
            .lock()
            .unwrap()
            .push(listing.items.iter().map(|t| t.name.to_string()).collect());
        if let Some(server) = listing.server {
            self.servers.lock().unwrap().push(server.version.clone());
        }
        let marked: Vec<String> = listing
            .items
            .iter()
            .filter(|t| t.description.as_deref().is_some_and(|d| d.contains("HIDE")))
            .map(|t| t.name.to_string())
            .collect();
        for name in marked {
            let shown = listing.board_name(&name).unwrap();
            assert!(listing.withhold(&name, format!("tool `{shown}` is held back")));
        }
        for tool in &mut listing.items {
            if let Some(d) = &tool.description {
                tool.description = Some(d.trim().to_string().into());
            }
        }
    }

    fn prompts(&self, listing: &mut Listing<'_, Prompt>) {
        let marked: Vec<String> = listing
            .items
            .iter()
            .filter(|p| p.description.as_deref().is_some_and(|d| d.contains("HIDE")))
            .map(|p| p.name.clone())
            .collect();
        for name in marked {
            listing.withhold(&name, format!("prompt `{name}` is held back"));
        }
    }
}

async fn board_with(server: &Changing, options: ServiceOptions) -> (PegBoard, usize) {
    let board = PegBoard::new();
    let added = board
        .add_service_with(
            Some("srv".into()),
            common::connect(server.clone()).await,
            options,
        )
        .await
        .expect("add");
    (board, added.index)
}

#[tokio::test]
async fn a_withheld_tool_is_off_the_board_and_its_call_gets_the_reason() {
    let server = Changing::default();
    server.set_tools(&[("ok", "  fine  "), ("bad", "HIDE me")]);
    let filter = Arc::new(HideMarked::default());
    let (board, _) = board_with(&server, ServiceOptions::new().filter(filter.clone())).await;

    assert_eq!(board.list_all_tools(), ["srv-ok"]);
    // The filter's edit is what the board holds.
    assert_eq!(
        board.get_tool("srv-ok").unwrap().description.as_deref(),
        Some("fine")
    );
    assert_eq!(filter.servers.lock().unwrap().as_slice(), ["1.2.3"]);
    assert_eq!(
        board.withheld("srv-bad").as_deref(),
        Some("tool `srv-bad` is held back")
    );
    assert_eq!(board.withheld("srv-ok"), None);
    assert_eq!(board.withheld("srv-nothing"), None);

    let err = board
        .call_tool("srv-bad", serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, PegBoardError::ToolWithheld { .. }), "{err:?}");
    assert_eq!(err.to_string(), "tool `srv-bad` is held back");
    let err = board.tool_target("srv-bad").unwrap_err();
    assert_eq!(err.to_string(), "tool `srv-bad` is held back");
    // A name nobody withheld is still "not on the board".
    let err = board.tool_target("srv-nothing").unwrap_err();
    assert!(matches!(err, PegBoardError::ToolNotFound { .. }));
    let result = board
        .call_tool("srv-ok", serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(common::text(&result), "ran ok");
}

#[tokio::test]
async fn added_counts_what_was_withheld_and_allow_deny_run_first() {
    let server = Changing::default();
    server.set_tools(&[("a", "HIDE"), ("b", "HIDE"), ("c", "fine")]);
    let filter = Arc::new(HideMarked::default());
    let board = PegBoard::new();
    let added = board
        .add_service_with(
            Some("srv".into()),
            common::connect(server.clone()).await,
            ServiceOptions::new().deny(["b"]).filter(filter.clone()),
        )
        .await
        .unwrap();
    assert_eq!((added.tools, added.withheld), (1, 1));
    // The filter never saw the denied tool, and nothing is withheld under its name.
    assert_eq!(filter.tool_listings.lock().unwrap()[0], ["a", "c"]);
    assert_eq!(board.withheld("srv-b"), None);
}

#[tokio::test]
async fn every_refresh_goes_through_the_filter_in_one_change() {
    let server = Changing::default();
    server.set_tools(&[("one", "fine"), ("two", "fine")]);
    let filter = Arc::new(HideMarked::default());
    let (board, index) = board_with(&server, ServiceOptions::new().filter(filter.clone())).await;
    assert_eq!(board.list_all_tools(), ["srv-one", "srv-two"]);

    // `two` turns bad and `three` appears bad: both are off the board after one swap.
    server.set_tools(&[("one", "fine"), ("two", "now HIDE"), ("three", "HIDE")]);
    let before = board.generation();
    let report = board.refresh_service(index).await.unwrap();
    assert_eq!(board.generation(), before + 1, "one change for one listing");
    assert_eq!(board.list_all_tools(), ["srv-one"]);
    assert_eq!(report.removed, ["srv-two"]);
    let mut withheld = report.withheld.clone();
    withheld.sort();
    assert_eq!(withheld, ["srv-three", "srv-two"]);
    assert!(board.withheld("srv-three").is_some());
    assert_eq!(filter.tool_listings.lock().unwrap().len(), 2);

    // Only what is withheld changes (`three` goes away): the board's tools do not, so no
    // generation change, but the lookup follows the last listing.
    server.set_tools(&[("one", "fine"), ("two", "now HIDE")]);
    let before = board.generation();
    let report = board.refresh_service(index).await.unwrap();
    assert!(report.is_unchanged());
    assert_eq!(board.generation(), before);
    assert_eq!(board.withheld("srv-three"), None);
    assert!(board.withheld("srv-two").is_some());

    // Fixed on the server: back on the board, no longer withheld.
    server.set_tools(&[("one", "fine"), ("two", "fine")]);
    board.refresh_service(index).await.unwrap();
    assert_eq!(board.list_all_tools(), ["srv-one", "srv-two"]);
    assert_eq!(board.withheld("srv-two"), None);
}

#[tokio::test]
async fn a_removed_service_takes_its_withheld_names_along() {
    let server = Changing::default();
    server.set_tools(&[("bad", "HIDE")]);
    let (board, index) = board_with(
        &server,
        ServiceOptions::new().filter(Arc::new(HideMarked::default())),
    )
    .await;
    assert!(board.withheld("srv-bad").is_some());
    board.remove_service(index).unwrap();
    assert_eq!(board.withheld("srv-bad"), None);
    let err = board.tool_target("srv-bad").unwrap_err();
    assert!(matches!(err, PegBoardError::ToolNotFound { .. }));
}

#[tokio::test]
async fn prompts_go_through_the_filter_on_list_and_get() {
    let server = Changing::default();
    server.set_tools(&[("t", "fine")]);
    *server.prompts.lock().unwrap() = vec![
        ("greet".into(), "Say hello".into()),
        ("steal".into(), "HIDE this one".into()),
    ];
    let (board, _) = board_with(
        &server,
        ServiceOptions::new().filter(Arc::new(HideMarked::default())),
    )
    .await;
    let names: Vec<String> = board
        .list_prompts()
        .await
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["srv-greet"]);
    let err = board.get_prompt("srv-steal", None).await.unwrap_err();
    assert!(
        matches!(err, PegBoardError::PromptWithheld { .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "prompt `steal` is held back");
    assert!(board.get_prompt("srv-greet", None).await.is_ok());
}

#[tokio::test]
async fn without_a_filter_nothing_changes() {
    let server = Changing::default();
    server.set_tools(&[("bad", "HIDE  ")]);
    let (board, _) = board_with(&server, ServiceOptions::new()).await;
    assert_eq!(board.list_all_tools(), ["srv-bad"]);
    assert_eq!(
        board.get_tool("srv-bad").unwrap().description.as_deref(),
        Some("HIDE  ")
    );
}
