//! `server.json` as the MCP Registry serves it (schema 2025-12-11, camelCase), read leniently:
//! unknown fields are ignored, and the snake_case names of the 2025-07-09 schema are accepted
//! too, so older documents convert the same way.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One server version.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    /// Reverse-DNS name, `io.github.owner/server`.
    pub name: String,
    /// Display name.
    #[serde(default)]
    pub title: Option<String>,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// The server's version (`version_detail.version` in the old schema).
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default, rename = "version_detail")]
    version_detail: Option<VersionDetail>,
    /// Ways to run it locally.
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Ways to reach it over the network.
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Deserialize)]
struct VersionDetail {
    version: Option<String>,
}

impl ServerJson {
    /// The version, from either schema.
    pub fn version(&self) -> Option<&str> {
        self.version
            .as_deref()
            .or_else(|| self.version_detail.as_ref()?.version.as_deref())
    }
}

/// A package that runs the server.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// npm, pypi, oci, nuget, mcpb, cargo...
    #[serde(alias = "registry_type", alias = "registry_name")]
    pub registry_type: String,
    /// The package's name (or image reference, or URL for mcpb).
    #[serde(alias = "name")]
    pub identifier: String,
    /// Its exact version.
    #[serde(default)]
    pub version: Option<String>,
    /// How it speaks MCP once started (stdio when absent, as in the old schema).
    #[serde(default)]
    pub transport: Option<Transport>,
    /// Arguments for the runtime (npx, docker...).
    #[serde(default, alias = "runtime_arguments")]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the package's program.
    #[serde(default, alias = "package_arguments")]
    pub package_arguments: Vec<Argument>,
    /// Environment variables it reads.
    #[serde(default, alias = "environment_variables")]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A package's transport.
#[derive(Debug, Clone, Deserialize)]
pub struct Transport {
    /// stdio, streamable-http, sse.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A remote endpoint.
#[derive(Debug, Clone, Deserialize)]
pub struct Remote {
    /// streamable-http or sse.
    #[serde(rename = "type", alias = "transport_type")]
    pub kind: String,
    /// The URL template.
    pub url: String,
    /// Headers to send.
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// What `{name}` in the URL stands for.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A value the user may have to give (the schema's `Input`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// What it is, for the prompt.
    #[serde(default)]
    pub description: Option<String>,
    /// Must be given.
    #[serde(default, alias = "is_required")]
    pub is_required: bool,
    /// A password, token...: never written to the config file.
    #[serde(default, alias = "is_secret")]
    pub is_secret: bool,
    /// Fixed value (`{vars}` inside filled from `variables`).
    #[serde(default)]
    pub value: Option<String>,
    /// Used when nothing is given.
    #[serde(default)]
    pub default: Option<String>,
    /// string, number, boolean, filepath.
    #[serde(default)]
    pub format: Option<String>,
    /// The values allowed.
    #[serde(default)]
    pub choices: Vec<String>,
    /// What `{name}` in `value` stands for.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A named environment variable or header.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValueInput {
    /// The variable's or header's name.
    pub name: String,
    /// The rest.
    #[serde(flatten)]
    pub input: Input,
}

/// A command-line argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// positional or named.
    #[serde(rename = "type")]
    pub kind: String,
    /// The flag, with its dashes (named).
    #[serde(default)]
    pub name: Option<String>,
    /// The positional's label (not on the command line).
    #[serde(default, alias = "value_hint")]
    pub value_hint: Option<String>,
    /// The rest.
    #[serde(flatten)]
    pub input: Input,
}

/// One row of `GET /v0.1/servers` and the answer of `GET .../versions/{v}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerResponse {
    /// The server.json.
    pub server: ServerJson,
}

/// `GET /v0.1/servers`.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerList {
    /// The servers found.
    pub servers: Vec<ServerResponse>,
}
