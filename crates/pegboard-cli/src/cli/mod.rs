//! Command-line definitions (clap).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod clients;
mod serve;
mod servers;

use clients::{CLIENTS_HELP, CONNECT_HELP, DISCONNECT_HELP, IMPORT_HELP};
pub use clients::{ClientsArgs, ConnectArgs, DisconnectArgs, ImportArgs, Scope};
use serve::SERVE_HELP;
pub use serve::ServeArgs;
use servers::{ADD_HELP, FIND_HELP, SECRET_HELP};
pub use servers::{AddArgs, EditConfigArgs, EntryArgs, FindArgs, SecretAction, SecretArgs};

const MAIN_HELP: &str = "\
Examples:
  pegboard demo                                  see it work with the bundled demo servers
  pegboard tools                                 list the merged tools of ./pegboard.json
  pegboard call notes-search '{\"query\":\"rust\"}'  call one tool by its board name
  pegboard serve                                 be ONE MCP server (stdio) for all of them
  pegboard serve --http 127.0.0.1:8700           ... over streamable HTTP at /mcp

Config: the `mcpServers` JSON of Claude Desktop / Cursor, or VS Code's `servers` JSON, unchanged.
Looked for at --config, else ./pegboard.json, else $XDG_CONFIG_HOME/pegboard/config.json
(~/.config/pegboard/config.json). See `pegboard serve --help` for the format.

Logs go to stderr: -v, -vv, or RUST_LOG (e.g. RUST_LOG=pegboard=debug,rmcp=info).";

const TOOLS_HELP: &str = "\
Examples:
  pegboard tools                          a table: name, namespace, description
  pegboard tools --format json            the MCP tool objects (as tools/list returns them)
  pegboard tools --format openai > t.json tools for the OpenAI API (also: anthropic, gemini)";

const CALL_HELP: &str = "\
Examples:
  pegboard call units-convert '{\"value\": 10, \"from\": \"km\", \"to\": \"mi\"}'
  echo '{\"query\": \"rust\"}' | pegboard call notes-search -
  pegboard call notes-search '{\"query\": \"rust\"}' --json     the whole CallToolResult

Prints the text content of the result. Exit code 1 when the tool reports an error (isError) or the call
fails; the error goes to stderr. An unknown name lists the closest names on the board.";

const PIN_HELP: &str = "\
Examples:
  pegboard pin                       write pegboard.lock beside the config (when there is none), or
                                     say what differs from it (exit code 1 when something does)
  pegboard pin --diff                a unified diff of each changed, new or gone definition
  pegboard pin --accept notes-add    pin the tool as the server offers it now (board name)
  pegboard pin --accept notes        ... every tool and prompt of server `notes`
  pegboard pin --accept --all        ... of every server

The lock holds, per server, per tool and prompt, the SHA-256 of the definition the model sees (name,
title, description, inputSchema, outputSchema, annotations; prompts: description and arguments) and the
definition itself. With a lock, `pegboard serve` compares every listing with it: a changed tool is hidden
(config `\"onChange\": \"hide\"`, the default) or listed with a warning (`\"warn\"`); a new one is listed
(`\"onNew\": \"allow\"`, the default) or hidden (`\"hide\"`). After accepting, reload (SIGHUP) or restart.";

const LOGIN_HELP: &str = "\
Examples:
  pegboard login linear                 opens the browser; the URL is also printed on stderr
  pegboard login linear --no-browser    only prints the URL (open it on any machine's browser
                                        that can reach this one's 127.0.0.1 redirect)

The login listens on 127.0.0.1 for the browser's redirect (port 33418, or the entry's
oauth.redirectPort; another free one when that is busy). Credentials go to the OS keyring when one
answers, else to $XDG_DATA_HOME/pegboard/credentials.json (0600); \"credentials\": \"keyring\" | \"file\"
in the config forces one. A running `pegboard serve` picks the server up when the login completes.
Exit code 0 when logged in, 1 with a one-line reason otherwise.";

const DEMO_HELP: &str = "\
Examples:
  pegboard demo
  pegboard demo --config examples/demo.json

Starts the three bundled demo servers (notes, units, docs: real MCP servers, run as child processes
of this binary), prints the merged board as `pegboard tools` would, and makes one sample call.
To serve the same board to an MCP client: pegboard serve --config examples/demo.json";

const STATUS_HELP: &str = "\
Examples:
  pegboard status                                   the gateway started with --metrics 9464 (the default)
  pegboard status --metrics-url http://gw.lan:9464  another one (needs its token: --token or PEGBOARD_TOKEN)
  pegboard status --json                            the report as JSON (what GET /status answers)

Reads GET /status from the gateway's --metrics listener. Exit code 1 when it cannot be read.";

