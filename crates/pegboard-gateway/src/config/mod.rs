//! The config file: the `mcpServers` JSON of Claude Desktop and Cursor, or the `servers` JSON of VS Code.
//!
//! ```json
//! { "mcpServers": {
//!     "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "${HOME}/memory.json"} },
//!     "docs":  { "url": "http://127.0.0.1:8931/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"} },
//!     "units": { "command": "pegboard-demo-units", "prefix": false, "deny": ["reset"], "timeout": 10 }
//! } }
//! ```
//!
//! The key of each entry is its namespace. PegBoard's own optional fields: `namespace` (override the key),
//! `prefix` (`false`: tool names are not prefixed), `allow` / `deny` (original tool names), `timeout` (seconds
//! per call), `maxMessageMib` (largest message taken from it), `session` (`"shared"`, the default: one
//! connection for every client; `"per-client"`: each downstream session gets its own connection, for a
//! `command` its own process, see the README's "session"), `disabled` (skip the entry); the guards
//! `onChange` (`"hide"`, the default, or `"warn"`), `onNew` (`"allow"`, the default, or `"hide"`),
//! `stripInvisible` (`true` by default) and `maxResultTokens` (a number; none by default), which may
//! also be set at the top of the file for every entry, beside `lockFile` (where the lock of pinned
//! definitions is; `pegboard.lock` beside the config by default): see [`crate::pins`]. Other unknown fields are ignored with a warning.
//!
//! Beside the servers, `clients` and `auth` say who may call the gateway and what each caller
//! sees: parsed by [`crate::identity::parse_access`] into [`Config::access`]. `store` says where
//! replicas share their sessions ([`StoreSettings`], [`Config::store`]).
//!
//! `${VAR}` in `command`, `args`, `env`, `cwd`, `url` and `headers` is replaced by the environment variable
//! `VAR` (an error if it is unset); `${VAR:-fallback}` uses `fallback` when `VAR` is unset or empty; `$${` is a
//! literal `${`; `${secret:ENTRY.VAR}` is the secret of that name in the credential store (see
//! [`crate::secrets`]). `command` and `cwd` are used as given, as Claude Desktop does: a relative path is relative
//! to the folder pegboard runs in (a bare name like `npx` is looked up on `PATH`).

pub mod code_mode;
mod entry;
mod errors;
mod guards;
#[cfg(test)]
mod guards_tests;
mod oauth;
mod raw;
mod secret_lookup;
mod store;
#[cfg(test)]
mod tests;
pub mod tool_search;
mod vars;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use code_mode::{CodeLimits, CodeModeSettings};
pub use errors::{ConfigError, EntryError, EntryProblem, VariableProblem};
pub use oauth::{CredentialsBackend, DEFAULT_REDIRECT_PORT, OAuthSettings, Secret};
pub use store::{DEFAULT_STORE_PREFIX, StoreSettings, StoreUrl, StoreUrlError};
pub use tool_search::{Ranking, SearchSettings, ToolSearch};

pub use crate::io::limit::DEFAULT_MAX_MESSAGE;
use entry::build_server;
use raw::{RawFile, RawServer};
pub use vars::expand;

/// A whole config file, parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from (for messages).
    pub source: PathBuf,
    /// The enabled servers, in file order. Disabled entries are dropped.
    pub servers: Vec<ServerConfig>,
    /// Non-fatal problems (unknown fields, ignored settings), for the caller to log.
    pub warnings: Vec<String>,
    /// Entries that cannot be used (an unsupported `type`, an unset `${VAR}`...): skipped, the
    /// others are served; `--strict` makes them fatal.
    pub skipped: Vec<EntryError>,
    /// Search mode (`toolSearch`, beside the server section; other clients ignore it).
    pub tool_search: SearchSettings,
    /// Code mode (`codeMode`, beside the server section): `None` when off.
    pub code_mode: Option<CodeModeSettings>,
    /// Where the lock of pinned tool definitions is (or would be): the file's `lockFile`
    /// (relative to its folder), else `pegboard.lock` beside it. See [`crate::pins`].
    pub lock_file: PathBuf,
    /// The `clients` and `auth` sections, when the file has either (see `crate::identity`).
    pub access: Option<crate::identity::AccessConfig>,
    /// The top-level `"store"`: where the fleet's shared state is kept (`--store` overrides it).
    pub store: Option<StoreSettings>,
}

