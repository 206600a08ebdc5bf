//! The board's tools as the JSON that LLM providers' APIs take.
//!
//! Of a tool's MCP definition every format takes the name, the description and the input
//! schema; Gemini's also takes what the tool answers (`outputSchema`, as `responseJsonSchema`).
//! The other members (`title`, `annotations`, `icons`, `_meta`, `execution`, a vendor's own) have
//! no place in these formats, whose APIs refuse members they do not know: they are not sent.
//!
//! ```
//! use std::sync::Arc;
//! use pegboard::{Tool, export::{self, Provider}};
//!
//! let schema = serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}});
//! let tool = Tool::new("web-search", "Search the web", Arc::new(schema.as_object().unwrap().clone()));
//! let openai = export::tools_json(Provider::OpenAi, &[tool]).unwrap();
//! assert_eq!(openai[0]["type"], "function");
//! assert_eq!(openai[0]["function"]["name"], "web-search");
//! ```

use serde_json::{Map, Value, json};

use crate::{PegBoard, PegBoardError, Tool};

/// An LLM provider's tool format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions `tools`: `[{"type": "function", "function": {name, description, parameters}}]`.
    OpenAi,
    /// Anthropic Messages `tools`: `[{name, description, input_schema}]`.
    Anthropic,
    /// Gemini `tools`: `[{"functionDeclarations": [{name, description, parametersJsonSchema,
    /// responseJsonSchema?}]}]` (`responseJsonSchema`: the tool's `outputSchema`, if it has one).
    Gemini,
}

impl Provider {
    /// Whether the provider accepts `name` as a function name.
    ///
    /// OpenAI: `^[a-zA-Z0-9_-]{1,64}$`; Anthropic: `^[a-zA-Z0-9_-]{1,128}$`;
    /// Gemini: starts with a letter or `_`, then letters, digits, `_ . : -`, at most 64.
    pub fn accepts_name(self, name: &str) -> bool {
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        match self {
            Provider::OpenAi => (1..=64).contains(&name.len()) && name.chars().all(plain),
            Provider::Anthropic => (1..=128).contains(&name.len()) && name.chars().all(plain),
            Provider::Gemini => {
                (1..=64).contains(&name.len())
                    && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| plain(c) || c == '.' || c == ':')
            }
        }
    }

    /// The provider's name, for messages.
    pub fn label(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Gemini",
        }
    }
}

/// The tools in the provider's format (for Gemini: the one-element `tools` array).
///
/// # Errors
/// [`PegBoardError::InvalidName`] for the first tool whose name the provider would refuse (this
/// happens only with a non-LLM-safe [`NamingPolicy`](crate::NamingPolicy)).
pub fn tools_json(provider: Provider, tools: &[Tool]) -> Result<Value, PegBoardError> {
    if let Some(bad) = tools.iter().find(|t| !provider.accepts_name(t.name())) {
        return Err(PegBoardError::InvalidName {
            name: bad.name().to_string(),
            reason: format!(
                "{} does not accept it as a function name; use the default (LLM-safe) NamingPolicy",
                provider.label()
            ),
        });
    }
    Ok(match provider {
        Provider::OpenAi => Value::Array(tools.iter().map(openai).collect()),
        Provider::Anthropic => Value::Array(tools.iter().map(anthropic).collect()),
        Provider::Gemini => {
            json!([{ "functionDeclarations": tools.iter().map(gemini).collect::<Vec<_>>() }])
        }
    })
}

/// How tools are exported, beyond the provider's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// Mark every tool `"defer_loading": true` (Anthropic and OpenAI; Gemini has no such field
    /// and ignores it), so the provider's own tool search loads a tool's definition only when
    /// a search finds it. Pair it with the provider's tool-search tool in the request.
    pub defer_loading: bool,
}

impl ExportOptions {
    /// Options with [`defer_loading`](Self::defer_loading) set as given.
    pub fn defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }
}

