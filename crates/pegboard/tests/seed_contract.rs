//! Every item of the public contract (shared/SEED_API.md), written the way the contract reads.

mod common;

use std::sync::Arc;

use common::{FixedTools, connect};
use pegboard::{PegBoard, PegBoardError, Tool};
use serde_json::json;

/// The service type exactly as the contract spells it.
type ContractService = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;

#[test]
fn the_signatures_are_the_contracts() {
    // Each sync method coerced to the exact fn type of the contract.
    let _: fn() -> PegBoard = PegBoard::new;
    let _: fn() -> PegBoard = <PegBoard as Default>::default;
    let _: fn(&PegBoard, Option<&str>, Tool, usize) -> Result<(), PegBoardError> =
        PegBoard::register_tool;
    let _: fn(&PegBoard, &str) -> Option<Tool> = PegBoard::get_tool;
    let _: fn(&PegBoard, &[&str]) -> Option<Vec<Tool>> = PegBoard::select_tools;
    let _: fn(&PegBoard, &str) -> Option<(usize, String)> = PegBoard::get_tool_route;
    let _: fn(&PegBoard, &str) -> Vec<String> = PegBoard::list_tools_in_namespace;
    let _: fn(&PegBoard, &str) -> Vec<Tool> = PegBoard::get_tools_in_namespace;
    let _: fn(&PegBoard) -> Vec<String> = PegBoard::list_all_tools;
    let _: fn(&PegBoard) -> Vec<Tool> = PegBoard::get_all_tools;
    let _: fn(&PegBoard) -> Vec<String> = PegBoard::list_namespaces;
    let _: fn(&PegBoard, &str) -> Result<(), PegBoardError> = PegBoard::unregister_tool;
    let _: fn(&PegBoard, &str) -> Result<usize, PegBoardError> = PegBoard::unregister_namespace;
    let _: fn(&PegBoard) -> usize = PegBoard::tool_count;
    let _: fn(&PegBoard) -> usize = PegBoard::service_count;
    let _: fn(&PegBoard) -> usize = PegBoard::namespace_count;
    // Thread safety: shared as `Arc<PegBoard>` between threads and tasks.
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Arc<PegBoard>>();
    shared::<Tool>();
}

/// `add_service` and `call_tool` as async fns with the contract's argument and result types.
async fn add(
    pegboard: &mut PegBoard,
    namespace: Option<String>,
    service: ContractService,
) -> Result<usize, PegBoardError> {
    pegboard.add_service(namespace, service).await
}

async fn call(
    pegboard: &PegBoard,
    name: &str,
    arguments: serde_json::Value,
) -> Result<rmcp::model::CallToolResult, PegBoardError> {
    pegboard.call_tool(name, arguments).await
}

#[tokio::test]
async fn the_usage_block_compiles_and_behaves_as_written() -> Result<(), PegBoardError> {
    let service = connect(FixedTools::named(&["search"])).await;
    let other = connect(FixedTools::named(&["file-read"])).await;

    // The contract's own spelling: `let mut` and `&mut self` both work (the method takes `&self`).
    #[allow(unused_mut)]
    let mut pegboard = PegBoard::new();
    pegboard
        .add_service(Some("web".to_string()), service)
        .await?; // "search" is now "web-search"
    pegboard.add_service(None, other).await?; // names kept as they are
    if let Some(tools) = pegboard.select_tools(&["web-search", "file-read"]) {
        assert_eq!(tools.len(), 2);
        assert!(tools[0].name == "web-search");
        assert_eq!(format!("{}", tools[1].name), "file-read");
    } else {
        panic!("both tools are on the board");
    }
    let result = pegboard
        .call_tool(
            "web-search",
            serde_json::json!({"query": "rust programming"}),
        )
        .await?;
    // The server was called under the original name with these arguments.
    assert_eq!(
        common::text(&result),
        r#"search: {"query":"rust programming"}"#
    );
    Ok(())
}