impl Config {
    /// The entries that were skipped, each with its line and what to do.
    pub fn skipped(&self) -> &[EntryError] {
        &self.skipped
    }

    /// Cap the results of every server whose entry (and file) sets no `maxResultTokens` at
    /// `tokens` (`--max-result-tokens`; see `crate::guards::caps`).
    #[must_use]
    pub fn with_max_result_tokens(mut self, tokens: usize) -> Self {
        for server in &mut self.servers {
            server.guards.max_result_tokens.get_or_insert(tokens);
        }
        self
    }

    /// Read the lock at `path` instead of [`Config::lock_file`] and give each server its pins
    /// (none when there is no such file).
    ///
    /// # Errors
    /// The lock cannot be read or is not a valid lock.
    pub fn with_lock_file(mut self, path: &Path) -> Result<Self, ConfigError> {
        let lock = guards::read_lock(path)?;
        guards::attach(&mut self.servers, lock.as_ref());
        self.lock_file = path.to_path_buf();
        Ok(self)
    }

    /// Take every server's pins away: nothing is compared or hidden (`pegboard pin` lists what
    /// the servers offer this way).
    #[must_use]
    pub fn without_pins(mut self) -> Self {
        guards::attach(&mut self.servers, None);
        self
    }

    /// Limit every server whose entry sets no `maxMessageMib` to messages of `bytes`
    /// ([`ServerConfig::max_message`]).
    #[must_use]
    pub fn with_max_message(mut self, bytes: usize) -> Self {
        for server in &mut self.servers {
            server.max_message.get_or_insert(bytes);
        }
        self
    }
}

/// One server entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The entry's key in the file: used in progress messages and logs.
    pub name: String,
    /// The namespace its tools are registered under (`None` with `"prefix": false`).
    pub namespace: Option<String>,
    /// How to reach it.
    pub transport: Transport,
    /// Only these original tool names (all when `None`).
    pub allow: Option<Vec<String>>,
    /// Never these original tool names.
    pub deny: Vec<String>,
    /// Per-call timeout.
    pub timeout: Option<Duration>,
    /// The largest message (in bytes) taken from the server; a longer one fails its request with
    /// an error naming the server and the limit (`io/limit.rs`). Set by the entry's
    /// `maxMessageMib`, else by [`Config::with_max_message`] (`--max-message-mib`); `None` is
    /// [`DEFAULT_MAX_MESSAGE`] (see [`ServerConfig::message_limit`]).
    pub max_message: Option<usize>,
    /// One connection for every downstream session, or one each (the entry's `session`).
    pub session: SessionMode,
    /// Its pins, what to do when a listing differs from them, the description scan's stripping,
    /// its result cap (the entry's `onChange`, `onNew`, `stripInvisible`, `maxResultTokens`,
    /// over the file's; see [`crate::pins`]).
    pub guards: crate::pins::Guards,
}

/// Who shares a server's connection (the entry's `"session"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionMode {
    /// `"shared"` (the default): one connection serves every downstream session.
    #[default]
    Shared,
    /// `"per-client"`: each downstream session that calls one of the server's tools gets its own
    /// connection (for a `command`, its own process), for servers that keep per-client state.
    /// The shared connection still provides the tool list and serves `--stateless` HTTP.
    PerClient,
}

impl ServerConfig {
    /// The largest message taken from this server, in bytes: [`max_message`](Self::max_message),
    /// else [`DEFAULT_MAX_MESSAGE`].
    pub fn message_limit(&self) -> usize {
        self.max_message.unwrap_or(DEFAULT_MAX_MESSAGE)
    }
}

