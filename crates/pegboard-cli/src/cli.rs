//! Command-line definitions (clap).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

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

const SERVE_HELP: &str = "\
Examples:
  pegboard serve                                   stdio, for an MCP client that starts pegboard
  pegboard serve --config ~/mcp.json --http 8700   HTTP on 127.0.0.1:8700/mcp
  PEGBOARD_TOKEN=s3cret pegboard serve --http 0.0.0.0:8700 --allow-host gw.lan
                                                   all interfaces, Bearer token required

Use it from Claude Desktop / Cursor (stdio):
  {\"mcpServers\": {\"pegboard\": {\"command\": \"pegboard\", \"args\": [\"serve\", \"--config\", \"/path/pegboard.json\"]}}}

Config format (key = namespace; tool `search` of `docs` becomes `docs-search`):
  {\"mcpServers\": {
     \"memory\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"], \"env\": {\"MEMORY_FILE_PATH\": \"${HOME}/memory.json\"}},
     \"docs\":  {\"url\": \"http://127.0.0.1:8931/mcp\", \"headers\": {\"Authorization\": \"Bearer ${DOCS_TOKEN}\"}},
     \"units\": {\"command\": \"pegboard-demo-units\", \"prefix\": false, \"allow\": [\"convert\"], \"timeout\": 10},
     \"old\":   {\"command\": \"legacy-server\", \"disabled\": true}
  }}
  PegBoard's extras: namespace (override the key), prefix (false: no prefix), allow / deny (the server's own
  tool names), timeout (seconds per call), maxMessageMib (largest message it may send), disabled. VS Code's {\"servers\": {..., \"type\": \"stdio\"|\"http\"}} works too.
  ${VAR} is read from the environment (error if unset), ${VAR:-default} has a fallback, $${ is a literal ${.
  command and cwd are used as given: relative paths are relative to the folder pegboard runs in.

HTTP guards: with --token (or PEGBOARD_TOKEN) every request needs `Authorization: Bearer <token>` (else 401);
a request whose Origin is not http(s)://localhost, 127.0.0.1 or [::1] (any port) or an --allow-origin
value gets 403; the Host header must be loopback, the bind address, or an --allow-host value.

Servers start in the background: initialize is answered at once, each server joins the board when it is up
(clients get tools/list_changed), and tools/list waits for them during the first --wait seconds. If every
server fails to start, pegboard exits with an error.

Ctrl-C or SIGTERM (or the client closing stdin) shuts every server down cleanly.
SIGHUP reloads the config file: added servers start, removed ones stop, changed ones restart with their new
settings, unchanged ones keep running untouched; clients get tools/list_changed. A config that does not load
is reported and changes nothing.";

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

const DEMO_HELP: &str = "\
Examples:
  pegboard demo
  pegboard demo --config examples/demo.json

Starts the three bundled demo servers (notes, units, docs: real MCP servers, run as child processes
of this binary), prints the merged board as `pegboard tools` would, and makes one sample call.
To serve the same board to an MCP client: pegboard serve --config examples/demo.json";

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
    Serve(ServeArgs),
    /// Connect every configured server and print the merged tool list.
    #[command(after_help = TOOLS_HELP)]
    Tools(ToolsArgs),
    /// Find the tools that fit a request (exact names first), best first; exits 1 when none matches.
    Search(SearchArgs),
    /// Call one tool by its board name and print the result.
    #[command(after_help = CALL_HELP)]
    Call(CallArgs),
    /// Show the board with the bundled demo servers and make a sample call.
    #[command(after_help = DEMO_HELP)]
    Demo(DemoArgs),
    /// Serve one bundled demo server (notes, units, docs; test with the `testing` feature) over stdio: what `demo` starts.
    #[command(hide = true)]
    DemoServer(DemoServerArgs),
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

/// `pegboard serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: ConfigArgs,

    /// Serve streamable HTTP at ADDR/mcp instead of stdio. ADDR: PORT, HOST:PORT or IP:PORT (default host 127.0.0.1).
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    pub http: Option<SocketAddr>,

    /// Require `Authorization: Bearer TOKEN` on every HTTP request.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "PEGBOARD_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Also accept requests with this Origin (e.g. https://app.example.com, http://host:*). Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,

    /// Also accept this Host header (a name the gateway is reached under). Repeatable.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,

    /// HTTP without sessions (JSON responses, no server-initiated notifications): for several replicas
    /// behind a load balancer.
    #[arg(long, requires = "http")]
    pub stateless: bool,

    /// Serve every request through rmcp, the express lane off (it carries plain `tools/call` and
    /// `tools/list` to stdio servers as bytes; see the README).
    #[arg(long)]
    pub no_express: bool,

    /// This replica's name when several run behind a proxy: every HTTP session id starts with `ID.`, so the
    /// proxy can route a session's requests to the replica that holds it (docs/deploy/nginx-replicas.conf).
    /// Letters, digits, `-` and `_`, at most 32.
    #[arg(long, value_name = "ID", env = "PEGBOARD_REPLICA_ID")]
    pub replica_id: Option<pegboard_gateway::http::ReplicaId>,

    /// HTTP sessions open at once at most; a new one over this is answered 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: u64,

    /// Seconds an HTTP session may stay idle before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub session_idle: u64,

    /// Seconds an HTTP client may take to send a request's headers before its connection is closed
    /// (slowloris defence).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,

    /// Seconds an HTTP request body may go without sending anything before the request fails.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout: u64,

    /// Seconds after startup during which tools/list, and calls of tools not on the board yet, wait until
    /// every server has started or failed (servers join the board in the background as they come up, and
    /// clients get tools/list_changed). 0: never wait. The default covers most servers' start and stays far
    /// inside MCP clients' request timeouts.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_wait)]
    pub wait: Duration,

    /// Do not restart a server that exits (by default it is restarted with backoff and its tools come back;
    /// with this flag, a SIGHUP reload starts it again).
    #[arg(long)]
    pub no_restart: bool,

    /// Tool search: `on` lists only `search_tools` and `call_tool` (plus pinned tools); `auto` does so above
    /// 40 tools. Overrides the config's `toolSearch` (default: off).
    #[arg(long, value_name = "off|on|auto")]
    pub tool_search: Option<pegboard_gateway::search_mode::ToolSearch>,
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
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn addresses_default_to_loopback() {
        assert_eq!(
            parse_addr("8700"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 8700)))
        );
        assert_eq!(
            parse_addr(":8700"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 8700)))
        );
        assert_eq!(
            parse_addr("localhost:1"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 1)))
        );
        assert_eq!(
            parse_addr("0.0.0.0:2"),
            Ok(SocketAddr::from(([0, 0, 0, 0], 2)))
        );
        assert!(parse_addr("[::1]:3").is_ok());
        assert!(parse_addr("nope").is_err());
    }

    #[test]
    fn call_takes_tool_and_arguments() -> Result<(), clap::Error> {
        let cli = Cli::try_parse_from(["pegboard", "call", "a-b", "{}", "--json", "-c", "x.json"])?;
        let Command::Call(args) = cli.command else {
            panic!("call expected")
        };
        assert_eq!(args.tool, "a-b");
        assert_eq!(args.arguments.as_deref(), Some("{}"));
        assert!(args.json);
        assert_eq!(args.config.config, Some(PathBuf::from("x.json")));
        Ok(())
    }

    #[test]
    fn wait_defaults_to_the_engines_grace_period_and_takes_zero() -> Result<(), clap::Error> {
        let serve = |extra: &[&str]| -> Result<ServeArgs, clap::Error> {
            let cli = Cli::try_parse_from([&["pegboard", "serve"], extra].concat())?;
            let Command::Serve(args) = cli.command else {
                panic!("serve expected")
            };
            Ok(args)
        };
        assert_eq!(serve(&[])?.wait, pegboard_gateway::startup::DEFAULT_WAIT);
        assert_eq!(serve(&["--wait", "0"])?.wait, Duration::ZERO);
        assert_eq!(serve(&["--wait", "2.5"])?.wait, Duration::from_millis(2500));
        assert!(serve(&["--wait", "-1"]).is_err());
        Ok(())
    }
}
