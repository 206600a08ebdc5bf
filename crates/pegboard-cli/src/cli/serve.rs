//! `pegboard serve`: its flags and their help.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::{ConfigArgs, parse_addr, parse_wait};

pub(super) const SERVE_HELP: &str = "\
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
is reported and changes nothing. An edit of the config file (`pegboard add`, `remove`, `disable`, or by hand)
is applied the same way on its own (off with --no-follow).";

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
    /// `tools/list` to stdio servers as bytes; see docs/gateway.md).
    #[arg(long)]
    pub no_express: bool,

    /// This replica's name when several run behind a proxy: every HTTP session id starts with `ID.`, so the
    /// proxy can route a session's requests to the replica that holds it (docs/deploy/nginx-replicas.conf).
    /// Letters, digits, `-` and `_`, at most 32.
    #[arg(long, value_name = "ID", env = "PEGBOARD_REPLICA_ID")]
    pub replica_id: Option<pegboard_gateway::http::ReplicaId>,

    /// Keep the fleet's shared state in Redis 7 or Valkey at URL (redis://HOST:PORT/DB, rediss:// for TLS):
    /// a session opened on one replica is served by any other, through restarts (docs/deploy/README.md).
    /// Over the config's `store.url`. Needs a pegboard built with the `store` feature.
    // Parsed in `commands::serve`, not by clap: clap's error would repeat the URL, password and all.
    #[arg(
        long,
        value_name = "URL",
        env = "PEGBOARD_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,

    /// HTTP sessions open at once at most: over this the least recently used idle session is closed for a
    /// new one, which is answered 503 with Retry-After only when every session is busy. Named clients get
    /// an even share each, unless their `maxSessions` says otherwise.
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

    /// Seconds an HTTP gateway drains on SIGTERM before it ends its sessions: /readyz answers 503, a request
    /// opening a new session gets 503 with Retry-After (the balancer retries it on another replica), the
    /// sessions held here are served on, and the calls in flight get this long to finish. 0: end at once.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub drain: u64,

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

    /// Do not follow the config file: by default an edit of it (by `pegboard add`/`remove`/`enable`/
    /// `disable`, or by hand) is applied as SIGHUP applies it, once the file has stayed unchanged for a
    /// moment; a file that does not load is logged and the running servers are kept.
    #[arg(long)]
    pub no_follow: bool,

    /// Cut tool results over N tokens (estimated as UTF-8 bytes / 4) with a notice, for every server whose
    /// entry (or config) sets no `maxResultTokens`; a structuredContent over it becomes an error. Default: no cap.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub max_result_tokens: Option<u64>,

    /// Serve Prometheus metrics (GET /metrics) and the status page (GET /status) on ADDR: PORT, HOST:PORT or
    /// IP:PORT (default host 127.0.0.1; 9464 is the usual port). Beyond loopback it requires --token.
    /// Spans go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, whether or not this is given.
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    pub metrics: Option<SocketAddr>,

    /// Tool search: `on` lists only `search_tools` and `call_tool` (plus pinned tools); `auto` does so above
    /// 40 tools. Overrides the config's `toolSearch` (default: off).
    #[arg(long, value_name = "off|on|auto")]
    pub tool_search: Option<pegboard_gateway::config::ToolSearch>,

    /// Code mode: list `search_tools`, `describe_tools` and `run_code` (the model writes one JavaScript
    /// script that calls many tools, run in a sandbox here). Limits come from the config's `codeMode`
    /// object when it has one (see docs/code-mode.md).
    #[arg(long)]
    pub code_mode: bool,

    /// Serve stdio as this client of the config's `clients`: only the tools, prompts and resources it may see
    /// (default: everything).
    #[arg(long, value_name = "NAME", conflicts_with = "http")]
    pub client: Option<String>,

    /// Write an audit log to PATH (`-`: stderr): one JSON line per request that reaches a server or is
    /// refused (client, method, name, server, outcome, time, sizes). Reopened on SIGHUP, for logrotate.
    #[arg(long, value_name = "PATH", value_parser = parse_audit_target)]
    pub audit_log: Option<pegboard_gateway::audit::AuditTarget>,

    /// Also log call arguments: `hash` (SHA-256 of their canonical JSON) or `full` (the arguments; by hash
    /// above 64 KiB).
    #[arg(long, value_name = "hash|full", requires = "audit_log")]
    pub audit_arguments: Option<AuditArguments>,
}

/// `--audit-arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditArguments {
    /// The SHA-256 (hex) of the arguments' canonical JSON
    Hash,
    /// The arguments themselves
    Full,
}

impl ServeArgs {
    /// `--max-result-tokens`, if given.
    pub fn max_result_tokens(&self) -> Option<usize> {
        self.max_result_tokens
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// What the audit log keeps of call arguments (`--audit-arguments`; off by default).
    pub fn audit_arguments_mode(&self) -> pegboard_gateway::audit::ArgumentsMode {
        use pegboard_gateway::audit::ArgumentsMode;
        match self.audit_arguments {
            None => ArgumentsMode::Off,
            Some(AuditArguments::Hash) => ArgumentsMode::Hash,
            Some(AuditArguments::Full) => ArgumentsMode::Full,
        }
    }
}

/// `--audit-log`: a file path, or `-` for stderr.
fn parse_audit_target(s: &str) -> Result<pegboard_gateway::audit::AuditTarget, String> {
    if s.trim().is_empty() {
        return Err("give a file path, or `-` for stderr".into());
    }
    Ok(pegboard_gateway::audit::AuditTarget::parse(s))
}