/// The largest `maxMessageMib` accepted (4 GiB).
const MAX_MESSAGE_MIB: f64 = 4096.0;

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP over its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (the child inherits the rest).
        env: BTreeMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
        /// How to log in when the server asks for OAuth (the entry's `"oauth"`), and where the
        /// credentials are kept (the file's `"credentials"`).
        oauth: OAuthSettings,
    },
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio { command, args, .. } => {
                write!(f, "{command}")?;
                for a in args {
                    write!(f, " {a}")?;
                }
                Ok(())
            }
            Transport::Http { url, .. } => write!(f, "{url}"),
        }
    }
}

/// The file name looked for in the current folder.
pub const LOCAL_FILE: &str = "pegboard.json";

/// Find the config file: `explicit` if given, else `./pegboard.json`, else
/// `$XDG_CONFIG_HOME/pegboard/config.json` (or `~/.config/pegboard/config.json`).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, ConfigError> {
    if let Some(path) = explicit {
        if path.is_file() {
            return Ok(path.to_path_buf());
        }
        return Err(ConfigError::NotFound(format!(
            "config file `{}` does not exist (or is not a file)",
            path.display()
        )));
    }
    let candidates = default_candidates(
        std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    );
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let list: Vec<String> = candidates
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect();
    Err(ConfigError::NotFound(format!(
        "no config file found; looked at:\n{}\nwrite one (see `pegboard serve --help`) or pass --config FILE",
        list.join("\n")
    )))
}

fn default_candidates(xdg: Option<PathBuf>, home: Option<PathBuf>) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from(LOCAL_FILE)];
    let base = xdg
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".config")));
    if let Some(base) = base {
        out.push(base.join("pegboard").join("config.json"));
    }
    out
}

/// Read and parse the config file at `path`, expanding `${VAR}` from the process environment,
/// and read the lock of pinned definitions beside it ([`Config::lock_file`]), if there is one.
/// Entries that cannot be used are in [`Config::skipped`].
///
/// # Errors
/// The file cannot be read, or is not a usable config as a whole; the lock exists and cannot be
/// read or is not valid.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let secrets = secret_lookup::SecretLookup::for_text(&text);
    let config = parse(
        &text,
        path,
        &|name| match name.strip_prefix(vars::SECRET_PREFIX) {
            Some(secret) => secrets.get(secret),
            None => std::env::var(name).ok(),
        },
    )?;
    let lock_file = config.lock_file.clone();
    config.with_lock_file(&lock_file)
}

/// [`load`], and with `strict` a skipped entry fails the whole config.
///
/// # Errors
/// As [`load`]; with `strict`, [`ConfigError::Strict`] listing the unusable entries.
pub fn load_strict(path: &Path, strict: bool) -> Result<Config, ConfigError> {
    let config = load(path)?;
    if strict && !config.skipped.is_empty() {
        return Err(ConfigError::Strict(config.skipped));
    }
    Ok(config)
}

