//! The arguments of `clients`, `import`, `connect` and `disconnect`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

pub const CLIENTS_HELP: &str = "\
Examples:
  pegboard clients           one row per known client: name, config file, found, servers, connected
  pegboard clients --json    the same as a JSON array

Clients: claude-desktop, claude-code, cursor, vscode, windsurf, zed, codex, gemini, goose, lmstudio,
continue, opencode. Their files follow $HOME, $XDG_CONFIG_HOME, $CLAUDE_CONFIG_DIR and $CODEX_HOME.";

pub const IMPORT_HELP: &str = "\
Examples:
  pegboard import cursor claude-code      their servers into pegboard's config
  pegboard import --all --dry-run         what importing every client's servers would do
  pegboard import --from ./mcp.json       a file in any client's format (guessed from its keys)
  pegboard import vscode --from .vscode/mcp.json   ... read as that client's shape

One line per server: added, already there (same as NAME), added as NAME-CLIENT (its name was taken
by another server), or not importable and why. Exit code 0 when every server is in pegboard's config,
1 when any could not be imported. The config is created ($XDG_CONFIG_HOME/pegboard/config.json) when
there is none.";

pub const CONNECT_HELP: &str = "\
Examples:
  pegboard connect cursor                    Cursor starts `pegboard serve --config ABS_CONFIG`
  pegboard connect claude-code --move        ... after moving Claude Code's servers behind pegboard
  pegboard connect vscode --scope project    .vscode/mcp.json of the current folder
  pegboard connect codex --http http://127.0.0.1:8700/mcp --token-env PB_TOKEN
  pegboard connect cursor --client cursor    serve as the config's client `cursor` (its own view)

Writes the entry `pegboard` in the client's own shape (an older `pegboard` entry is replaced). The
file keeps everything else (comments, key order, layout); it is written atomically, with a backup
FILE.pegboard-backup before pegboard's first change. `pegboard disconnect CLIENT` undoes it.";

pub const DISCONNECT_HELP: &str = "\
Examples:
  pegboard disconnect cursor
  pegboard disconnect vscode --scope project

Removes the `pegboard` entry and puts back the servers `connect --move` took out (pegboard's config
keeps them too).";

/// Which of a client's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The user's file (every project).
    User,
    /// The current folder's project file (claude-code, cursor, vscode, codex, gemini, zed, opencode).
    Project,
}

/// `pegboard clients`.
#[derive(Debug, Args)]
pub struct ClientsArgs {
    /// pegboard's config, taken as by every command (`clients` itself reads only the clients' files).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,

    /// An array of objects (name, path, found, servers, connected) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `pegboard import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The clients to import from (see `pegboard clients`).
    #[arg(value_name = "CLIENT")]
    pub clients: Vec<String>,

    /// Every known client whose file exists.
    #[arg(long, conflicts_with = "clients")]
    pub all: bool,

    /// Read this file instead of the client's own (in that client's shape, or guessed).
    #[arg(long, value_name = "FILE", conflicts_with = "all")]
    pub from: Option<PathBuf>,

    /// Say what would be imported; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// pegboard's config (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,
}

/// `pegboard connect`.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// The client (see `pegboard clients`).
    pub client: String,

    /// The user's file, or the current folder's project file.
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,

    /// Point the client at a running `pegboard serve --http` at this URL instead of starting pegboard.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,

    /// The environment variable holding the gateway's bearer token (written as the client's own reference to it).
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,

    /// Serve as this client of the config's `clients` (stdio: `serve --client NAME`).
    #[arg(long = "client", value_name = "NAME", conflicts_with = "http")]
    pub as_client: Option<String>,

    /// Import the client's servers into pegboard's config first, then take them out of the client's file.
    #[arg(long = "move")]
    pub move_servers: bool,

    /// pegboard's config (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json; created when there is none).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,
}

/// `pegboard disconnect`.
#[derive(Debug, Args)]
pub struct DisconnectArgs {
    /// The client.
    pub client: String,

    /// The user's file, or the current folder's project file.
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,

    /// pegboard's config (where `connect --move` kept its record).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,
}
