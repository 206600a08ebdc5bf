//! Search mode through a real rmcp client: the meta-tools, direct calls, clashes, bad input.

mod common;

use common::{FixedTools, text};
use demo_servers::{NotesServer, UnitsServer};
use pegboard::PegBoard;
use pegboard_gateway::{
    BoardServer,
    config::{Ranking, SearchSettings, ToolSearch},
};
use rmcp::{ServiceExt, model::CallToolRequestParams};
use serde_json::{Value, json};

async fn gateway(board: PegBoard, settings: SearchSettings) -> pegboard::BoxedService {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let server = BoardServer::new(board).with_tool_search(settings);
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().into_dyn().serve(client_io).await.unwrap()
}

fn on() -> SearchSettings {
    SearchSettings::default().with_mode(ToolSearch::On)
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_string())
        .with_arguments(arguments.as_object().unwrap().clone())
}

async fn demo_board() -> PegBoard {
    let board = PegBoard::new();
    common::add(&board, "notes", NotesServer::new()).await;
    common::add(&board, "units", UnitsServer::new()).await;
    board
}

#[tokio::test]
async fn search_then_call_through_the_meta_tools() {
    let board = demo_board().await;
    let client = gateway(board.clone(), on()).await;

    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search_tools", "call_tool"]);
    let description = listed[0].description.as_deref().unwrap();
    assert!(
        description.contains("- notes (") && description.contains("- units ("),
        "{description}"
    );

    let found = client
        .call_tool(call(
            "search_tools",
            json!({"query": "convert kilograms to grams", "limit": 3}),
        ))
        .await
        .unwrap();
    let tools = found.structured_content.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(tools[0]["name"], "units-convert");
    assert_eq!(tools[0]["namespace"], "units");
    assert!(tools[0]["inputSchema"].is_object());
    assert!(tools.len() <= 3);
    let as_text: Value = serde_json::from_str(&text(&found)).unwrap();
    assert_eq!(&as_text, found.structured_content.as_ref().unwrap());

    let args =
        json!({"name": "units-convert", "arguments": {"value": 2.0, "from": "kg", "to": "g"}});
    let result = client.call_tool(call("call_tool", args)).await.unwrap();
    assert!(text(&result).contains("2000"), "{result:?}");

    // A direct call of a board tool still works.
    let direct = call(
        "units-convert",
        json!({"value": 1.0, "from": "kg", "to": "g"}),
    );
    assert!(text(&client.call_tool(direct).await.unwrap()).contains("1000"));
}

#[tokio::test]
async fn pinned_tools_are_listed_and_auto_switches_on_the_threshold() {
    let board = demo_board().await;
    let count = board.tool_count();
    let pinned = SearchSettings {
        pinned: vec!["units-convert".into()],
        ..on()
    };
    let client = gateway(board.clone(), pinned).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["search_tools", "call_tool", "units-convert"]);

    let below = SearchSettings {
        threshold: count,
        ..on()
    }
    .with_mode(ToolSearch::Auto);
    let client = gateway(board.clone(), below).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), count);
    let above = SearchSettings {
        threshold: count - 1,
        ..on()
    }
    .with_mode(ToolSearch::Auto);
    let client = gateway(board, above).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
}

#[tokio::test]
async fn names_that_clash_with_board_tools_get_a_prefix() {
    let board = PegBoard::new();
    let clash = FixedTools::named(&["search_tools", "call_tool"]);
    board
        .add_service(None, common::connect(clash).await)
        .await
        .unwrap();
    let client = gateway(board, on()).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["pegboard_search_tools", "pegboard_call_tool"]);
    // The board's own `search_tools` is still called directly.
    let own = client
        .call_tool(call("search_tools", json!({"q": 1})))
        .await
        .unwrap();
    assert!(text(&own).starts_with("search_tools: "), "{own:?}");
    let found = client
        .call_tool(call("pegboard_search_tools", json!({"query": "call_tool"})))
        .await
        .unwrap();
    assert_eq!(
        found.structured_content.unwrap()["tools"][0]["name"],
        "call_tool"
    );
}

#[tokio::test]
async fn bad_input_is_a_clear_error_or_a_clamp() {
    let client = gateway(demo_board().await, on()).await;
    let expect_error = async |name: &str, args: Value, says: &str| {
        let err = client
            .call_tool(call(name, args.clone()))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{name} {args}: {err}");
    };
    expect_error("search_tools", json!({"query": "  "}), "`query` is empty").await;
    expect_error("search_tools", json!({}), "`query` is missing").await;
    expect_error("search_tools", json!({"query": 5}), "must be a string").await;
    expect_error(
        "search_tools",
        json!({"query": "x", "limit": "many"}),
        "`limit`",
    )
    .await;
    expect_error("call_tool", json!({}), "`name` is missing").await;
    expect_error(
        "call_tool",
        json!({"name": "units-convert", "arguments": [1]}),
        "must be an object",
    )
    .await;
    expect_error(
        "call_tool",
        json!({"name": "no-such-tool"}),
        "not on the board",
    )
    .await;

    let count = |result: rmcp::model::CallToolResult| {
        result.structured_content.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len()
    };
    let zero = client
        .call_tool(call("search_tools", json!({"query": "note", "limit": 0})))
        .await;
    assert_eq!(count(zero.unwrap()), 1);
    let huge_limit = json!({"query": "note convert", "limit": 10_000});
    assert!(
        count(
            client
                .call_tool(call("search_tools", huge_limit))
                .await
                .unwrap()
        ) <= 100
    );
    let huge_query = json!({"query": "convert ".repeat(1 << 17)});
    assert!(
        count(
            client
                .call_tool(call("search_tools", huge_query))
                .await
                .unwrap()
        ) >= 1
    );
}

