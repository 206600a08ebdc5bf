//! Provider JSON: each format checked against the shape the provider documents.

use std::sync::Arc;

use pegboard::{
    NamingPolicy, PegBoardError, Tool,
    export::{Provider, tools_json},
};
use serde_json::json;

fn tools() -> Vec<Tool> {
    let schema = json!({"type": "object", "properties": {"query": {"type": "string", "description": "what to find"}}, "required": ["query"]});
    vec![
        Tool::new(
            "web-search",
            "Search the web",
            Arc::new(schema.as_object().unwrap().clone()),
        ),
        Tool::from(rmcp::model::Tool::new_with_raw(
            "notes-list",
            None,
            Arc::new(Default::default()),
        )),
    ]
}

#[test]
fn openai_chat_completions_tools() {
    let json = tools_json(Provider::OpenAi, &tools()).unwrap();
    assert_eq!(
        json[0],
        json!({"type": "function", "function": {"name": "web-search", "description": "Search the web",
            "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "what to find"}}, "required": ["query"]}}})
    );
    // No description: the key is left out; an empty schema becomes an object schema.
    assert_eq!(
        json[1],
        json!({"type": "function", "function": {"name": "notes-list", "parameters": {"type": "object", "properties": {}}}})
    );
}

#[test]
fn anthropic_messages_tools() {
    let json = tools_json(Provider::Anthropic, &tools()).unwrap();
    assert_eq!(json[0]["name"], "web-search");
    assert_eq!(json[0]["description"], "Search the web");
    assert_eq!(json[0]["input_schema"]["required"], json!(["query"]));
    assert_eq!(
        json[1],
        json!({"name": "notes-list", "input_schema": {"type": "object", "properties": {}}})
    );
}

#[test]
fn gemini_function_declarations() {
    let json = tools_json(Provider::Gemini, &tools()).unwrap();
    let declarations = json[0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(declarations.len(), 2);
    assert_eq!(declarations[0]["name"], "web-search");
    assert_eq!(
        declarations[0]["parametersJsonSchema"]["properties"]["query"]["type"],
        "string"
    );
    assert_eq!(
        declarations[1]["description"], "",
        "Gemini requires a description"
    );
}

#[test]
fn members_of_a_definition_reach_the_providers_that_have_room_for_them() {
    let output = json!({"type": "object", "properties": {"hits": {"type": "integer"}}});
    let extra = json!({"execution": {"taskSupport": "forbidden"}, "x-vendor": {"tier": 2}});
    let tool = Tool::new("web-search", "Search", Arc::new(Default::default()))
        .with_output_schema(Arc::new(output.as_object().unwrap().clone()))
        .with_extra(extra.as_object().unwrap().clone());
    let gemini = tools_json(Provider::Gemini, std::slice::from_ref(&tool)).unwrap();
    // Gemini's declaration says what the function answers; the MCP members it has no room for
    // are not sent (a provider refuses members it does not know).
    assert_eq!(
        gemini[0]["functionDeclarations"][0]["responseJsonSchema"],
        output
    );
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        let text = tools_json(provider, std::slice::from_ref(&tool))
            .unwrap()
            .to_string();
        for member in ["execution", "x-vendor", "outputSchema", "output_schema"] {
            assert!(!text.contains(member), "{provider:?}: {member} in {text}");
        }
    }
    let openai = tools_json(Provider::OpenAi, std::slice::from_ref(&tool)).unwrap();
    assert_eq!(openai[0]["function"].as_object().unwrap().len(), 3);
}

#[test]
fn names_a_provider_refuses_are_an_error_at_export() {
    let verbatim = NamingPolicy::verbatim()
        .full_name(Some("gh"), "repo.list")
        .unwrap();
    let tool = Tool::new(verbatim, "d", Arc::new(Default::default()));
    let err = tools_json(Provider::OpenAi, std::slice::from_ref(&tool)).unwrap_err();
    assert!(matches!(err, PegBoardError::InvalidName { ref name, .. } if name == "gh-repo.list"));
    // Gemini allows dots.
    assert!(tools_json(Provider::Gemini, &[tool]).is_ok());
    assert!(!Provider::Gemini.accepts_name("1tool"));
    assert!(Provider::Anthropic.accepts_name(&"a".repeat(128)));
    assert!(!Provider::OpenAi.accepts_name(&"a".repeat(65)));
}
