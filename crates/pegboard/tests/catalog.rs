//! Prompts, resources and completions on the board (issue 9 item 11), against real rmcp
//! servers in process: names and URIs as the board shows them, requests routed back to the
//! right server under the server's own names, and clear errors for what is not on the board.

mod common;

use common::{FixedTools, catalog::Catalog, connect, connect_killable};
use pegboard::{PegBoard, PegBoardError};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ContentBlock, GetPromptResult, Reference, ResourceContents,
};
use serde_json::json;

/// `docs` and `my_repo` offer prompts, resources, templates and completions; `tools` offers
/// tools only.
struct Board {
    board: PegBoard,
    docs: Catalog,
    repo: Catalog,
}

fn docs() -> Catalog {
    Catalog {
        prompts: vec!["greet", "outline"],
        resources: vec!["file:///a", "ui://widget/a.html"],
        templates: vec!["file:///{path}"],
        ..Catalog::new("docs")
    }
}

fn repo() -> Catalog {
    Catalog {
        resources: vec!["git+https://h/r.git"],
        templates: vec!["git+https://h/{repo}.git"],
        ..Catalog::new("my_repo")
    }
}

async fn board_of(docs: Catalog, repo: Catalog) -> Board {
    let board = PegBoard::new();
    common::add(&board, "docs", docs.clone()).await;
    common::add(&board, "tools", FixedTools::named(&["echo"])).await;
    common::add(&board, "my_repo", repo.clone()).await;
    Board { board, docs, repo }
}

async fn board() -> Board {
    board_of(docs(), repo()).await
}

fn names(board_prompts: Vec<rmcp::model::Prompt>) -> Vec<String> {
    board_prompts.into_iter().map(|p| p.name).collect()
}

fn uri(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::TextResourceContents { uri, .. }
        | ResourceContents::BlobResourceContents { uri, .. } => uri,
        _ => "",
    }
}

fn text(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text,
        _ => "",
    }
}

/// The text of a prompt's messages and the URIs they carry, in order.
fn read_messages(result: &GetPromptResult) -> (Vec<String>, Vec<String>) {
    let mut texts = Vec::new();
    let mut uris = Vec::new();
    for message in &result.messages {
        match &message.content {
            ContentBlock::Text(t) => texts.push(t.text.clone()),
            ContentBlock::Resource(embedded) => {
                uris.push(uri(&embedded.resource).to_string());
                texts.push(text(&embedded.resource).to_string());
            }
            ContentBlock::ResourceLink(link) => uris.push(link.uri.clone()),
            _ => {}
        }
    }
    (texts, uris)
}

fn args(value: serde_json::Value) -> Option<rmcp::model::JsonObject> {
    value.as_object().cloned()
}

fn completion(reference: Reference, name: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams::new(reference, ArgumentInfo::new(name, value))
}