/// One MCP endpoint for all the servers of your mcpServers config.
#[derive(Debug, Parser)]
#[command(name = "pegboard", version, about, long_about = None, after_help = MAIN_HELP)]
pub struct Cli {
    /// More logs on stderr (-v: debug for pegboard and servers' stderr, -vv: debug for everything).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// No progress lines on stderr (errors are still logged).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve all configured servers' tools as ONE MCP server (stdio, or streamable HTTP with --http).
    #[command(after_help = SERVE_HELP)]
    Serve(Box<ServeArgs>),
    /// Connect every configured server and print the merged tool list.
    #[command(after_help = TOOLS_HELP)]
    Tools(ToolsArgs),
    /// Find the tools that fit a request (exact names first), best first; exits 1 when none matches.
    Search(SearchArgs),
    /// Call one tool by its board name and print the result.
    #[command(after_help = CALL_HELP)]
    Call(CallArgs),
    /// Pin the servers' tool and prompt definitions in pegboard.lock; show what changed since.
    #[command(after_help = PIN_HELP)]
    Pin(PinArgs),
    /// Log in to a `url` server that asks for OAuth; the credentials are stored and refreshed.
    #[command(after_help = LOGIN_HELP)]
    Login(LoginArgs),
    /// Forget a server's stored tokens (revoked first where the server can revoke them).
    Logout(LogoutArgs),
    /// List each `url` server: logged in (scopes, expiry), needs login, or no auth needed.
    Auth(AuthArgs),
    /// Show the board with the bundled demo servers and make a sample call.
    #[command(after_help = DEMO_HELP)]
    Demo(DemoArgs),
    /// Show a running gateway's servers: state, tools, restarts, calls, errors and latency of the last 5 minutes.
    #[command(after_help = STATUS_HELP)]
    Status(StatusArgs),
    // Managing the servers of the config (docs/servers.md).
    /// Add a server to the config: a command, a URL, or a server of the MCP Registry.
    #[command(after_help = ADD_HELP)]
    Add(Box<AddArgs>),
    /// Take a server out of the config.
    Remove(EntryArgs),
    /// Turn a server of the config back on (takes away its `"disabled": true`).
    Enable(EntryArgs),
    /// Turn a server of the config off without removing it (`"disabled": true`).
    Disable(EntryArgs),
    /// Search the MCP Registry.
    #[command(after_help = FIND_HELP)]
    Find(FindArgs),
    /// Store, list and forget the secrets a config refers to as ${secret:NAME}.
    #[command(after_help = SECRET_HELP)]
    Secret(SecretArgs),
    // Clients (issue 32): their files, importing their servers, connecting them to pegboard.
    /// List the MCP clients pegboard knows: config file, found, servers, connected.
    #[command(after_help = CLIENTS_HELP)]
    Clients(ClientsArgs),
    /// Import the servers of your clients (or of a file in a client's format) into pegboard's config.
    #[command(after_help = IMPORT_HELP)]
    Import(ImportArgs),
    /// Write the `pegboard` entry into a client's config file (stdio, or --http URL).
    #[command(after_help = CONNECT_HELP)]
    Connect(ConnectArgs),
    /// Remove the `pegboard` entry from a client's file and put back what `connect --move` took out.
    #[command(after_help = DISCONNECT_HELP)]
    Disconnect(DisconnectArgs),
    /// Serve one bundled demo server (notes, units, docs; test with the `testing` feature) over stdio: what `demo` starts.
    #[command(hide = true)]
    DemoServer(DemoServerArgs),
}

/// `pegboard status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The gateway's --metrics listener.
    #[arg(long, value_name = "URL", default_value_t = pegboard_gateway::status::default_url())]
    pub metrics_url: String,

    /// The gateway's bearer token (needed when its --metrics listener is not on loopback).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PEGBOARD_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `pegboard demo-server NAME [FLAGS]`.
#[derive(Debug, Args)]
pub struct DemoServerArgs {
    /// notes, units, docs or test.
    pub name: String,
    /// The server's own flags (`--http ADDR`; for `test`: `--extra-tools N`, `--page-size N`, `--hang-list`, `--huge-tool`, `--huge-list BYTES`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Where the config is and how long servers may take to start.
#[derive(Debug, Args, Clone)]
pub struct ConfigArgs {
    /// The config file (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,

    /// Seconds each server may take to start and answer the MCP handshake.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
    pub startup_timeout: Duration,

    /// Refuse a config with any unusable entry (an unsupported `type`, an unset `${VAR}`...)
    /// instead of skipping that entry and serving the others. SIGHUP reloads honour it too.
    #[arg(long)]
    pub strict: bool,

    /// Largest message (MiB) a server may send, unless its entry sets `maxMessageMib`; a longer tool
    /// result or tools/list page fails at once with an error naming the server and the limit.
    #[arg(long, value_name = "MIB", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_message_mib: u64,
}

impl ConfigArgs {
    /// `--max-message-mib` in bytes.
    pub fn max_message(&self) -> usize {
        usize::try_from(self.max_message_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }
}

/// Output formats of `pegboard tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// name, namespace, first line of the description
    Table,
    /// MCP tool objects
    Json,
    /// OpenAI function tools
    Openai,
    /// Anthropic tools
    Anthropic,
    /// Gemini function declarations
    Gemini,
}

/// `pegboard tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub config: ConfigArgs,

    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Mark tools `defer_loading: true` (anthropic and openai formats), for the providers' own tool search.
    #[arg(long)]
    pub defer_loading: bool,
}