/// The bytes of `tools/list` as a client receives it.
async fn listed_bytes(board: &PegBoard, settings: SearchSettings) -> usize {
    let client = gateway(board.clone(), settings).await;
    let tools = client.list_all_tools().await.unwrap();
    serde_json::to_string(&tools).unwrap().len()
}

/// 1,000 real tool definitions (BFCL's, see crates/pegboard/benches/data/bfcl) in 10 services.
async fn thousand_tool_board() -> PegBoard {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../pegboard/benches/data/bfcl/tools.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let all: Vec<rmcp::model::Tool> = text
        .lines()
        .take(1000)
        .map(|line| {
            let t: Value = serde_json::from_str(line).unwrap();
            let schema = t["inputSchema"].as_object().cloned().unwrap_or_default();
            rmcp::model::Tool::new(
                t["name"].as_str().unwrap().to_string(),
                t["description"].as_str().unwrap_or_default().to_string(),
                std::sync::Arc::new(schema),
            )
        })
        .collect();
    assert_eq!(all.len(), 1000);
    let board = PegBoard::new();
    for (i, chunk) in all.chunks(100).enumerate() {
        let server = FixedTools {
            tools: std::sync::Arc::new(chunk.to_vec()),
        };
        common::add(&board, &format!("svc{i}"), server).await;
    }
    board
}

#[tokio::test]
async fn tools_list_shrinks_in_search_mode() {
    for (label, board) in [
        ("demo", demo_board().await),
        ("1000 tools", thousand_tool_board().await),
    ] {
        let full = listed_bytes(&board, SearchSettings::default()).await;
        let search = listed_bytes(&board, on()).await;
        eprintln!("tools/list {label}: full {full} bytes, search mode {search} bytes");
        if label != "demo" {
            assert!(search * 20 < full, "{label}: {search} vs {full}");
        }
    }
}

async fn search_names(client: &pegboard::BoxedService, query: &str, limit: usize) -> Vec<String> {
    let found = client
        .call_tool(call(
            "search_tools",
            json!({"query": query, "limit": limit}),
        ))
        .await
        .unwrap();
    found.structured_content.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

const QUERIES: [&str; 6] = [
    "convert kilograms to grams",
    "add a note",
    "units-convert",
    "list everything I wrote down",
    "temperature",
    "delete",
];

#[tokio::test]
async fn lexical_ranking_is_the_boards_own_search() {
    // With `ranking: lexical` (and always without the `embed` feature) `search_tools` answers
    // exactly what the library's BM25F search answers: today's ranking, unchanged.
    let board = demo_board().await;
    let settings = SearchSettings {
        ranking: Ranking::Lexical,
        ..on()
    };
    let client = gateway(board.clone(), settings).await;
    for query in QUERIES {
        let expected: Vec<String> = board
            .search_tools(query, 5)
            .iter()
            .map(|m| m.tool.name().to_string())
            .collect();
        assert_eq!(search_names(&client, query, 5).await, expected, "{query}");
    }
}

#[cfg(feature = "embed")]
#[tokio::test]
async fn hybrid_ranking_keeps_names_first_and_finds_by_meaning() {
    let board = demo_board().await;
    let settings = SearchSettings {
        ranking: Ranking::Hybrid,
        ..on()
    };
    let client = gateway(board.clone(), settings).await;
    for name in board.list_all_tools() {
        assert_eq!(
            search_names(&client, &name, 3).await[0],
            name,
            "exact {name}"
        );
        let spaced = name.replace(['-', '_'], " ").to_uppercase();
        assert_eq!(
            search_names(&client, &spaced, 3).await[0],
            name,
            "near-exact {spaced}"
        );
    }
    let found = search_names(&client, "convert kilograms to grams", 3).await;
    assert_eq!(found[0], "units-convert");
    // Every result is a board tool, at most `limit`, no repeats.
    for query in QUERIES {
        let found = search_names(&client, query, 4).await;
        assert!(found.len() <= 4);
        let mut unique = found.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), found.len(), "{query}: {found:?}");
        assert!(found.iter().all(|n| board.get_tool(n).is_some()));
    }
}