/// [`tools_json`] with options.
///
/// ```
/// use std::sync::Arc;
/// use pegboard::{Tool, export::{self, ExportOptions, Provider}};
///
/// let tool = Tool::new("web-search", "Search the web", Arc::new(serde_json::Map::new()));
/// let options = ExportOptions::default().defer_loading(true);
/// let json = export::tools_json_with(Provider::Anthropic, &[tool], options).unwrap();
/// assert_eq!(json[0]["defer_loading"], true);
/// ```
///
/// # Errors
/// As [`tools_json`].
pub fn tools_json_with(
    provider: Provider,
    tools: &[Tool],
    options: ExportOptions,
) -> Result<Value, PegBoardError> {
    let mut json = tools_json(provider, tools)?;
    let defers = matches!(provider, Provider::OpenAi | Provider::Anthropic);
    if options.defer_loading
        && defers
        && let Value::Array(items) = &mut json
    {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            item.insert("defer_loading".into(), Value::Bool(true));
        }
    }
    Ok(json)
}

/// The `_meta` key that carries a tool's namespace to MCP clients.
pub const NAMESPACE_META_KEY: &str = "pegboard/namespace";

impl PegBoard {
    /// Every tool on the board in the provider's format; see [`tools_json`].
    ///
    /// # Errors
    /// As [`tools_json`].
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// let json = board.export(pegboard::export::Provider::Anthropic).unwrap();
    /// assert_eq!(json, serde_json::json!([]));
    /// ```
    pub fn export(&self, provider: Provider) -> Result<Value, PegBoardError> {
        tools_json(provider, &self.get_all_tools())
    }

    /// Every tool on the board in the provider's format, with options; see [`tools_json_with`].
    ///
    /// # Errors
    /// As [`tools_json`].
    ///
    /// ```
    /// use pegboard::export::{ExportOptions, Provider};
    /// let board = pegboard::PegBoard::new();
    /// let options = ExportOptions::default().defer_loading(true);
    /// assert_eq!(board.export_with(Provider::OpenAi, options).unwrap(), serde_json::json!([]));
    /// ```
    pub fn export_with(
        &self,
        provider: Provider,
        options: ExportOptions,
    ) -> Result<Value, PegBoardError> {
        tools_json_with(provider, &self.get_all_tools(), options)
    }
}

/// The input schema as an object schema, as all three providers require.
fn object_schema(tool: &Tool) -> Map<String, Value> {
    let mut schema = Map::clone(tool.input_schema());
    schema.entry("type").or_insert_with(|| json!("object"));
    schema.entry("properties").or_insert_with(|| json!({}));
    schema
}

fn with_description(mut object: Map<String, Value>, tool: &Tool) -> Map<String, Value> {
    if let Some(description) = tool.description() {
        object.insert("description".into(), json!(description));
    }
    object
}

fn openai(tool: &Tool) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), json!(tool.name()));
    let mut function = with_description(function, tool);
    function.insert("parameters".into(), Value::Object(object_schema(tool)));
    json!({ "type": "function", "function": function })
}

fn anthropic(tool: &Tool) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), json!(tool.name()));
    let mut object = with_description(object, tool);
    object.insert("input_schema".into(), Value::Object(object_schema(tool)));
    Value::Object(object)
}

fn gemini(tool: &Tool) -> Value {
    let mut declaration = json!({
        "name": tool.name(),
        // Gemini requires a description.
        "description": tool.description().unwrap_or_default(),
        "parametersJsonSchema": object_schema(tool),
    });
    // The one member of a definition besides these that a provider's format has room for: what
    // the tool answers (MCP `outputSchema`), Gemini's `responseJsonSchema`.
    if let (Some(schema), Some(object)) = (&tool.output_schema, declaration.as_object_mut()) {
        object.insert(
            "responseJsonSchema".into(),
            Value::Object(Map::clone(schema)),
        );
    }
    declaration
}