/// Parse config text (one pass). `source` is used for messages; `lookup` reads variables.
///
/// # Errors
/// Invalid JSON, a wrongly shaped file, no server section, or a server key written twice.
/// A bad entry is not an error: it is skipped and listed in [`Config::skipped`].
pub fn parse(
    text: &str,
    source: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let raw: RawFile = serde_json::from_str(text).map_err(|e| ConfigError::Json {
        path: source.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    if raw.mcp_servers.is_none() && raw.servers.is_none() {
        return Err(ConfigError::NoServers {
            path: source.to_path_buf(),
        });
    }
    let raw_guards = raw.guards();
    let lock_file = guards::lock_path(source, raw.lock_file.as_deref());
    let mut warnings = Vec::new();
    let access = crate::identity::parse_access(
        raw.clients,
        raw.auth,
        &|s| expand(s, lookup).map_err(|e| e.to_string()),
        &mut |w| warnings.push(format!("{}: {w}", source.display())),
    )
    .map_err(|source_error| ConfigError::Access {
        path: source.to_path_buf(),
        source: source_error,
    })?;
    let mut entries: Vec<(&str, String, RawServer)> = Vec::new();
    let sections = [("mcpServers", raw.mcp_servers), ("servers", raw.servers)];
    for (section, list) in sections {
        for (name, server) in list.map(|m| m.0).unwrap_or_default() {
            if entries.iter().any(|(_, n, _)| *n == name) {
                return Err(ConfigError::InBothSections {
                    path: source.to_path_buf(),
                    name,
                });
            }
            entries.push((section, name, server));
        }
    }

    let defaults = raw_guards
        .over(&crate::pins::Guards::default())
        .map_err(|message| ConfigError::Guards {
            path: source.to_path_buf(),
            message,
        })?;
    let backend = match raw.credentials.as_deref() {
        None => CredentialsBackend::Auto,
        Some(value) => {
            CredentialsBackend::parse(value).map_err(|message| ConfigError::Invalid {
                path: source.to_path_buf(),
                message,
            })?
        }
    };
    let mut servers = Vec::new();
    let mut skipped = Vec::new();
    for (section, name, raw) in entries {
        for field in raw.unknown.keys() {
            warnings.push(format!(
                "{}: server `{name}`: unknown field `{field}` ignored",
                source.display()
            ));
        }
        if raw.disabled {
            continue;
        }
        match build_server(&name, raw, lookup, &mut warnings, &defaults) {
            Ok(mut server) => {
                if let Transport::Http { oauth, .. } = &mut server.transport {
                    oauth.credentials = backend;
                }
                servers.push(server);
            }
            Err(problem) => skipped.push(EntryError {
                path: source.to_path_buf(),
                line: line_of(text, section, &name),
                name,
                problem,
            }),
        }
    }
    let tool_search = match &raw.tool_search {
        None => SearchSettings::default(),
        Some(value) => SearchSettings::from_json(value).map_err(|message| ConfigError::Field {
            path: source.to_path_buf(),
            message,
        })?,
    };
    let code_mode = match &raw.code_mode {
        None => None,
        Some(value) => {
            CodeModeSettings::from_json(value).map_err(|message| ConfigError::Field {
                path: source.to_path_buf(),
                message,
            })?
        }
    };
    let store = match &raw.store {
        None => None,
        Some(value) => Some(
            StoreSettings::from_json(value, &|s| expand(s, lookup).map_err(|e| e.to_string()))
                .map_err(|message| ConfigError::Field {
                    path: source.to_path_buf(),
                    message,
                })?,
        ),
    };
    Ok(Config {
        source: source.to_path_buf(),
        servers,
        warnings,
        skipped,
        tool_search,
        code_mode,
        lock_file,
        access,
        store,
    })
}

/// The 1-based line of `"name":` inside `section`, found by a text search (serde gives no
/// positions for values it parsed well); `None` if the key was written with escapes.
fn line_of(text: &str, section: &str, name: &str) -> Option<usize> {
    let quoted = |s: &str| serde_json::to_string(s).ok();
    let start = text.find(&quoted(section)?)?;
    let key = quoted(name)?;
    let mut from = start;
    while let Some(found) = text.get(from..)?.find(&key) {
        let at = from + found;
        let after = text.get(at + key.len()..)?.trim_start();
        if after.starts_with(':') {
            return Some(text.get(..at)?.matches('\n').count() + 1);
        }
        from = at + key.len();
    }
    None
}

/// A namespace the board accepts, made from a config key or `namespace` field: characters
/// other than letters, digits, `_` and `-` become `_` (`github.com` -> `github_com`,
/// `My Server` -> `My_Server`).
pub fn safe_namespace(raw: &str) -> String {
    raw.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
