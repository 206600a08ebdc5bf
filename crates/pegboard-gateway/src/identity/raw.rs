//! The `clients` and `auth` sections as serde reads them. Client names keep the file's order
//! (the first client that matches a token wins) and a name written twice is refused; each
//! client's body stays a JSON value here, read field by field in `parse.rs` so that every
//! error can name the client.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// `clients`: name -> entry, in file order, each name once.
#[derive(Debug, Default)]
pub struct RawClients(pub(crate) IndexMap<String, Value>);

impl<'de> Deserialize<'de> for RawClients {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ClientsVisitor)
    }
}

struct ClientsVisitor;

impl<'de> Visitor<'de> for ClientsVisitor {
    type Value = RawClients;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of named clients")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = IndexMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "client `{key}` appears twice in `clients`; keep one"
                )));
            }
            out.insert(key, map.next_value::<Value>()?);
        }
        Ok(RawClients(out))
    }
}

/// One client as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct RawClient {
    pub(crate) token: Option<String>,
    #[serde(rename = "tokenSha256")]
    pub(crate) token_sha256: Option<String>,
    pub(crate) jwt: Option<IndexMap<String, Value>>,
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) resources: Option<bool>,
    #[serde(rename = "maxSessions")]
    pub(crate) max_sessions: Option<Value>,
    #[serde(rename = "maxConcurrent")]
    pub(crate) max_concurrent: Option<Value>,
    #[serde(rename = "callsPerMinute")]
    pub(crate) calls_per_minute: Option<Value>,
}

/// The fields of a client entry, for telling unknown ones apart.
pub(crate) const CLIENT_FIELDS: &[&str] = &[
    "token",
    "tokenSha256",
    "jwt",
    "tools",
    "resources",
    "maxSessions",
    "maxConcurrent",
    "callsPerMinute",
];

/// `auth` as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct RawAuth {
    pub(crate) issuer: Option<String>,
    pub(crate) audience: Option<String>,
}

/// The fields of `auth`.
pub(crate) const AUTH_FIELDS: &[&str] = &["issuer", "audience"];
