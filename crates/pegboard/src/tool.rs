//! [`Tool`]: a tool as the board holds it and the LLM sees it.

use std::{
    borrow::Cow,
    fmt,
    ops::{Deref, DerefMut},
    sync::Arc,
};

use arcstr::ArcStr;
use rmcp::model::{Icon, JsonObject, MetaObject, ToolAnnotations};

/// A tool on the board: the name the LLM sees, plus everything the server said about it.
///
/// The fields ([`ToolFields`], reached through `Deref`) are rmcp's [`rmcp::model::Tool`]
/// fields, by the same names, so code that reads `tool.name` or `tool.input_schema` on an rmcp
/// tool reads a board tool the same way. A `Tool` is one reference-counted pointer to them: a
/// clone is one reference count, because the board hands out a clone of every tool on every
/// listing. Each field is shared as well ([`ArcStr`] for text, [`Arc`] for the rest), so taking
/// one out is cheap too; writing a field (`tool.title = ...`) copies the tool first if it is
/// shared.
///
/// Members of the server's definition that rmcp's type does not model (`execution` of MCP
/// 2025-11-25, a vendor's own member) are kept in [`extra`](ToolFields::extra) when the board
/// could read the listing as JSON (see [`ToolListTap`](crate::ToolListTap)); they are part of the
/// tool: equality, clones and renames keep them, and a change of them is a change of the tool.
/// Conversion from [`rmcp::model::Tool`] is lossless; conversion to it loses `extra` (rmcp has
/// no room for it): to write the tool whole, use [`to_json`](Tool::to_json).
///
/// ```
/// use std::sync::Arc;
/// use pegboard::Tool;
///
/// let schema = serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}});
/// let tool = Tool::new("search", "Search the web", Arc::new(schema.as_object().unwrap().clone()))
///     .with_title("Web search");
/// assert!(tool.name == "search");
/// assert_eq!(format!("{}", tool.name), "search");
/// assert_eq!(tool.title.as_deref(), Some("Web search"));
/// assert_eq!(tool.input_schema["type"], "object");
///
/// let rmcp_tool: rmcp::model::Tool = tool.clone().into();
/// assert_eq!(pegboard::Tool::from(rmcp_tool), tool);
/// ```
#[derive(Clone, PartialEq)]
pub struct Tool {
    fields: Arc<ToolFields>,
}

/// The fields of a [`Tool`], named as in [`rmcp::model::Tool`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolFields {
    /// The name the LLM sees (on the board: prefixed with the namespace).
    pub name: ArcStr,
    /// A human-readable title.
    pub title: Option<ArcStr>,
    /// What the tool does.
    pub description: Option<ArcStr>,
    /// The JSON Schema of the arguments.
    pub input_schema: Arc<JsonObject>,
    /// The JSON Schema of the structured output.
    pub output_schema: Option<Arc<JsonObject>>,
    /// Hints: read-only, destructive, idempotent, open world.
    pub annotations: Option<Arc<ToolAnnotations>>,
    /// Icons to show for the tool.
    pub icons: Option<Arc<[Icon]>>,
    /// The `_meta` object.
    pub meta: Option<Arc<MetaObject>>,
    /// The members of the server's definition that rmcp's [`rmcp::model::Tool`] does not model
    /// (for example `execution`), as the server sent them; `None` when there were none (or the
    /// listing could not be read as JSON). Members named like one of the fields above are never
    /// written from here (see [`Tool::to_json`]).
    pub extra: Option<Arc<JsonObject>>,
    /// The name the tool had when it was created or received from its server.
    source: ArcStr,
}

impl Tool {
    /// Whether both are the same shared tool (one pointer compare): the search index reuses a
    /// service's segment when every tool of the service is still the same.
    pub(crate) fn same(&self, other: &Tool) -> bool {
        Arc::ptr_eq(&self.fields, &other.fields)
    }
}

impl Deref for Tool {
    type Target = ToolFields;

    fn deref(&self) -> &ToolFields {
        &self.fields
    }
}

impl DerefMut for Tool {
    fn deref_mut(&mut self) -> &mut ToolFields {
        Arc::make_mut(&mut self.fields)
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fields.fmt(f)
    }
}

impl From<ToolFields> for Tool {
    fn from(fields: ToolFields) -> Self {
        Self {
            fields: Arc::new(fields),
        }
    }
}

impl Tool {
    /// A tool with a name, a description and a JSON Schema for its arguments.
    pub fn new(
        name: impl Into<ArcStr>,
        description: impl Into<ArcStr>,
        input_schema: impl Into<Arc<JsonObject>>,
    ) -> Self {
        let name = name.into();
        Self::from(ToolFields {
            source: name.clone(),
            name,
            title: None,
            description: Some(description.into()),
            input_schema: input_schema.into(),
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: None,
        })
    }

