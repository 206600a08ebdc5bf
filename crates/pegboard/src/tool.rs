//! [`Tool`]: a tool as the board holds it and the LLM sees it.

use std::{borrow::Cow, sync::Arc};

use rmcp::model::{Icon, JsonObject, MetaObject, ToolAnnotations};

/// A tool on the board: the name the LLM sees, plus everything the server said about it.
///
/// Clones are cheap (one reference count): the name and everything else, schemas included, are
/// shared, because the board hands out a clone of every tool on every listing. Conversion from and to [`rmcp::model::Tool`] is lossless: title,
/// description, input and output schema, annotations, icons and `_meta` all survive.
///
/// ```
/// use std::sync::Arc;
/// use pegboard::Tool;
///
/// let schema = serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}});
/// let tool = Tool::new("search", "Search the web", Arc::new(schema.as_object().unwrap().clone()))
///     .with_title("Web search");
/// assert_eq!(tool.name(), "search");
/// assert_eq!(tool.title(), Some("Web search"));
///
/// let rmcp_tool: rmcp::model::Tool = tool.clone().into();
/// assert_eq!(pegboard::Tool::from(rmcp_tool), tool);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    inner: Arc<Inner>,
}

#[derive(Clone, Debug, PartialEq)]
struct Inner {
    name: Arc<str>,
    /// Everything as the server sent it; shared between a tool and its renamed copies.
    spec: Arc<rmcp::model::Tool>,
}

impl Tool {
    /// A tool with a name, a description and a JSON Schema for its arguments.
    pub fn new(
        name: impl Into<Arc<str>>,
        description: impl Into<Cow<'static, str>>,
        input_schema: Arc<JsonObject>,
    ) -> Self {
        let name: Arc<str> = name.into();
        let spec = rmcp::model::Tool::new(name.to_string(), description, input_schema);
        Self::from_parts(name, Arc::new(spec))
    }

    fn from_parts(name: Arc<str>, spec: Arc<rmcp::model::Tool>) -> Self {
        Self {
            inner: Arc::new(Inner { name, spec }),
        }
    }

    fn spec_mut(&mut self) -> &mut rmcp::model::Tool {
        Arc::make_mut(&mut Arc::make_mut(&mut self.inner).spec)
    }

    /// The same tool with a human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.spec_mut().title = Some(title.into());
        self
    }

    /// The same tool with annotations (read-only, destructive, ... hints).
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.spec_mut().annotations = Some(annotations);
        self
    }

    /// The same tool with a JSON Schema for its structured output.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Arc<JsonObject>) -> Self {
        self.spec_mut().output_schema = Some(schema);
        self
    }

    /// The same tool with `_meta` set.
    #[must_use]
    pub fn with_meta(mut self, meta: MetaObject) -> Self {
        self.spec_mut().meta = Some(meta);
        self
    }

    /// The same tool under another name (everything else shared).
    #[must_use]
    pub fn renamed(&self, name: impl Into<Arc<str>>) -> Self {
        Self::from_parts(name.into(), Arc::clone(&self.inner.spec))
    }

    /// The name the LLM sees (on the board: prefixed with the namespace).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name as a shared string.
    pub fn name_arc(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The name the tool had when it was created or received from its server.
    pub fn source_name(&self) -> &str {
        &self.inner.spec.name
    }

    /// The human-readable title, if any.
    pub fn title(&self) -> Option<&str> {
        self.inner.spec.title.as_deref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.inner.spec.description.as_deref()
    }

    /// The JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.inner.spec.input_schema
    }

    /// The JSON Schema of the structured output, if any.
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.inner.spec.output_schema.as_ref()
    }

    /// The annotations, if any.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.inner.spec.annotations.as_ref()
    }

    /// The icons, if any.
    pub fn icons(&self) -> Option<&[Icon]> {
        self.inner.spec.icons.as_deref()
    }

    /// The `_meta` object, if any.
    pub fn meta(&self) -> Option<&MetaObject> {
        self.inner.spec.meta.as_ref()
    }

    /// The tool as rmcp's model type, named as on the board.
    pub fn to_rmcp(&self) -> rmcp::model::Tool {
        let mut tool = rmcp::model::Tool::clone(&self.inner.spec);
        tool.name = Cow::Owned(String::from(&*self.inner.name));
        tool
    }
}

impl From<rmcp::model::Tool> for Tool {
    fn from(tool: rmcp::model::Tool) -> Self {
        Self::from_parts(Arc::from(tool.name.as_ref()), Arc::new(tool))
    }
}

impl From<Tool> for rmcp::model::Tool {
    fn from(tool: Tool) -> Self {
        let Inner { name, spec } = Arc::unwrap_or_clone(tool.inner);
        let mut spec = Arc::unwrap_or_clone(spec);
        if *spec.name != *name {
            spec.name = Cow::Owned(String::from(&*name));
        }
        spec
    }
}

impl From<&Tool> for rmcp::model::Tool {
    fn from(tool: &Tool) -> Self {
        tool.to_rmcp()
    }
}