#[tokio::test]
async fn prompts_are_listed_under_board_names_and_routed_with_their_arguments() {
    let b = board().await;
    assert_eq!(
        names(b.board.list_prompts().await),
        ["docs-greet", "docs-outline", "my_repo-greet"]
    );

    let docs = b
        .board
        .get_prompt("docs-greet", args(json!({"name": "Ada"})))
        .await
        .unwrap();
    let (texts, uris) = read_messages(&docs);
    assert_eq!(texts, ["docs greets Ada", "docs:file:///a"]);
    // The embedded resource and the link read as the board's URIs.
    assert_eq!(uris, ["docs+file:///a", "ui://docs+widget/a.html"]);
    assert_eq!(b.docs.seen(), [r#"get_prompt greet {"name":"Ada"}"#]);

    // The same original name on the other server is its own prompt.
    let repo = b
        .board
        .get_prompt("my_repo-greet", args(json!({"name": "Bob"})))
        .await
        .unwrap();
    let (texts, uris) = read_messages(&repo);
    assert_eq!(texts, ["my_repo greets Bob", "my_repo:git+https://h/r.git"]);
    assert_eq!(
        uris,
        ["my-repo+git+https://h/r.git", "ui://my-repo+widget/a.html"]
    );
    assert_eq!(b.repo.seen(), [r#"get_prompt greet {"name":"Bob"}"#]);
    assert_eq!(b.docs.seen().len(), 1, "docs was not asked again");
}

#[tokio::test]
async fn resources_and_templates_are_listed_with_the_uris_of_the_board() {
    let b = board().await;
    let uris: Vec<String> = b
        .board
        .list_resources()
        .await
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(
        uris,
        [
            "docs+file:///a",
            "ui://docs+widget/a.html",
            "my-repo+git+https://h/r.git"
        ]
    );
    let templates: Vec<String> = b
        .board
        .list_resource_templates()
        .await
        .into_iter()
        .map(|t| t.uri_template.clone())
        .collect();
    assert_eq!(
        templates,
        ["docs+file:///{path}", "my-repo+git+https://h/{repo}.git"]
    );
}

#[tokio::test]
async fn a_resource_read_reaches_its_server_by_the_original_uri_and_comes_back_encoded() {
    let b = board().await;
    for (shown, original, label) in [
        ("docs+file:///a", "file:///a", "docs"),
        ("ui://docs+widget/a.html", "ui://widget/a.html", "docs"),
        ("docs+file:///notes/x.md", "file:///notes/x.md", "docs"),
        (
            "my-repo+git+https://h/r.git",
            "git+https://h/r.git",
            "my_repo",
        ),
    ] {
        let read = b.board.read_resource(shown).await.unwrap();
        assert_eq!(read.contents.len(), 1);
        assert_eq!(uri(&read.contents[0]), shown);
        assert_eq!(text(&read.contents[0]), format!("{label}:{original}"));
    }
    assert_eq!(
        b.docs.seen(),
        [
            "read file:///a",
            "read ui://widget/a.html",
            "read file:///notes/x.md"
        ]
    );
    assert_eq!(b.repo.seen(), ["read git+https://h/r.git"]);

    let target = b
        .board
        .resource_target("my-repo+git+https://h/r.git")
        .unwrap();
    assert_eq!(target.original, "git+https://h/r.git");
    assert_eq!(target.namespace.as_deref(), Some("my_repo"));
    assert_eq!(target.alias.as_deref(), Some("my-repo"));
}

#[tokio::test]
async fn completions_reach_the_server_under_the_original_prompt_name_and_template() {
    let b = board().await;
    let prompt = b
        .board
        .complete(completion(
            Reference::for_prompt("my_repo-greet"),
            "name",
            "Bo",
        ))
        .await
        .unwrap();
    assert_eq!(prompt.completion.values, ["my_repo-Bo"]);
    assert_eq!(b.repo.seen(), ["complete prompt greet name=Bo"]);

    let template = b
        .board
        .complete(completion(
            Reference::for_resource("docs+file:///{path}"),
            "path",
            "no",
        ))
        .await
        .unwrap();
    assert_eq!(template.completion.values, ["docs-no"]);
    assert_eq!(b.docs.seen(), ["complete resource file:///{path} path=no"]);
    assert_eq!(b.repo.seen().len(), 1, "my_repo was not asked again");
}

#[tokio::test]
async fn a_prompt_or_uri_that_names_nothing_on_the_board_is_a_clear_error_with_the_way_out() {
    let b = board().await;
    let err = b.board.get_prompt("docs-gret", None).await.unwrap_err();
    match &err {
        PegBoardError::PromptNotFound { suggestions, .. } => {
            assert_eq!(suggestions.first().map(String::as_str), Some("docs-greet"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("did you mean `docs-greet`"),
        "{err}"
    );
    let err = b
        .board
        .complete(completion(Reference::for_prompt("docs-gret"), "name", "x"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::PromptNotFound { .. }),
        "{err:?}"
    );

    // An unknown alias, or none: the message says which aliases there are.
    for wrong in [
        "nope+file:///x",
        "file:///a",
        "ui://widget/a.html",
        "ui://nope+widget/a.html",
    ] {
        let err = b.board.read_resource(wrong).await.unwrap_err();
        assert!(
            matches!(err, PegBoardError::ResourceNotFound { .. }),
            "{wrong}: {err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains("`docs+`") && message.contains("`my-repo+`"),
            "{message}"
        );
        assert!(b.board.resource_target(wrong).is_err());
    }
    let err = b
        .board
        .complete(completion(
            Reference::for_resource("nope+file:///{path}"),
            "path",
            "x",
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(err, PegBoardError::ResourceNotFound { .. }),
        "{err:?}"
    );
    // Nothing reached a server.
    assert!(b.docs.seen().is_empty() && b.repo.seen().is_empty());

    // A URI of a known server that the server does not have: the server's own error.
    let err = b.board.read_resource("docs+http://x").await.unwrap_err();
    match &err {
        PegBoardError::Upstream { namespace, .. } => {
            assert_eq!(namespace.as_deref(), Some("docs"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("no such resource"), "{err}");
}

#[tokio::test]
async fn a_board_whose_servers_offer_no_prompts_or_resources_lists_none_and_says_so() {
    let board = PegBoard::new();
    common::add(&board, "tools", FixedTools::named(&["echo"])).await;
    assert!(board.list_prompts().await.is_empty());
    assert!(board.list_resources().await.is_empty());
    assert!(board.list_resource_templates().await.is_empty());
    let err = board.read_resource("tools+file:///x").await.unwrap_err();
    assert!(
        err.to_string()
            .contains("no server on the board offers resources"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_fails_to_list_its_prompts_is_left_out_and_the_others_are_listed() {
    let broken = Catalog {
        broken_prompts: true,
        ..docs()
    };
    let b = board_of(broken, repo()).await;
    assert_eq!(names(b.board.list_prompts().await), ["my_repo-greet"]);
    let got = b
        .board
        .get_prompt("my_repo-greet", args(json!({"name": "Cy"})))
        .await
        .unwrap();
    assert_eq!(read_messages(&got).0[0], "my_repo greets Cy");
    // Its resources are unaffected.
    assert_eq!(b.board.list_resources().await.len(), 3);
    let err = b.board.get_prompt("docs-greet", None).await.unwrap_err();
    assert!(
        matches!(err, PegBoardError::PromptNotFound { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_closed_server_s_prompts_and_resources_leave_the_lists() {
    let board = PegBoard::new();
    let docs_server = connect_killable(docs()).await;
    let added = board
        .add_service_with(Some("docs".into()), docs_server.service, Default::default())
        .await
        .unwrap();
    common::add(&board, "my_repo", repo()).await;
    assert_eq!(board.list_prompts().await.len(), 3);

    docs_server.kill.cancel();
    board.wait_closed(added.index).await.unwrap();
    assert_eq!(names(board.list_prompts().await), ["my_repo-greet"]);
    let uris: Vec<String> = board
        .list_resources()
        .await
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris, ["my-repo+git+https://h/r.git"]);
    assert_eq!(board.list_resource_templates().await.len(), 1);
    assert!(board.read_resource("docs+file:///a").await.is_err());
    assert!(board.get_prompt("docs-greet", None).await.is_err());
}

#[tokio::test]
async fn a_server_with_prompts_and_resources_but_no_tools_is_on_the_board() {
    let board = PegBoard::new();
    let docs = Catalog {
        tools: false,
        ..docs()
    };
    let tools = board
        .add_service(Some("docs".into()), connect(docs).await)
        .await
        .unwrap();
    assert_eq!(tools, 0);
    assert_eq!(
        names(board.list_prompts().await),
        ["docs-greet", "docs-outline"]
    );
    let read = board.read_resource("docs+file:///a").await.unwrap();
    assert_eq!(text(&read.contents[0]), "docs:file:///a");
}

#[tokio::test]
async fn a_megabyte_prompt_name_or_uri_gets_a_short_error() {
    let b = board().await;
    let huge = "g".repeat(1 << 20);
    let short = |err: PegBoardError| {
        let message = err.to_string();
        assert!(message.len() < 2_000, "{} bytes", message.len());
        message
    };
    let message = short(
        b.board
            .get_prompt(&format!("docs-{huge}"), None)
            .await
            .unwrap_err(),
    );
    assert!(message.contains("not on the board"), "{message}");
    short(
        b.board
            .complete(completion(Reference::for_prompt(&huge), "name", "x"))
            .await
            .unwrap_err(),
    );
    // No alias: the board refuses it.
    short(b.board.read_resource(&huge).await.unwrap_err());
    // A known alias: the server is asked, and refuses it.
    let message = short(
        b.board
            .read_resource(&format!("docs+http://{huge}"))
            .await
            .unwrap_err(),
    );
    assert!(message.contains("no such resource"), "{message}");
    assert_eq!(b.docs.seen(), [format!("read <{} bytes>", huge.len() + 7)]);
}

#[tokio::test]
async fn a_namespace_whose_uris_would_look_like_another_s_is_refused_not_misrouted() {
    let b = board().await;
    // `my-repo` and `Docs` would carry the aliases `my-repo` and `Docs`: URIs of `my_repo`
    // and `docs` (schemes are case-insensitive), so reads would reach the wrong server.
    for namespace in ["my-repo", "Docs"] {
        let err = b
            .board
            .add_service(Some(namespace.into()), connect(repo()).await)
            .await
            .unwrap_err();
        assert!(
            matches!(err, PegBoardError::InvalidNamespace { .. }),
            "{namespace}: {err:?}"
        );
        assert!(err.to_string().contains("another namespace"), "{err}");
    }
    // A server with no resources has no URIs to mix up.
    b.board
        .add_service(
            Some("my-repo".into()),
            connect(FixedTools::named(&["x"])).await,
        )
        .await
        .unwrap();
    assert_eq!(b.board.list_resources().await.len(), 3);
}

#[tokio::test]
async fn an_alias_is_matched_whatever_the_case_a_client_gives_the_scheme() {
    let board = PegBoard::new();
    common::add(&board, "GitHub", repo()).await;
    let uris: Vec<String> = board
        .list_resources()
        .await
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris, ["GitHub+git+https://h/r.git"]);
    // URL libraries lower-case schemes (RFC 3986 §3.1): the read must still route.
    let read = board
        .read_resource("github+git+https://h/r.git")
        .await
        .unwrap();
    assert_eq!(text(&read.contents[0]), "my_repo:git+https://h/r.git");
}

#[tokio::test]
async fn a_server_that_never_answers_is_left_out_of_lists_and_its_reads_time_out() {
    let board = PegBoard::builder()
        .discovery_timeout(std::time::Duration::from_millis(300))
        .call_timeout(std::time::Duration::from_millis(300))
        .build();
    let stuck = Catalog {
        hangs: true,
        ..docs()
    };
    common::add(&board, "docs", stuck.clone()).await;
    common::add(&board, "my_repo", repo()).await;

    assert_eq!(names(board.list_prompts().await), ["my_repo-greet"]);
    // The live server's prompt is still got.
    let got = board
        .get_prompt("my_repo-greet", args(json!({"name": "Di"})))
        .await
        .unwrap();
    assert_eq!(read_messages(&got).0[0], "my_repo greets Di");

    let err = board.read_resource("docs+file:///a").await.unwrap_err();
    match &err {
        PegBoardError::Timeout { namespace, .. } => assert_eq!(namespace.as_deref(), Some("docs")),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("docs+file:///a"), "{err}");
    assert_eq!(stuck.seen(), ["read file:///a"]);
}

#[tokio::test]
async fn every_page_of_a_server_s_resources_is_listed() {
    let uris: Vec<&'static str> = (0..250)
        .map(|i| &*Box::leak(format!("file:///r{i}").into_boxed_str()))
        .collect();
    let paged = Catalog {
        resources: uris.clone(),
        page: Some(100),
        ..docs()
    };
    let board = PegBoard::new();
    common::add(&board, "docs", paged).await;
    let listed: Vec<String> = board
        .list_resources()
        .await
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    let want: Vec<String> = uris.iter().map(|u| format!("docs+{u}")).collect();
    assert_eq!(listed, want);
}

#[tokio::test]
async fn a_prompt_name_two_servers_make_is_listed_and_got_from_the_same_one() {
    // `plain` (added without a namespace) offers `docs-greet`; `docs` offers `greet`, which the
    // board also names `docs-greet`. The first one added keeps the name, in the list and in a
    // get alike (the get used to try the server whose namespace starts the name first).
    let board = PegBoard::new();
    let plain = Catalog {
        prompts: vec!["docs-greet"],
        ..Catalog::new("plain")
    };
    board
        .add_service(None, common::connect(plain.clone()).await)
        .await
        .unwrap();
    common::add(&board, "docs", docs()).await;
    let listed = names(board.list_prompts().await);
    assert_eq!(
        listed.iter().filter(|n| *n == "docs-greet").count(),
        1,
        "{listed:?}"
    );
    let got = board
        .get_prompt("docs-greet", args(json!({"name": "Ada"})))
        .await
        .unwrap();
    let (texts, _) = read_messages(&got);
    assert_eq!(texts[0], "plain greets Ada");
    assert_eq!(plain.seen(), [r#"get_prompt docs-greet {"name":"Ada"}"#]);
}
