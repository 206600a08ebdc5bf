//! [`ListedTool`]: a board tool as a client of the board (the gateway's `tools/list`) is told
//! about it, and the two decisions that make it differ from the server's definition: the
//! board's `_meta` ([`add_board_meta`]) and what is said of `execution` ([`execution_for_clients`]).

use std::{borrow::Cow, sync::Arc};

use rmcp::model::{JsonObject, MetaObject};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::{Tool, export::NAMESPACE_META_KEY};

/// The members of a tool that rmcp's [`rmcp::model::Tool`] models, by their JSON names, in the
/// order rmcp writes them. Everything else a server sends is kept in
/// [`ToolFields::extra`](crate::ToolFields::extra).
pub(crate) const MODELED: [&str; 8] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
];

/// The member of a tool's definition that says how it may be run (MCP 2025-11-25).
const EXECUTION: &str = "execution";
/// The member of `execution` that says whether a call may (or must) be a task.
const TASK_SUPPORT: &str = "taskSupport";

/// A board tool as its clients are told about it: its board name, the `_meta` the board writes
/// (the owning namespace under [`NAMESPACE_META_KEY`], an MCP Apps `ui.resourceUri` namespaced
/// as the board's resources), and every member its server sent, with `execution` as
/// [`execution_for_clients`] says.
///
/// Made by [`PegBoard::listed_tools`](crate::PegBoard::listed_tools). It serialises (with
/// `serde`) to the MCP tool object a `tools/list` result carries, without copying the tool's
/// schemas; [`to_json`](Self::to_json) gives the same as a JSON object.
///
/// ```
/// let schema = std::sync::Arc::new(serde_json::Map::new());
/// let extra = serde_json::json!({"execution": {"taskSupport": "forbidden"}, "x-vendor": 1});
/// let tool = pegboard::Tool::new("read", "Read a file", schema)
///     .with_extra(extra.as_object().unwrap().clone());
/// let listed = pegboard::ListedTool::new(&tool, Some("files"));
/// let json = serde_json::to_value(&listed).unwrap();
/// assert_eq!(json["_meta"]["pegboard/namespace"], "files");
/// assert_eq!(json["execution"]["taskSupport"], "forbidden");
/// assert_eq!(json["x-vendor"], 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ListedTool {
    tool: Tool,
    meta: Option<Arc<MetaObject>>,
    extra: Option<Arc<JsonObject>>,
}

impl ListedTool {
    /// `tool` as listed to clients when it belongs to `namespace` (`None`: a tool registered
    /// without one, whose `_meta` is left as it is).
    pub fn new(tool: &Tool, namespace: Option<&str>) -> Self {
        let meta = match namespace {
            None => tool.meta.clone(),
            Some(ns) => {
                let mut meta = tool.meta.as_deref().cloned().unwrap_or_default();
                add_board_meta(&mut meta, ns);
                Some(Arc::new(meta))
            }
        };
        Self {
            tool: tool.clone(),
            meta,
            extra: listed_extra(tool.extra.as_ref()),
        }
    }

    /// The board's tool, as its server defined it (under its board name).
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The `_meta` listed (see the type's docs).
    pub fn meta(&self) -> Option<&MetaObject> {
        self.meta.as_deref()
    }

    /// The members listed besides those rmcp models (see the type's docs).
    pub fn extra(&self) -> Option<&JsonObject> {
        self.extra.as_deref()
    }

    /// The MCP tool object, every member included.
    pub fn to_json(&self) -> JsonObject {
        write_json(&self.tool, self.meta.as_deref(), self.extra.as_deref())
    }

    /// As rmcp's [`rmcp::model::Tool`], which has no room for [`extra`](Self::extra): for an
    /// rmcp API that takes only that type.
    pub fn to_rmcp(&self) -> rmcp::model::Tool {
        let mut tool = self.tool.to_rmcp();
        tool.meta = self.meta.as_deref().cloned();
        tool
    }
}

impl Serialize for ListedTool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Members {
            tool: &self.tool,
            meta: self.meta.as_deref(),
            extra: self.extra.as_deref(),
        }
        .serialize(serializer)
    }
}

