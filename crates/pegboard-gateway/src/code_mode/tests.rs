use super::*;
use serde_json::json;

fn mode(keep_tools: bool) -> CodeMode {
    let board = PegBoard::new();
    CodeMode::new(
        board.clone(),
        CodeModeSettings {
            keep_tools,
            ..CodeModeSettings::default()
        },
        crate::search_mode::SearchMode::new(board, crate::search_mode::SearchSettings::default()),
    )
}

fn request(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut request = CallToolRequestParams::new(name.to_string());
    request.arguments = arguments.as_object().cloned();
    request
}

#[test]
fn lists_the_three_tools() {
    let client = Client::unrestricted("default", usize::MAX);
    let names: Vec<String> = mode(false)
        .list(&client)
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["search_tools", "describe_tools", "run_code"]);
    assert!(mode(false).get_tool("run_code").is_some());
    assert!(mode(false).instructions().contains("run_code"));
}

#[test]
fn run_code_takes_a_string_and_other_calls_go_on() {
    let client = Client::unrestricted("default", usize::MAX);
    let m = mode(false);
    assert!(matches!(
        m.intercept(request("run_code", json!({"code": "return 1"})), &client),
        Intercept::Run(code) if code == "return 1"
    ));
    for bad in [json!({}), json!({"code": 5})] {
        assert!(matches!(
            m.intercept(request("run_code", bad), &client),
            Intercept::Answer(Err(_))
        ));
    }
    let big = "x".repeat(meta::MAX_CODE + 1);
    assert!(matches!(
        m.intercept(request("run_code", json!({"code": big})), &client),
        Intercept::Answer(Err(_))
    ));
    assert!(matches!(
        m.intercept(request("units-convert", json!({})), &client),
        Intercept::Call(_)
    ));
}

#[test]
fn describe_refuses_bad_names_and_names_unknown_tools() {
    let client = Client::unrestricted("default", usize::MAX);
    let m = mode(false);
    for bad in [json!({}), json!({"names": []}), json!({"names": [1]})] {
        assert!(matches!(
            m.intercept(request("describe_tools", bad), &client),
            Intercept::Answer(Err(_))
        ));
    }
    let Intercept::Answer(Ok(result)) = m.intercept(
        request("describe_tools", json!({"names": ["nope-x"]})),
        &client,
    ) else {
        panic!("an answer");
    };
    let text = &result.content[0].as_text().unwrap().text;
    assert!(
        text.contains("`nope-x` is not a tool on this board"),
        "{text}"
    );
}