#[tokio::test]
async fn every_read_and_write_of_the_contract_behaves() {
    let mut pegboard = PegBoard::default();
    assert_eq!(
        add(
            &mut pegboard,
            Some("web_search".into()),
            connect(FixedTools::named(&["search", "fetch"])).await
        )
        .await
        .unwrap(),
        2
    );
    assert_eq!(
        add(
            &mut pegboard,
            Some("file_search".into()),
            connect(FixedTools::named(&["search"])).await
        )
        .await
        .unwrap(),
        1
    );
    assert_eq!(
        add(
            &mut pegboard,
            Some(String::new()),
            connect(FixedTools::named(&["plain"])).await
        )
        .await
        .unwrap(),
        1,
        "an empty namespace keeps names as they are"
    );

    // The original description's example.
    let tool = pegboard.get_tool("web_search-search").unwrap();
    assert!(tool.name == "web_search-search");
    assert_eq!(tool.description.as_deref(), Some("the search tool"));
    assert!(tool.input_schema.is_empty());
    assert!(pegboard.get_tool("file_search-search").unwrap().name == "file_search-search");
    assert_eq!(
        pegboard.get_tool_route("web_search-search"),
        Some((0, "search".to_string()))
    );
    assert_eq!(
        pegboard.get_tool_route("file_search-search"),
        Some((1, "search".to_string()))
    );
    assert_eq!(
        pegboard.get_tool_route("plain"),
        Some((2, "plain".to_string()))
    );
    assert_eq!(pegboard.get_tool("search"), None);

    assert_eq!(
        pegboard
            .select_tools(&["plain", "web_search-fetch"])
            .map(|t| t.len()),
        Some(2)
    );
    assert_eq!(pegboard.select_tools(&["plain", "nope"]), None);
    assert_eq!(
        pegboard.list_tools_in_namespace("web_search"),
        ["web_search-search", "web_search-fetch"]
    );
    let in_ns: Vec<String> = pegboard
        .get_tools_in_namespace("web_search")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(in_ns, pegboard.list_tools_in_namespace("web_search"));
    assert_eq!(
        pegboard.list_all_tools(),
        [
            "web_search-search",
            "web_search-fetch",
            "file_search-search",
            "plain"
        ]
    );
    let all: Vec<String> = pegboard
        .get_all_tools()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(all, pegboard.list_all_tools());
    assert_eq!(pegboard.list_namespaces(), ["web_search", "file_search"]);
    assert_eq!(
        (
            pegboard.tool_count(),
            pegboard.service_count(),
            pegboard.namespace_count()
        ),
        (4, 3, 2)
    );

    // register_tool: prefixed, routed to the given service under the tool's own name.
    let alias = Tool::new("fetch", "Same as web fetch", Arc::new(Default::default()));
    pegboard.register_tool(Some("alias"), alias, 0).unwrap();
    assert_eq!(
        pegboard.get_tool_route("alias-fetch"),
        Some((0, "fetch".to_string()))
    );
    let result = call(&pegboard, "alias-fetch", json!({"url": "u"}))
        .await
        .unwrap();
    assert_eq!(common::text(&result), r#"fetch: {"url":"u"}"#);

    // Errors: ToolNotFound at call_tool, ServiceError when the service's call fails.
    let err = call(&pegboard, "web_search-serch", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, PegBoardError::ToolNotFound { .. }), "{err}");
    let ghost = Tool::new(
        "ghost",
        "the server has no such tool",
        Arc::new(Default::default()),
    );
    pegboard.register_tool(None, ghost, 1).unwrap();
    let err = call(&pegboard, "ghost", json!({})).await.unwrap_err();
    assert!(matches!(err, PegBoardError::ServiceError { .. }), "{err}");
    assert!(matches!(
        pegboard.register_tool(None, Tool::new("x", "", Arc::new(Default::default())), 9),
        Err(PegBoardError::UnknownService { index: 9 })
    ));

    // Removal.
    pegboard.unregister_tool("ghost").unwrap();
    assert!(matches!(
        pegboard.unregister_tool("ghost"),
        Err(PegBoardError::ToolNotFound { .. })
    ));
    assert_eq!(pegboard.unregister_namespace("web_search").unwrap(), 2);
    assert!(matches!(
        pegboard.unregister_namespace("web_search"),
        Err(PegBoardError::UnknownNamespace { .. })
    ));
    assert_eq!(
        pegboard.list_all_tools(),
        ["file_search-search", "plain", "alias-fetch"]
    );
    // alias-fetch still routes to web_search's server, which stays for it.
    let result = call(&pegboard, "alias-fetch", json!({})).await.unwrap();
    assert_eq!(common::text(&result), "fetch: {}");
}

#[tokio::test]
async fn reads_run_concurrently_from_many_tasks_on_an_arc() {
    let pegboard = Arc::new(PegBoard::new());
    pegboard
        .add_service(
            Some("web".into()),
            connect(FixedTools::named(&["search"])).await,
        )
        .await
        .unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let pegboard = Arc::clone(&pegboard);
        tasks.spawn(async move {
            assert!(pegboard.get_tool("web-search").is_some());
            let result = pegboard
                .call_tool("web-search", json!({"i": i}))
                .await
                .unwrap();
            assert_eq!(common::text(&result), format!(r#"search: {{"i":{i}}}"#));
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}