/// What clients of the board are told of a tool's `execution` member (MCP 2025-11-25): the
/// gateway runs every call as a plain call (it absorbs tasks: a tool that requires or allows
/// them is called without one and answered when it is done), so it lists what is true of it.
///
/// - `taskSupport: "forbidden"`, or no `taskSupport` (which means the same): listed unchanged.
/// - any other `taskSupport` (`"optional"`, `"required"`, a value of a later revision): listed
///   without `taskSupport`, so a client sends plain calls, which the gateway takes; the rest of
///   `execution`, if any, is kept.
/// - nothing left, or `None`: `execution` is left out.
///
/// An `execution` that is not an object is listed as the server sent it (the board does not
/// judge a definition it does not understand).
///
/// ```
/// use pegboard::execution_for_clients;
/// use serde_json::json;
///
/// let forbidden = json!({"taskSupport": "forbidden"});
/// assert_eq!(execution_for_clients(&forbidden).as_deref(), Some(&forbidden));
/// assert_eq!(execution_for_clients(&json!({"taskSupport": "required"})), None);
/// assert_eq!(execution_for_clients(&json!({"taskSupport": "optional"})), None);
/// let more = json!({"taskSupport": "optional", "x-queue": "slow"});
/// assert_eq!(execution_for_clients(&more).as_deref(), Some(&json!({"x-queue": "slow"})));
/// ```
pub fn execution_for_clients(execution: &Value) -> Option<Cow<'_, Value>> {
    let Value::Object(members) = execution else {
        return Some(Cow::Borrowed(execution));
    };
    match members.get(TASK_SUPPORT) {
        None => Some(Cow::Borrowed(execution)),
        Some(Value::String(support)) if support == "forbidden" => Some(Cow::Borrowed(execution)),
        Some(_) => {
            let rest: JsonObject = members
                .iter()
                .filter(|(key, _)| key.as_str() != TASK_SUPPORT)
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            (!rest.is_empty()).then_some(Cow::Owned(Value::Object(rest)))
        }
    }
}

/// Make a tool's `_meta` the one the board lists for a tool of `namespace`: the namespace under
/// [`NAMESPACE_META_KEY`], and an MCP Apps `ui.resourceUri` encoded for the namespace's URI alias
/// (the tool's UI is a resource, read through the board: [`crate::uri`]). A tool without a
/// namespace keeps the `_meta` its server sent.
pub(crate) fn add_board_meta(meta: &mut MetaObject, namespace: &str) {
    if meta.0.contains_key("ui") {
        crate::uri::encode_ui_meta(Some(meta), &crate::uri::alias(namespace));
    }
    meta.0.insert(
        NAMESPACE_META_KEY.to_string(),
        Value::String(namespace.to_string()),
    );
}

/// The extra members as listed: shared as they are, unless `execution` must change.
fn listed_extra(extra: Option<&Arc<JsonObject>>) -> Option<Arc<JsonObject>> {
    let extra = extra?;
    let Some(execution) = extra.get(EXECUTION) else {
        return Some(Arc::clone(extra));
    };
    match execution_for_clients(execution) {
        Some(Cow::Borrowed(_)) => Some(Arc::clone(extra)),
        listed => {
            let mut changed = JsonObject::clone(extra);
            match listed {
                Some(value) => {
                    changed.insert(EXECUTION.to_string(), value.into_owned());
                }
                None => {
                    changed.remove(EXECUTION);
                }
            }
            (!changed.is_empty()).then(|| Arc::new(changed))
        }
    }
}

/// `tool` as a JSON object with this `_meta` and these extra members.
pub(crate) fn write_json(
    tool: &Tool,
    meta: Option<&MetaObject>,
    extra: Option<&JsonObject>,
) -> JsonObject {
    match serde_json::to_value(Members { tool, meta, extra }) {
        Ok(Value::Object(object)) => object,
        // A tool's members are JSON values and its map keys strings: this is not reached.
        _ => JsonObject::new(),
    }
}

