//! The file as serde reads it, in one pass: entries keep the file's order ([`IndexMap`]), a key
//! repeated inside one section is refused while parsing, and fields pegboard does not know are
//! kept aside so they can be named in a warning.

use std::{collections::BTreeMap, fmt, marker::PhantomData};

use indexmap::IndexMap;
use serde::{
    Deserialize, Deserializer,
    de::{self, MapAccess, Visitor},
};
use serde_json::Value;

/// The top level: Claude Desktop / Cursor's `mcpServers`, VS Code's `servers`.
#[derive(Deserialize)]
pub(super) struct RawFile {
    #[serde(rename = "mcpServers")]
    pub(super) mcp_servers: Option<Entries>,
    pub(super) servers: Option<Entries>,
    /// Search mode's settings (see [`super::SearchSettings`]).
    #[serde(rename = "toolSearch")]
    pub(super) tool_search: Option<Value>,
    /// Code mode's settings (see [`super::CodeModeSettings`]).
    #[serde(rename = "codeMode")]
    pub(super) code_mode: Option<Value>,
    /// Guards for every entry (see `config/guards.rs`).
    #[serde(rename = "onChange")]
    pub(super) on_change: Option<String>,
    #[serde(rename = "onNew")]
    pub(super) on_new: Option<String>,
    #[serde(rename = "stripInvisible")]
    pub(super) strip_invisible: Option<bool>,
    #[serde(rename = "maxResultTokens")]
    pub(super) max_result_tokens: Option<f64>,
    /// Where the lock is, relative to the config's folder.
    #[serde(rename = "lockFile")]
    pub(super) lock_file: Option<String>,
    /// Named clients (see [`crate::identity`]).
    pub(super) clients: Option<crate::identity::RawClients>,
    /// The OAuth issuer whose tokens are accepted.
    pub(super) auth: Option<Value>,
    /// Where upstream OAuth credentials are kept: `"keyring"` or `"file"`.
    pub(super) credentials: Option<String>,
    /// Where the fleet's shared state is kept (see [`super::StoreSettings`]).
    pub(super) store: Option<Value>,
}

/// One section's entries, in file order, each key at most once.
pub(super) struct Entries(pub(super) IndexMap<String, RawServer>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(UniqueKeys(PhantomData))
    }
}

/// serde_json keeps the last of two equal keys silently; a config with one server written twice
/// almost always means a copy-paste slip, so it is refused where it is read.
struct UniqueKeys<V>(PhantomData<V>);

impl<'de> Visitor<'de> for UniqueKeys<RawServer> {
    type Value = Entries;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of server entries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = IndexMap::with_capacity(map.size_hint().unwrap_or(0).min(256));
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "server `{key}` appears twice; keep one"
                )));
            }
            let value = map.next_value::<RawServer>()?;
            out.insert(key, value);
        }
        Ok(Entries(out))
    }
}

impl RawFile {
    /// The file's guard fields.
    pub(super) fn guards(&self) -> super::guards::RawGuards {
        super::guards::RawGuards {
            on_change: self.on_change.clone(),
            on_new: self.on_new.clone(),
            strip_invisible: self.strip_invisible,
            max_result_tokens: self.max_result_tokens,
        }
    }
}

impl RawServer {
    /// The entry's guard fields.
    pub(super) fn guards(&self) -> super::guards::RawGuards {
        super::guards::RawGuards {
            on_change: self.on_change.clone(),
            on_new: self.on_new.clone(),
            strip_invisible: self.strip_invisible,
            max_result_tokens: self.max_result_tokens,
        }
    }
}

/// One entry as written.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct RawServer {
    pub(super) command: Option<String>,
    pub(super) args: Vec<String>,
    pub(super) env: BTreeMap<String, String>,
    pub(super) cwd: Option<String>,
    pub(super) url: Option<String>,
    pub(super) headers: BTreeMap<String, String>,
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
    pub(super) namespace: Option<String>,
    pub(super) prefix: Option<bool>,
    pub(super) allow: Option<Vec<String>>,
    pub(super) deny: Vec<String>,
    pub(super) timeout: Option<f64>,
    #[serde(rename = "maxMessageMib")]
    pub(super) max_message_mib: Option<f64>,
    pub(super) disabled: bool,
    pub(super) session: Option<String>,
    #[serde(rename = "onChange")]
    pub(super) on_change: Option<String>,
    #[serde(rename = "onNew")]
    pub(super) on_new: Option<String>,
    #[serde(rename = "stripInvisible")]
    pub(super) strip_invisible: Option<bool>,
    #[serde(rename = "maxResultTokens")]
    pub(super) max_result_tokens: Option<f64>,
    /// OAuth settings of a `url` server (read in `oauth.rs`, so a bad one skips the entry).
    pub(super) oauth: Option<Value>,
    /// Fields pegboard does not read (`autoApprove`, `envFile`, ...), for a warning.
    #[serde(flatten)]
    pub(super) unknown: IndexMap<String, Value>,
}
