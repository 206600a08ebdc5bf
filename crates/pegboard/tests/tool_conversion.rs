//! `pegboard::Tool` <-> `rmcp::model::Tool`: nothing lost, clones cheap.

mod common;

use std::sync::Arc;

use pegboard::{PegBoard, Tool};
use rmcp::model::{Icon, JsonObject, MetaObject, ToolAnnotations};
use serde_json::json;

fn object(value: serde_json::Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().unwrap().clone())
}

fn rich_tool() -> rmcp::model::Tool {
    let mut annotations = ToolAnnotations::default();
    annotations.title = Some("Annotated".into());
    annotations.read_only_hint = Some(true);
    annotations.destructive_hint = Some(false);
    annotations.idempotent_hint = Some(true);
    annotations.open_world_hint = Some(false);
    let icon: Icon = serde_json::from_value(
        json!({"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}),
    )
    .unwrap();
    let mut meta = MetaObject::default();
    meta.0
        .insert("vendor/key".into(), json!({"nested": [1, 2, 3]}));
    rmcp::model::Tool::new(
        "search",
        "Search things",
        object(
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        ),
    )
    .with_title("Search")
    .with_annotations(annotations)
    .with_raw_output_schema(object(
        json!({"type": "object", "properties": {"hits": {"type": "array"}}}),
    ))
    .with_icons(vec![icon])
    .with_meta(meta)
}

#[test]
fn round_trip_keeps_every_field() {
    let original = rich_tool();
    let tool = Tool::from(original.clone());
    assert_eq!(tool.title(), Some("Search"));
    assert_eq!(tool.description(), Some("Search things"));
    assert_eq!(tool.annotations().unwrap().read_only_hint, Some(true));
    assert_eq!(tool.icons().unwrap().len(), 1);
    assert!(tool.meta().unwrap().0.contains_key("vendor/key"));
    let back: rmcp::model::Tool = tool.into();
    assert_eq!(back, original);
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&original).unwrap()
    );
}

#[test]
fn public_fields_carry_what_rmcp_fields_carry() {
    let original = rich_tool();
    let tool = Tool::from(original.clone());
    assert!(tool.name == "search");
    assert_eq!(tool.name, *original.name);
    assert_eq!(tool.title.as_deref(), original.title.as_deref());
    assert_eq!(tool.description.as_deref(), original.description.as_deref());
    assert_eq!(tool.input_schema, original.input_schema);
    assert_eq!(tool.output_schema, original.output_schema);
    assert_eq!(tool.annotations.as_deref(), original.annotations.as_ref());
    assert_eq!(tool.icons.as_deref(), original.icons.as_deref());
    assert_eq!(tool.meta.as_deref(), original.meta.as_ref());
    // The accessors agree with the fields.
    assert_eq!(tool.name(), &*tool.name);
    assert_eq!(tool.description(), tool.description.as_deref());
    assert!(Arc::ptr_eq(tool.input_schema(), &tool.input_schema));
}

#[test]
fn a_tool_built_by_hand_round_trips_too() {
    let tool = Tool::new("t", "d", object(json!({"type": "object"})))
        .with_title("T")
        .with_output_schema(object(json!({"type": "object"})))
        .with_annotations(ToolAnnotations::with_title("A"))
        .with_meta(MetaObject::default());
    let back = Tool::from(rmcp::model::Tool::from(&tool));
    assert_eq!(back, tool);
}

#[test]
fn clones_share_every_field() {
    let tool = Tool::from(rich_tool());
    let clone = tool.clone();
    assert!(pegboard::ArcStr::ptr_eq(&tool.name, &clone.name));
    assert!(pegboard::ArcStr::ptr_eq(
        tool.title.as_ref().unwrap(),
        clone.title.as_ref().unwrap()
    ));
    assert!(pegboard::ArcStr::ptr_eq(
        tool.description.as_ref().unwrap(),
        clone.description.as_ref().unwrap()
    ));
    assert!(Arc::ptr_eq(&tool.input_schema, &clone.input_schema));
    assert!(Arc::ptr_eq(
        tool.output_schema.as_ref().unwrap(),
        clone.output_schema.as_ref().unwrap()
    ));
    assert!(Arc::ptr_eq(
        tool.annotations.as_ref().unwrap(),
        clone.annotations.as_ref().unwrap()
    ));
    assert!(Arc::ptr_eq(
        tool.icons.as_ref().unwrap(),
        clone.icons.as_ref().unwrap()
    ));
    assert!(Arc::ptr_eq(
        tool.meta.as_ref().unwrap(),
        clone.meta.as_ref().unwrap()
    ));
}

#[test]
fn extra_members_are_part_of_the_tool_through_clones_and_renames() {
    let extra = object(serde_json::json!({"execution": {"taskSupport": "forbidden"}}));
    let tool = Tool::from(rich_tool()).with_extra((*extra).clone());
    assert_eq!(tool.extra(), Some(&*extra));

    let clone = tool.clone();
    assert!(Arc::ptr_eq(
        tool.extra.as_ref().unwrap(),
        clone.extra.as_ref().unwrap()
    ));
    let renamed = tool.renamed("web-search");
    assert!(Arc::ptr_eq(
        tool.extra.as_ref().unwrap(),
        renamed.extra.as_ref().unwrap()
    ));
    assert_eq!(renamed.to_json()["execution"], extra["execution"]);

    // A change of them is a change of the tool; none at all is not the same as some.
    let optional = object(serde_json::json!({"execution": {"taskSupport": "optional"}}));
    assert_ne!(
        tool,
        Tool::from(rich_tool()).with_extra((*optional).clone())
    );
    assert_ne!(tool, Tool::from(rich_tool()));
    assert_eq!(
        Tool::from(rich_tool())
            .with_extra(Default::default())
            .extra(),
        None
    );

    // rmcp's type has no room for them; the tool's own JSON has.
    let back = serde_json::to_value(tool.to_rmcp()).unwrap();
    assert!(back.get("execution").is_none());
    let mut json = tool.to_json();
    assert_eq!(json.remove("execution"), Some(extra["execution"].clone()));
    assert_eq!(serde_json::Value::Object(json), back);
}

#[tokio::test]
async fn a_board_tool_converts_back_under_its_board_name_with_everything_else_intact() {
    #[derive(Clone)]
    struct One(rmcp::model::Tool);
    impl rmcp::ServerHandler for One {
        async fn list_tools(
            &self,
            _: Option<rmcp::model::PaginatedRequestParams>,
            _: rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
            Ok(rmcp::model::ListToolsResult::with_all_items(vec![
                self.0.clone(),
            ]))
        }
        fn get_info(&self) -> rmcp::model::ServerConfig {
            rmcp::model::ServerConfig::new(
                rmcp::model::ServerCapabilities::builder()
                    .enable_tools()
                    .build(),
            )
        }
    }
    let board = PegBoard::new();
    common::add(&board, "web", One(rich_tool())).await;
    let tool = board.get_tool("web-search").unwrap();
    assert!(tool.name == "web-search");
    assert_eq!(tool.source_name(), "search");
    let mut expected = rich_tool();
    expected.name = "web-search".into();
    assert_eq!(
        rmcp::model::Tool::from(&tool),
        expected,
        "everything the server sent survives the wire and the board"
    );
}