/// A tool's members, written as rmcp writes its `Tool`, then the extra ones.
struct Members<'a> {
    tool: &'a Tool,
    meta: Option<&'a MetaObject>,
    extra: Option<&'a JsonObject>,
}

impl Serialize for Members<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tool = self.tool;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", tool.name.as_str())?;
        if let Some(title) = &tool.title {
            map.serialize_entry("title", title.as_str())?;
        }
        if let Some(description) = &tool.description {
            map.serialize_entry("description", description.as_str())?;
        }
        map.serialize_entry("inputSchema", &*tool.input_schema)?;
        if let Some(schema) = &tool.output_schema {
            map.serialize_entry("outputSchema", &**schema)?;
        }
        if let Some(annotations) = &tool.annotations {
            map.serialize_entry("annotations", &**annotations)?;
        }
        if let Some(icons) = &tool.icons {
            map.serialize_entry("icons", &**icons)?;
        }
        if let Some(meta) = self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        for (key, value) in self.extra.into_iter().flatten() {
            // A member rmcp models was written above, from the typed field (which a
            // ListingFilter may have edited); a second one of that name would make the object
            // ambiguous.
            if !MODELED.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool_with(extra: Value) -> Tool {
        let schema = Arc::new(JsonObject::new());
        let Value::Object(extra) = extra else {
            panic!("an object")
        };
        Tool::new("t", "a tool", schema).with_extra(extra)
    }

    #[test]
    fn forbidden_or_absent_task_support_is_listed_unchanged() {
        for execution in [
            json!({"taskSupport": "forbidden"}),
            json!({}),
            json!({"x": 1}),
        ] {
            assert_eq!(
                execution_for_clients(&execution).as_deref(),
                Some(&execution)
            );
        }
    }

    #[test]
    fn task_support_other_than_forbidden_is_not_listed() {
        for support in ["optional", "required", "sometimes"] {
            let execution = json!({ "taskSupport": support });
            assert_eq!(execution_for_clients(&execution), None, "{support}");
            let tool = tool_with(json!({"execution": execution, "x-vendor": true}));
            let listed = ListedTool::new(&tool, None).to_json();
            assert!(!listed.contains_key("execution"), "{support}: {listed:?}");
            assert_eq!(listed["x-vendor"], true);
            // The board keeps the server's definition; only what is listed changes.
            assert_eq!(tool.extra().unwrap()["execution"]["taskSupport"], support);
        }
    }

    #[test]
    fn a_tool_whose_only_extra_is_dropped_lists_no_extra() {
        let tool = tool_with(json!({"execution": {"taskSupport": "required"}}));
        assert_eq!(ListedTool::new(&tool, None).extra(), None);
    }

    #[test]
    fn an_execution_that_is_not_an_object_is_listed_as_sent() {
        let odd = json!("tasks please");
        assert_eq!(execution_for_clients(&odd).as_deref(), Some(&odd));
    }

    #[test]
    fn a_modeled_member_in_extra_never_doubles_the_typed_field() {
        let tool = tool_with(json!({"description": "sneaky", "name": "other", "x": 1}));
        let text = serde_json::to_string(&ListedTool::new(&tool, None)).unwrap();
        assert_eq!(text.matches("\"description\"").count(), 1, "{text}");
        assert_eq!(text.matches("\"name\"").count(), 1, "{text}");
        let json = tool.to_json();
        assert_eq!(json["description"], "a tool");
        assert_eq!(json["name"], "t");
        assert_eq!(json["x"], 1);
    }

    #[test]
    fn typed_members_are_written_as_rmcp_writes_them() {
        let tool = tool_with(json!({"execution": {"taskSupport": "forbidden"}}))
            .with_title("T")
            .with_output_schema(Arc::new(JsonObject::new()))
            .with_meta(MetaObject::default());
        let mut ours = tool.to_json();
        assert_eq!(
            ours.remove("execution"),
            Some(json!({"taskSupport": "forbidden"}))
        );
        let rmcp = serde_json::to_value(tool.to_rmcp()).unwrap();
        assert_eq!(Value::Object(ours), rmcp);
    }
}
