//! What can be wrong with a config: the whole file ([`ConfigError`]), or one entry
//! ([`EntryError`]), which is skipped while the rest is served (unless `--strict`).

use std::path::PathBuf;

/// A config that cannot be used at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No file at the given path, or none at the usual places.
    #[error("{0}")]
    NotFound(String),
    /// Not JSON, or JSON of the wrong shape (a server written twice, a string where a list belongs).
    #[error("{}:{line}:{column}: invalid config JSON: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's description.
        message: String,
    },
    /// Neither `mcpServers` nor `servers`.
    #[error(
        "{}: no `mcpServers` object (Claude Desktop, Cursor) or `servers` object (VS Code) in this file",
        path.display()
    )]
    NoServers {
        /// The file.
        path: PathBuf,
    },
    /// A top-level setting with a value pegboard does not accept (`"credentials"`).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// The same server key under both sections.
    #[error("{}: server `{name}` appears in both `mcpServers` and `servers`; keep one", path.display())]
    InBothSections {
        /// The file.
        path: PathBuf,
        /// The key.
        name: String,
    },
    /// A setting beside the server sections is malformed (`toolSearch`, ...).
    #[error("{}: {message}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A guard field at the top of the file (`onChange`, `onNew`, `maxResultTokens`) is wrong.
    #[error("{}: {message}", path.display())]
    Guards {
        /// The file.
        path: PathBuf,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// The lock file beside the config cannot be used.
    #[error(transparent)]
    Lock(#[from] crate::pins::LockError),
    /// The `clients` or `auth` section cannot be used (access control is never half applied).
    #[error("{}: {source}", path.display())]
    Access {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the client.
        source: crate::identity::AccessConfigError,
    },
    /// `--strict`: some entries could not be used.
    #[error("{} (--strict: fix them, or run without --strict to serve the others)", list(.0))]
    Strict(Vec<EntryError>),
}

fn list(entries: &[EntryError]) -> String {
    entries
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// One server entry that cannot be used; it is skipped and the others are served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: server `{name}` skipped: {problem}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct EntryError {
    /// The config file.
    pub path: PathBuf,
    /// The entry's key.
    pub name: String,
    /// The line its key is on (1-based), when it could be found.
    pub line: Option<usize>,
    /// What is wrong, and what to do.
    pub problem: EntryProblem,
}

/// What is wrong with one entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// `"type": "sse"`, the transport MCP replaced.
    #[error(
        "`\"type\": \"sse\"` (the old HTTP+SSE transport) is not supported; use the server's streamable \
         HTTP endpoint with `\"type\": \"http\"` (often the same URL ending in `/mcp` instead of `/sse`)"
    )]
    Sse,
    /// A `${...}` in a field could not be filled.
    #[error("in `{field}`: {problem}")]
    Variable {
        /// The field, e.g. `env.TOKEN`.
        field: String,
        /// What is wrong with it.
        problem: VariableProblem,
    },
    /// Anything else (no command or url, both, a bad timeout...).
    #[error("{0}")]
    Invalid(String),
}

/// A `${...}` that cannot be filled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VariableProblem {
    /// `${VAR}` with `VAR` unset.
    #[error(
        "environment variable `{0}` is not set (used as `${{{0}}}`); set it, or write `${{{0}:-default}}`"
    )]
    Unset(String),
    /// VS Code's `${input:...}` and similar editor variables.
    #[error(
        "`${{{0}}}` is an editor variable (VS Code `${{input:..}}` and the like), which pegboard cannot fill; \
         use an environment variable `${{NAME}}` instead"
    )]
    Editor(String),
    /// `${secret:NAME}` with no such secret stored.
    #[error(
        "secret `{0}` is not in the credential store (used as `${{secret:{0}}}`); store it with \
         `pegboard secret set {0}`"
    )]
    Secret(String),
    /// `${` without `}`.
    #[error("unclosed `${{` in `{0}` (write `$${{` for a literal `${{`)")]
    Unclosed(String),
    /// `${a b}`.
    #[error("`${{{0}}}` is not a variable name (letters, digits and `_`)")]
    NotAName(String),
}