/// `pegboard search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub config: ConfigArgs,

    /// How many tools to show (clamped to 1..=100).
    #[arg(short = 'k', long, value_name = "K", default_value_t = 5)]
    pub limit: usize,

    /// Print JSON: `{"tools": [{name, description, inputSchema, namespace, score}]}`.
    #[arg(long)]
    pub json: bool,

    /// Search as this client of the config's `clients` sees the board: only the tools it may see.
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,

    /// What the tool should do, or its name (words are joined with spaces).
    #[arg(required = true, value_name = "QUERY")]
    pub query: Vec<String>,
}

/// `pegboard call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's board name (as `pegboard tools` shows it), e.g. notes-search.
    pub tool: String,

    /// The arguments: a JSON object; `-` reads it from stdin. Default: no arguments.
    pub arguments: Option<String>,

    #[command(flatten)]
    pub config: ConfigArgs,

    /// Print the whole CallToolResult as JSON.
    #[arg(long)]
    pub json: bool,

    /// Seconds the call may take (default: the server's `timeout`, else the board's).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<Duration>,
}

/// `pegboard pin`.
#[derive(Debug, Args)]
pub struct PinArgs {
    #[command(flatten)]
    pub config: ConfigArgs,

    /// The lock file (default: the config's `lockFile`, else pegboard.lock beside the config).
    #[arg(long, value_name = "PATH")]
    pub lock: Option<PathBuf>,

    /// Print a unified diff of each definition that differs from its pin.
    #[arg(long, conflicts_with = "accept")]
    pub diff: bool,

    /// Pin as offered now: a tool or prompt (board name), a server (config entry), or with --all everything.
    #[arg(long, value_name = "NAME|SERVER", num_args = 0..=1)]
    pub accept: Option<Option<String>>,

    /// With --accept: every server.
    #[arg(long, conflicts_with = "diff")]
    pub all: bool,
}

/// `pegboard login NAME`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server's key in the config.
    pub name: String,

    /// The config file (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,

    /// Only print the authorization URL; do not open a browser.
    #[arg(long)]
    pub no_browser: bool,

    /// Seconds to wait for the browser to come back.
    #[arg(long, value_name = "SECS", default_value = "300", value_parser = parse_secs)]
    pub timeout: Duration,

    /// Keep the credentials in the fleet's store at URL (redis://HOST:PORT/DB, rediss:// for TLS),
    /// encrypted with the key in PEGBOARD_STORE_KEY: one login for every replica (as
    /// `"credentials": "store"`). Over the config's `store.url`. Needs the `store` feature.
    #[arg(
        long,
        value_name = "URL",
        env = "PEGBOARD_STORE",
        hide_env_values = true
    )]
    // Parsed in `commands::login`, not by clap: clap's error would repeat the URL, password
    // and all.
    pub store: Option<String>,
}

/// `pegboard logout NAME`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server's key in the config.
    pub name: String,

    /// The config file (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,

    /// Forget the credentials kept in the fleet's store at URL (as `login --store`).
    #[arg(
        long,
        value_name = "URL",
        env = "PEGBOARD_STORE",
        hide_env_values = true
    )]
    // Parsed in `commands::login`, not by clap: clap's error would repeat the URL, password
    // and all.
    pub store: Option<String>,
}

/// `pegboard auth`.
#[derive(Debug, Args)]
pub struct AuthArgs {
    /// The config file (default: ./pegboard.json, then $XDG_CONFIG_HOME/pegboard/config.json).
    #[arg(short, long, value_name = "FILE", env = "PEGBOARD_CONFIG")]
    pub config: Option<PathBuf>,

    /// The fleet's store, for servers whose credentials are kept there (`"credentials":
    /// "store"`). Over the config's `store.url`.
    #[arg(
        long,
        value_name = "URL",
        env = "PEGBOARD_STORE",
        hide_env_values = true
    )]
    // Parsed in `commands::login`, not by clap: clap's error would repeat the URL, password
    // and all.
    pub store: Option<String>,
}

/// `pegboard demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Use this config instead of the bundled demo servers.
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "`{s}`: give a number of seconds between 0 and 86400"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--wait`: like [`parse_secs`], and 0 is allowed.
fn parse_wait(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        _ => parse_secs(s),
    }
}

/// `8700` → 127.0.0.1:8700; `localhost:8700` → 127.0.0.1:8700; `0.0.0.0:8700`, `[::1]:8700` as given.
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = s
        .strip_prefix("localhost:")
        .and_then(|p| p.parse::<u16>().ok())
    {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = s.strip_prefix(':').and_then(|p| p.parse::<u16>().ok()) {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    Err(format!(
        "`{s}` is not an address; use PORT, 127.0.0.1:PORT, 0.0.0.0:PORT (all interfaces) or [::1]:PORT"
    ))
}

#[cfg(test)]
mod tests;