    /// The same tool with a human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<ArcStr>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same tool with annotations (read-only, destructive, ... hints).
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(Arc::new(annotations));
        self
    }

    /// The same tool with a JSON Schema for its structured output.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Arc<JsonObject>) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The same tool with `_meta` set.
    #[must_use]
    pub fn with_meta(mut self, meta: MetaObject) -> Self {
        self.meta = Some(Arc::new(meta));
        self
    }

    /// The same tool with members rmcp's [`rmcp::model::Tool`] does not model (see
    /// [`ToolFields::extra`]); an empty object means none.
    ///
    /// ```
    /// let schema = std::sync::Arc::new(serde_json::Map::new());
    /// let execution = serde_json::json!({"execution": {"taskSupport": "forbidden"}});
    /// let tool = pegboard::Tool::new("read", "Read a file", schema)
    ///     .with_extra(execution.as_object().unwrap().clone());
    /// assert_eq!(tool.extra().unwrap()["execution"]["taskSupport"], "forbidden");
    /// assert_eq!(tool.to_json()["execution"], execution["execution"]);
    /// ```
    #[must_use]
    pub fn with_extra(mut self, extra: JsonObject) -> Self {
        self.extra = (!extra.is_empty()).then(|| Arc::new(extra));
        self
    }

    /// The same tool under another name (everything else shared).
    #[must_use]
    pub fn renamed(&self, name: impl Into<ArcStr>) -> Self {
        Self::from(ToolFields {
            name: name.into(),
            ..ToolFields::clone(&self.fields)
        })
    }

    /// The name the LLM sees (on the board: prefixed with the namespace).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as a shared string (a clone is a reference count).
    pub fn name_arc(&self) -> &ArcStr {
        &self.name
    }

    /// The name the tool had when it was created or received from its server.
    pub fn source_name(&self) -> &str {
        &self.source
    }

    /// The human-readable title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.input_schema
    }

    /// The JSON Schema of the structured output, if any.
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output_schema.as_ref()
    }

    /// The annotations, if any.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.annotations.as_deref()
    }

    /// The icons, if any.
    pub fn icons(&self) -> Option<&[Icon]> {
        self.icons.as_deref()
    }

    /// The `_meta` object, if any.
    pub fn meta(&self) -> Option<&MetaObject> {
        self.meta.as_deref()
    }

    /// The members rmcp's [`rmcp::model::Tool`] does not model, if any (see [`ToolFields::extra`]).
    pub fn extra(&self) -> Option<&JsonObject> {
        self.extra.as_deref()
    }

    /// The tool as an MCP tool object, every member included (the fields rmcp models, then
    /// [`extra`](ToolFields::extra)), named as on the board. This is the tool as its server
    /// defined it; what the gateway lists is [`PegBoard::listed_tools`](crate::PegBoard::listed_tools).
    pub fn to_json(&self) -> JsonObject {
        crate::listed::write_json(self, self.meta.as_deref(), self.extra.as_deref())
    }

    /// The tool as rmcp's model type, named as on the board; [`extra`](ToolFields::extra) is
    /// left out (rmcp has no room for it).
    pub fn to_rmcp(&self) -> rmcp::model::Tool {
        let mut tool = rmcp::model::Tool::new_with_raw(
            String::from(self.name.as_str()),
            self.description
                .as_ref()
                .map(|d| Cow::Owned(String::from(d.as_str()))),
            Arc::clone(&self.input_schema),
        );
        tool.title = self.title.as_ref().map(|t| String::from(t.as_str()));
        tool.output_schema.clone_from(&self.output_schema);
        tool.annotations = self.annotations.as_deref().cloned();
        tool.icons = self.icons.as_deref().map(<[Icon]>::to_vec);
        tool.meta = self.meta.as_deref().cloned();
        tool
    }
}

impl From<rmcp::model::Tool> for Tool {
    fn from(tool: rmcp::model::Tool) -> Self {
        // Every field of rmcp 3.11's `Tool` (rmcp is pinned) is named here; `..` is required
        // by its `#[non_exhaustive]`. tests/tool_conversion.rs round-trips the JSON of a tool
        // with every field set, so a field added by an rmcp upgrade fails that test, not silently.
        let rmcp::model::Tool {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            icons,
            meta,
            ..
        } = tool;
        let name = ArcStr::from(name);
        Self::from(ToolFields {
            source: name.clone(),
            name,
            title: title.map(ArcStr::from),
            description: description.map(ArcStr::from),
            input_schema,
            output_schema,
            annotations: annotations.map(Arc::new),
            icons: icons.map(Arc::from),
            meta: meta.map(Arc::new),
            extra: None,
        })
    }
}

impl From<Tool> for rmcp::model::Tool {
    fn from(tool: Tool) -> Self {
        tool.to_rmcp()
    }
}

impl From<&Tool> for rmcp::model::Tool {
    fn from(tool: &Tool) -> Self {
        tool.to_rmcp()
    }
}
