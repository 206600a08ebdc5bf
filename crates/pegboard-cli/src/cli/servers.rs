//! `pegboard add`, `remove`, `enable`, `disable`, `find`, `secret`: their flags and help.

use std::path::PathBuf;

use clap::{Args, Subcommand};

pub(super) const ADD_HELP: &str = "\
Examples:
  pegboard add memory -- npx -y @modelcontextprotocol/server-memory
  pegboard add files --env ROOT=/srv --cwd /srv -- my-files-server --read-only
  pegboard add docs --url https://docs.example.com/mcp --header 'Authorization: Bearer ${DOCS_TOKEN}'
  pegboard add io.github.modelcontextprotocol/server-everything      from the MCP Registry (latest)
  pegboard add io.github.brave/brave-search-mcp-server --version 2.1.3 --env BRAVE_API_KEY=...

A name with a `/` is looked up in the MCP Registry (--registry, PEGBOARD_REGISTRY, the config's
top-level \"registry\", else https://registry.modelcontextprotocol.io) and run as its publisher says:
npm with `npx -y PKG@VERSION`, PyPI with `uvx PKG==VERSION`, OCI with `docker run -i --rm IMAGE`, a
streamable-http remote as a `url` entry. The entry is named after the part after the `/` (without
`server-`/`mcp-server-`, `-mcp`/`-server`), or --name. Required values come from --env NAME=VALUE,
else are asked for on a terminal; secret ones go to the credential store (OS keyring, else a 0600
file) as ENTRY.NAME and the config refers to them as ${secret:ENTRY.NAME}.
The config is created ($XDG_CONFIG_HOME/pegboard/config.json) when there is none. A running
`pegboard serve` picks the change up by itself.";

pub(super) const FIND_HELP: &str = "\
Examples:
  pegboard find github              servers whose name or description contains `github`
  pegboard find memory --json       [{name, title, description, version, transports}]

Exit code 1 when nothing matches.";

pub(super) const SECRET_HELP: &str = "\
Examples:
  pegboard secret set brave-search.BRAVE_API_KEY    asks for the value (no echo), or reads it from stdin
  pegboard secret list                              the names, never the values
  pegboard secret rm brave-search.BRAVE_API_KEY

A config refers to a secret as ${secret:NAME}; it is filled in when the config loads. Secrets live where
OAuth tokens do: the OS keyring when one answers, else $XDG_DATA_HOME/pegboard/secrets.json (0600);
the config's \"credentials\": \"keyring\" | \"file\" forces one.";

/// The config file option these commands share.
#[derive(Debug, Args, Clone)]
pub struct EditConfigArgs {
    /// The config file (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(
        short,
        long,
        value_name = "FILE",
        env = "PEGBOARD_CONFIG",
        global = true
    )]
    pub config: Option<PathBuf>,
}

/// `pegboard add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The entry's name, or a registry server's name (`io.github.owner/server`).
    pub name: String,

    #[command(flatten)]
    pub config: EditConfigArgs,

    /// A streamable HTTP server at this URL (instead of a command).
    #[arg(long, value_name = "URL", conflicts_with_all = ["cwd", "version"])]
    pub url: Option<String>,

    /// A request header for --url, `NAME: VALUE` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,

    /// An environment variable for the server, or a value the registry entry asks for (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,

    /// The folder the command runs in.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// The registry server's version (default: the latest).
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,

    /// The entry's name for a registry server (default: made from its name).
    #[arg(long = "name", value_name = "NAME")]
    pub entry_name: Option<String>,

    /// The MCP Registry to use.
    #[arg(long, value_name = "URL", env = "PEGBOARD_REGISTRY")]
    pub registry: Option<String>,

    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `pegboard remove|enable|disable NAME`.
#[derive(Debug, Args)]
pub struct EntryArgs {
    /// The entry's name in the config.
    pub name: String,

    #[command(flatten)]
    pub config: EditConfigArgs,
}

/// `pegboard find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// What to look for in servers' names and descriptions.
    pub term: String,

    /// Print a JSON array of {name, title, description, version, transports}.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub config: EditConfigArgs,

    /// The MCP Registry to search.
    #[arg(long, value_name = "URL", env = "PEGBOARD_REGISTRY")]
    pub registry: Option<String>,
}

/// `pegboard secret`.
#[derive(Debug, Args)]
pub struct SecretArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: SecretAction,

    #[command(flatten)]
    pub config: EditConfigArgs,
}

/// `pegboard secret set|list|rm`.
#[derive(Debug, Subcommand)]
pub enum SecretAction {
    /// Store a secret (the value is asked for, or read from stdin).
    Set {
        /// Its name, e.g. ENTRY.VAR.
        name: String,
    },
    /// Print the names of the stored secrets (never their values).
    List,
    /// Forget a secret.
    Rm {
        /// Its name.
        name: String,
    },
}
