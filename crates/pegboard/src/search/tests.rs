//! Behaviour of the index as a whole: exact names first, bad input, incremental updates.

use std::sync::Arc;

use serde_json::json;

use super::*;

fn tool(name: &str, description: &str, schema: serde_json::Value) -> Tool {
    let schema = schema.as_object().cloned().unwrap_or_default();
    Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
}

fn doc(namespace: &str, original: &str, description: &str) -> ToolDoc {
    let board_name = format!("{namespace}-{original}");
    ToolDoc::new(
        tool(&board_name, description, json!({})),
        original,
        Some(namespace.into()),
    )
}

/// Three services with overlapping vocabularies.
fn services() -> Vec<(usize, Vec<ToolDoc>)> {
    vec![
        (
            0,
            vec![
                doc(
                    "weather",
                    "get_forecast",
                    "Daily weather forecast for a city",
                ),
                doc("weather", "get_alerts", "Storm and heat alerts for a state"),
            ],
        ),
        (
            1,
            vec![
                doc("fs", "read_file", "Read a text file"),
                doc("fs", "write_file", "Write a text file"),
                doc("fs", "search", "Search files by name"),
            ],
        ),
        (
            2,
            vec![
                doc("web", "search", "Search the web for pages"),
                doc("web", "fetch", "Fetch a web page and return its text"),
                // A tool whose original name collides with another's board name.
                doc("web", "fs-read_file", "Read a remote file over HTTP"),
            ],
        ),
    ]
}

fn index_of(services: &[(usize, Vec<ToolDoc>)]) -> SearchIndex {
    services
        .iter()
        .fold(SearchIndex::new(), |index, (key, docs)| {
            index.with_service(*key, docs.clone())
        })
}

fn names(matches: &[ToolMatch]) -> Vec<&str> {
    matches.iter().map(|m| m.tool.name()).collect()
}

#[test]
fn every_board_and_original_name_is_found_first() {
    let services = services();
    let index = index_of(&services);
    for (_, docs) in &services {
        for d in docs {
            let by_board_name = index.search(d.tool.name(), 5);
            assert_eq!(by_board_name[0].tool.name(), d.tool.name());
            assert!(by_board_name[0].exact);
            let by_original = index.search(&d.original, 5);
            assert!(
                by_original
                    .iter()
                    .take_while(|m| m.exact)
                    .any(|m| m.tool.name() == d.tool.name()),
                "{} not among the exact matches for {}",
                d.tool.name(),
                d.original
            );
        }
    }
}

#[test]
fn exact_board_name_beats_an_equal_original_name() {
    let index = index_of(&services());
    let found = index.search("fs-read_file", 5);
    assert_eq!(names(&found)[..2], ["fs-read_file", "web-fs-read_file"]);
    assert!(found[0].exact && found[1].exact);
}

#[test]
fn exact_name_is_first_even_when_other_tools_score_higher() {
    // `search` is the original name of two tools; a third says "search" three times.
    let mut services = services();
    services[0]
        .1
        .push(doc("weather", "lookup", "search search search by search"));
    let index = index_of(&services);
    let found = index.search("search", 5);
    assert_eq!(names(&found)[..2], ["fs-search", "web-search"]);
    assert!(found[0].exact && found[1].exact && !found[2].exact);
}

#[test]
fn exact_name_matches_ignore_case_and_quotes() {
    let index = index_of(&services());
    assert_eq!(index.search("`WEB-FETCH`", 1)[0].tool.name(), "web-fetch");
    assert!(index.search(" 'web-fetch' ", 1)[0].exact);
}

#[test]
fn ranks_by_words_of_names_descriptions_and_parameters() {
    let index = index_of(&services());
    assert_eq!(
        index.search("weather forecast", 3)[0].tool.name(),
        "weather-get_forecast"
    );
    assert_eq!(
        index.search("write a file", 3)[0].tool.name(),
        "fs-write_file"
    );
    let with_params = SearchIndex::new().with_service(
        0,
        [
            ToolDoc::new(
                tool(
                    "pay",
                    "Send money",
                    json!({"properties": {"iban": {"type": "string", "description": "Recipient bank account"}}}),
                ),
                "pay",
                None,
            ),
            ToolDoc::new(tool("ask", "Ask a question", json!({})), "ask", None),
        ],
    );
    assert_eq!(with_params.search("bank account", 2)[0].tool.name(), "pay");
    assert_eq!(with_params.search("IBAN", 2)[0].tool.name(), "pay");
}

