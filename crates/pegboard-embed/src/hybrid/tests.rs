use super::*;

fn doc(name: &str, description: &str) -> (ToolDoc, Option<Arc<str>>) {
    let tool = pegboard::Tool::new(name, description, Arc::new(serde_json::Map::new()));
    (ToolDoc::new(tool, name, None), None)
}

#[test]
fn unchanged_tools_keep_their_vectors_and_only_changed_ones_are_embedded() {
    let model = StaticModel::builtin().expect("model");
    let e = Expansion::default();
    let first = ToolVectors::build(
        model,
        [doc("a", "read a file"), doc("b", "send an email")],
        None,
        &e,
    );
    assert_eq!(first.embedded(), 2);
    let second = ToolVectors::build(
        model,
        [
            doc("a", "read a file"),
            doc("b", "book a flight"),
            doc("c", "weather"),
        ],
        Some(&first),
        &e,
    );
    assert_eq!(second.embedded(), 2, "b changed, c is new, a is reused");
    assert_eq!(second.vector(0), first.vector(0));
    assert_ne!(second.vector(1), first.vector(1));
}

#[test]
fn bad_limits_and_blank_queries_find_nothing() {
    let model = StaticModel::builtin().expect("model");
    let v = ToolVectors::build(
        model,
        [doc("a", "read a file")],
        None,
        &Expansion::default(),
    );
    assert!(v.search(model, &[], "  ", 5, &Fusion::default()).is_empty());
    assert!(
        v.search(model, &[], "read", 0, &Fusion::default())
            .is_empty()
    );
    let nan = Fusion::Weighted { lexical: f32::NAN };
    assert_eq!(v.search(model, &[], "read a file", 500, &nan).len(), 1);
    assert_eq!(
        v.search(model, &[], &"read ".repeat(10_000), 5, &Fusion::default())
            .len(),
        1
    );
}

#[test]
fn names_become_words() {
    assert_eq!(
        name_words("getWeather_forecast.v2"),
        "get weather forecast v 2"
    );
    assert_eq!(
        name_words("github-create_pull_request"),
        "github create pull request"
    );
    assert_eq!(name_words("HTTPRequest"), "httprequest");
    assert_eq!(name_words(""), "");
}

#[test]
fn near_exact_keys_ignore_case_and_separators() {
    assert_eq!(name_key("Read File"), name_key("read_file"));
    assert_eq!(name_key("fs-read-file"), "fsreadfile");
}
