//! When search mode is on, and what it pins: `--tool-search` and the config key `toolSearch`.

use std::{fmt, str::FromStr};

use serde_json::Value;

/// Above this many tools on the board, `auto` turns search mode on.
pub const DEFAULT_THRESHOLD: usize = 40;

/// `off`, `on` or `auto` (on when the board holds more than the threshold of tools).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolSearch {
    /// `tools/list` lists every tool (the default).
    #[default]
    Off,
    /// `tools/list` lists the meta-tools `search_tools` and `call_tool` (and pinned tools).
    On,
    /// On when the board holds more tools than the threshold, checked at each `tools/list`.
    Auto,
}

impl FromStr for ToolSearch {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" | "false" => Ok(Self::Off),
            "on" | "true" => Ok(Self::On),
            "auto" => Ok(Self::Auto),
            other => Err(format!("tool search `{other}` is not one of off, on, auto")),
        }
    }
}

impl fmt::Display for ToolSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Off => "off",
            Self::On => "on",
            Self::Auto => "auto",
        })
    }
}

/// How `search_tools` ranks: `lexical` (BM25F, always available) or `hybrid` (BM25F fused with
/// the built-in static embedding; needs the cargo feature `embed`, and is then the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// BM25F with name splitting, stemming and word forms.
    Lexical,
    /// BM25F and the embedding's cosine, fused; exact and near-exact names first.
    Hybrid,
}

impl Default for Ranking {
    fn default() -> Self {
        if cfg!(feature = "embed") {
            Self::Hybrid
        } else {
            Self::Lexical
        }
    }
}

impl FromStr for Ranking {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lexical" => Ok(Self::Lexical),
            "hybrid" if cfg!(feature = "embed") => Ok(Self::Hybrid),
            "hybrid" => Err(
                "`toolSearch.ranking` \"hybrid\" needs a gateway built with the cargo feature `embed`; \
                 use \"lexical\" or rebuild with `--features embed`"
                    .to_string(),
            ),
            other => Err(format!(
                "`toolSearch.ranking` `{other}` is not one of lexical, hybrid"
            )),
        }
    }
}

impl fmt::Display for Ranking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Lexical => "lexical",
            Self::Hybrid => "hybrid",
        })
    }
}

/// Search mode's settings.
///
/// In the config file, `toolSearch` is either a mode (`"toolSearch": "auto"`) or an object:
/// `{"mode": "auto", "threshold": 40, "pinned": ["notes-add_note"], "ranking": "hybrid"}`.
/// Pinned tools (board names) are listed beside the meta-tools. `--tool-search` on the command
/// line overrides the mode.
///
/// ```
/// use pegboard_gateway::config::{SearchSettings, ToolSearch};
/// let settings = SearchSettings::from_json(&serde_json::json!({"mode": "on", "pinned": ["a-b"]})).unwrap();
/// assert_eq!(settings.mode, ToolSearch::On);
/// assert_eq!(settings.pinned, ["a-b"]);
/// assert_eq!(SearchSettings::from_json(&serde_json::json!("auto")).unwrap().threshold, 40);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchSettings {
    /// Off, on, or auto.
    pub mode: ToolSearch,
    /// `auto` is on above this many tools ([`DEFAULT_THRESHOLD`]).
    pub threshold: usize,
    /// Board names of tools listed beside the meta-tools.
    pub pinned: Vec<String>,
    /// How `search_tools` ranks ([`Ranking::default`]: hybrid when built with `embed`).
    pub ranking: Ranking,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            mode: ToolSearch::Off,
            threshold: DEFAULT_THRESHOLD,
            pinned: Vec::new(),
            ranking: Ranking::default(),
        }
    }
}

impl SearchSettings {
    /// These settings with another mode.
    #[must_use]
    pub fn with_mode(mut self, mode: ToolSearch) -> Self {
        self.mode = mode;
        self
    }

    /// Read the config file's `toolSearch` value.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let mut settings = Self::default();
        match value {
            Value::String(mode) => settings.mode = mode.parse()?,
            Value::Bool(on) => settings.mode = if *on { ToolSearch::On } else { ToolSearch::Off },
            Value::Object(fields) => {
                for (key, field) in fields {
                    match key.as_str() {
                        "mode" => {
                            settings.mode = field
                                .as_str()
                                .ok_or("`toolSearch.mode` must be \"off\", \"on\" or \"auto\"")?
                                .parse()?;
                        }
                        "threshold" => {
                            settings.threshold = field
                                .as_u64()
                                .and_then(|n| usize::try_from(n).ok())
                                .ok_or("`toolSearch.threshold` must be a whole number")?;
                        }
                        "pinned" => {
                            settings.pinned = field
                                .as_array()
                                .and_then(|names| {
                                    names.iter().map(|n| n.as_str().map(String::from)).collect()
                                })
                                .ok_or("`toolSearch.pinned` must be a list of tool names")?;
                        }
                        "ranking" => {
                            settings.ranking = field
                                .as_str()
                                .ok_or("`toolSearch.ranking` must be \"lexical\" or \"hybrid\"")?
                                .parse()?;
                        }
                        other => {
                            return Err(format!(
                                "`toolSearch.{other}` is unknown; use mode, threshold, pinned, ranking"
                            ));
                        }
                    }
                }
            }
            _ => {
                return Err(
                    "`toolSearch` must be \"off\", \"on\", \"auto\" or an object {mode, threshold, pinned, ranking}"
                        .to_string(),
                );
            }
        }
        Ok(settings)
    }

    /// Whether search mode is on for a board of `tools` tools.
    pub fn active(&self, tools: usize) -> bool {
        match self.mode {
            ToolSearch::Off => false,
            ToolSearch::On => true,
            ToolSearch::Auto => tools > self.threshold,
        }
    }
}