#[test]
fn stemming_and_word_forms_bridge_word_variants() {
    let index = SearchIndex::new().with_service(
        0,
        [
            ToolDoc::new(
                tool(
                    "find_therapists",
                    "Find licensed therapists nearby",
                    json!({}),
                ),
                "find_therapists",
                None,
            ),
            ToolDoc::new(
                tool("find_restaurants", "Find restaurants nearby", json!({})),
                "find_restaurants",
                None,
            ),
        ],
    );
    assert_eq!(
        index.search("therapist", 2)[0].tool.name(),
        "find_therapists"
    );
    assert_eq!(
        index.search("I need therapy", 2)[0].tool.name(),
        "find_therapists"
    );
}

#[test]
fn blank_queries_and_zero_limits_find_nothing() {
    let index = index_of(&services());
    assert!(index.search("", 5).is_empty());
    assert!(index.search(" \t\n ", 5).is_empty());
    assert!(index.search("the of and", 5).is_empty());
    assert!(index.search("web-search", 0).is_empty());
    assert!(SearchIndex::new().search("anything", 5).is_empty());
}

#[test]
fn large_limits_are_clamped() {
    let docs: Vec<ToolDoc> = (0..150)
        .map(|i| doc("many", &format!("file_tool_{i}"), "file tool"))
        .collect();
    let index = SearchIndex::new().with_service(0, docs);
    assert_eq!(index.search("file", 10_000).len(), MAX_LIMIT);
    assert_eq!(index.search("file", usize::MAX).len(), MAX_LIMIT);
}

#[test]
fn huge_and_hostile_queries_are_bounded() {
    let index = index_of(&services());
    let huge = "weather ".repeat(1 << 17); // 1 MiB
    assert_eq!(
        index.search(&huge, 5)[0].tool.name(),
        "weather-get_forecast"
    );
    let distinct: String = (0..100_000).map(|i| format!("w{i} ")).collect();
    assert!(index.search(&distinct, 5).len() <= 5);
    // A multi-byte character straddling the cut.
    let cut_here = format!("{}é weather", "a".repeat(MAX_QUERY_BYTES - 1));
    let _ = index.search(&cut_here, 5);
    assert!(index.search("\u{0}\u{FFFF}🦀", 5).is_empty());
}

#[test]
fn incremental_updates_rank_like_a_fresh_build() {
    let services = services();
    // Built in another order, with a service replaced and one removed on the way.
    let mut incremental = SearchIndex::new()
        .with_service(2, services[2].1.clone())
        .with_service(7, vec![doc("tmp", "temporary", "Weather file web")])
        .with_service(0, vec![doc("weather", "old", "Old forecast tool")]);
    incremental = incremental
        .with_service(1, services[1].1.clone())
        .with_service(0, services[0].1.clone())
        .without_service(7);
    let fresh = index_of(&services);
    assert_eq!(incremental.len(), fresh.len());
    for query in [
        "weather",
        "read a file",
        "search the web",
        "fs-read_file",
        "forecast storm",
        "page text",
    ] {
        let a = incremental.search(query, 10);
        let b = fresh.search(query, 10);
        assert_eq!(a, b, "query {query:?}");
        assert!(!a.is_empty(), "query {query:?}");
    }
}

#[test]
fn an_update_shares_the_other_services_segments() {
    let services = services();
    let before = index_of(&services);
    let after = before.with_service(3, vec![doc("new", "thing", "A new thing")]);
    for (a, b) in before.inner.segments.iter().zip(&after.inner.segments) {
        assert!(Arc::ptr_eq(a, b));
    }
    assert_eq!(before.len() + 1, after.len());
    assert_eq!(after.with_service(3, Vec::new()).len(), before.len());
}

#[test]
fn hostile_schemas_are_read_within_bounds() {
    let mut deep = json!({"type": "string", "description": "leaf"});
    for i in 0..200 {
        deep = json!({"type": "object", "properties": {format!("level{i}"): deep}});
    }
    let wide: serde_json::Map<String, serde_json::Value> = (0..10_000)
        .map(|i| (format!("p{i}"), json!({"description": "wide"})))
        .collect();
    let index = SearchIndex::new().with_service(
        0,
        [
            ToolDoc::new(tool("deep", "deep", deep), "deep", None),
            ToolDoc::new(
                tool("wide", "wide", json!({"properties": wide})),
                "wide",
                None,
            ),
            ToolDoc::new(
                tool("odd", "odd", json!({"properties": [1, 2], "items": "x"})),
                "odd",
                None,
            ),
        ],
    );
    assert_eq!(index.search("level199", 1)[0].tool.name(), "deep");
    assert!(index.search("leaf", 1).is_empty());
    assert_eq!(index.search("wide", 1)[0].tool.name(), "wide");
}
