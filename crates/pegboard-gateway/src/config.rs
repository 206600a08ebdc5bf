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
//! per call), `disabled` (skip the entry). Other unknown fields are ignored with a warning.
//!
//! `${VAR}` in `command`, `args`, `env`, `cwd`, `url` and `headers` is replaced by the environment variable
//! `VAR` (an error if it is unset); `${VAR:-fallback}` uses `fallback` when `VAR` is unset or empty; `$${` is a
//! literal `${`. `command` and `cwd` are used as given, as Claude Desktop does: a relative path is relative
//! to the folder pegboard runs in (a bare name like `npx` is looked up on `PATH`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;

/// A whole config file, parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from (for messages).
    pub source: PathBuf,
    /// The enabled servers, in file order. Disabled entries are dropped.
    pub servers: Vec<ServerConfig>,
    /// Non-fatal problems (unknown fields, ignored settings), for the caller to log.
    pub warnings: Vec<String>,
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
}

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

/// Fields a server entry may have; anything else draws a warning.
const KNOWN_FIELDS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "type",
    "namespace",
    "prefix",
    "allow",
    "deny",
    "timeout",
    "disabled",
];

#[derive(Deserialize)]
struct RawFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<indexmap_like::OrderedMap<RawServer>>,
    servers: Option<indexmap_like::OrderedMap<RawServer>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawServer {
    command: Option<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    headers: BTreeMap<String, String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    namespace: Option<String>,
    prefix: Option<bool>,
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    timeout: Option<f64>,
    disabled: bool,
}

/// A JSON object that keeps the file's key order (serde_json's `Map` sorts without `preserve_order`).
mod indexmap_like {
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    pub struct OrderedMap<V>(pub Vec<(String, V)>);

    impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V2<V>(PhantomData<V>);
            impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
                type Value = OrderedMap<V>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object of server entries")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut out = Vec::new();
                    while let Some((k, v)) = map.next_entry::<String, V>()? {
                        out.push((k, v));
                    }
                    Ok(OrderedMap(out))
                }
            }
            d.deserialize_map(V2(PhantomData))
        }
    }
}

/// Find the config file: `explicit` if given, else `./pegboard.json`, else
/// `$XDG_CONFIG_HOME/pegboard/config.json` (or `~/.config/pegboard/config.json`).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        if path.is_file() {
            return Ok(path.to_path_buf());
        }
        bail!(
            "config file `{}` does not exist (or is not a file)",
            path.display()
        );
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
    bail!(
        "no config file found; looked at:\n{}\nwrite one (see `pegboard serve --help`) or pass --config FILE",
        list.join("\n")
    )
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

/// Read and parse the config file at `path`, expanding `${VAR}` from the process environment.
pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file `{}`", path.display()))?;
    parse(&text, path, &|name| std::env::var(name).ok())
}

/// Parse config text. `source` is used for messages and to resolve relative paths; `lookup` reads variables.
pub fn parse(text: &str, source: &Path, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
    let raw: RawFile = serde_json::from_str(text).map_err(|e| json_error(source, &e))?;
    // Second look, untyped, only to name the fields we do not know (the typed pass silently skips them).
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(source, &e))?;
    let mut warnings = Vec::new();

    let mut entries: Vec<(&str, String, RawServer)> = Vec::new();
    for (key, list) in [("mcpServers", raw.mcp_servers), ("servers", raw.servers)] {
        for (name, server) in list.map(|m| m.0).unwrap_or_default() {
            if entries.iter().any(|(_, n, _)| *n == name) {
                bail!(
                    "{}: server `{name}` appears in both `mcpServers` and `servers`; keep one",
                    source.display()
                );
            }
            entries.push((key, name, server));
        }
    }
    if value.get("mcpServers").is_none() && value.get("servers").is_none() {
        bail!(
            "{}: no `mcpServers` object (Claude Desktop, Cursor) or `servers` object (VS Code) in this file",
            source.display()
        );
    }

    let mut servers = Vec::new();
    for (key, name, raw) in entries {
        if let Some(fields) = value
            .get(key)
            .and_then(|s| s.get(&name))
            .and_then(Value::as_object)
        {
            for field in fields.keys() {
                if !KNOWN_FIELDS.contains(&field.as_str()) {
                    warnings.push(format!(
                        "{}: server `{name}`: unknown field `{field}` ignored",
                        source.display()
                    ));
                }
            }
        }
        if raw.disabled {
            continue;
        }
        let server = build_server(&name, raw, lookup, &mut warnings)
            .with_context(|| format!("{}: server `{name}`", source.display()))?;
        servers.push(server);
    }
    Ok(Config {
        source: source.to_path_buf(),
        servers,
        warnings,
    })
}

fn json_error(source: &Path, e: &serde_json::Error) -> anyhow::Error {
    // serde_json's Display already ends with "at line L column C"; say it in the usual file:line:col form too.
    anyhow::anyhow!(
        "{}:{}:{}: invalid config JSON: {e}",
        source.display(),
        e.line(),
        e.column()
    )
}

fn build_server(
    name: &str,
    raw: RawServer,
    lookup: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Result<ServerConfig> {
    let ex = |s: &str| expand(s, lookup);
    let kind = raw.kind.as_deref().map(str::to_ascii_lowercase);
    let transport = match (kind.as_deref(), raw.command, raw.url) {
        (Some("sse"), _, _) => bail!(
            "`\"type\": \"sse\"` (the old HTTP+SSE transport) is not supported; use the server's streamable \
             HTTP endpoint with `\"type\": \"http\"`"
        ),
        (Some(k), _, _)
            if !matches!(k, "stdio" | "http" | "streamable-http" | "streamablehttp") =>
        {
            bail!("unknown `type` `{k}`; use \"stdio\" (with `command`) or \"http\" (with `url`)")
        }
        (_, Some(_), Some(_)) => bail!("has both `command` and `url`; keep one"),
        (Some("stdio"), None, _) => bail!("`\"type\": \"stdio\"` needs a `command`"),
        (Some(k), Some(_), None) if k != "stdio" => {
            bail!("`\"type\": \"{k}\"` needs a `url`, not a `command`")
        }
        (_, Some(command), None) => {
            let command = ex(&command).context("in `command`")?;
            if command.trim().is_empty() {
                bail!("`command` is empty");
            }
            if !raw.headers.is_empty() {
                warnings.push(format!(
                    "server `{name}`: `headers` only apply to `url` servers; ignored"
                ));
            }
            let args = raw
                .args
                .iter()
                .map(|a| ex(a))
                .collect::<Result<Vec<_>>>()
                .context("in `args`")?;
            let mut env = BTreeMap::new();
            for (k, v) in &raw.env {
                env.insert(k.clone(), ex(v).with_context(|| format!("in `env.{k}`"))?);
            }
            let cwd = match raw.cwd {
                Some(c) => Some(PathBuf::from(ex(&c).context("in `cwd`")?)),
                None => None,
            };
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (_, None, Some(url)) => {
            let url = ex(&url).context("in `url`")?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("`url` `{url}` must start with http:// or https://");
            }
            for field in ["args", "env", "cwd"] {
                let set = match field {
                    "args" => !raw.args.is_empty(),
                    "env" => !raw.env.is_empty(),
                    _ => raw.cwd.is_some(),
                };
                if set {
                    warnings.push(format!(
                        "server `{name}`: `{field}` only applies to `command` servers; ignored"
                    ));
                }
            }
            let mut headers = BTreeMap::new();
            for (k, v) in &raw.headers {
                headers.insert(
                    k.clone(),
                    ex(v).with_context(|| format!("in `headers.{k}`"))?,
                );
            }
            Transport::Http { url, headers }
        }
        (_, None, None) => bail!(
            "has neither `command` (a program to start) nor `url` (a streamable HTTP endpoint); add one, or \
             set `\"disabled\": true`"
        ),
    };

    let namespace = if raw.prefix == Some(false) {
        if raw.namespace.is_some() {
            warnings.push(format!(
                "server `{name}`: `namespace` is ignored because `prefix` is false"
            ));
        }
        None
    } else {
        let ns = raw.namespace.unwrap_or_else(|| name.to_string());
        if ns.trim().is_empty() {
            bail!("`namespace` is empty; give a name or set `\"prefix\": false`");
        }
        Some(ns)
    };

    let timeout = match raw.timeout {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => bail!("`timeout` must be a number of seconds between 0 and 86400 (got {t})"),
    };

    Ok(ServerConfig {
        name: name.to_string(),
        namespace,
        transport,
        allow: raw.allow,
        deny: raw.deny,
        timeout,
    })
}

/// Expand `${VAR}` and `${VAR:-fallback}`; `$${` is a literal `${`; any other `$` is kept as is.
pub fn expand(input: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(escaped) = after.strip_prefix("${") {
            out.push_str("${");
            rest = escaped;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                bail!("unclosed `${{` in `{input}` (write `$${{` for a literal `${{`)");
            };
            let inner = &body[..end];
            let (var, fallback) = match inner.split_once(":-") {
                Some((v, f)) => (v, Some(f)),
                None => (inner, None),
            };
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                if var.contains(':') {
                    bail!(
                        "`${{{inner}}}` is an editor variable (VS Code `${{input:..}}` and the like), which \
                         pegboard cannot fill; use an environment variable `${{NAME}}` instead"
                    );
                }
                bail!("`${{{inner}}}` is not a variable name (letters, digits and `_`)");
            }
            match (
                lookup(var).filter(|v| fallback.is_none() || !v.is_empty()),
                fallback,
            ) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(f)) => out.push_str(f),
                (None, None) => bail!(
                    "environment variable `{var}` is not set (used as `${{{var}}}`); set it, or write \
                     `${{{var}:-default}}`"
                ),
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/ada".into()),
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn parse_str(text: &str) -> Result<Config> {
        parse(text, Path::new("/cfg/pegboard.json"), &vars)
    }

    #[test]
    fn claude_desktop_format_parses_in_file_order() -> Result<()> {
        let cfg = parse_str(
            r#"{"mcpServers": {
                "zeta": {"command": "npx", "args": ["-y", "@x/server"], "env": {"A": "1"}},
                "alpha": {"url": "http://127.0.0.1:9000/mcp", "headers": {"X-Key": "k"}}
            }}"#,
        )?;
        assert_eq!(cfg.servers.len(), 2);
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        let zeta = &cfg.servers[0];
        assert_eq!(zeta.name, "zeta");
        assert_eq!(zeta.namespace.as_deref(), Some("zeta"));
        assert_eq!(
            zeta.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "@x/server".into()],
                env: BTreeMap::from([("A".into(), "1".into())]),
                cwd: None,
            }
        );
        assert_eq!(
            cfg.servers[1].transport,
            Transport::Http {
                url: "http://127.0.0.1:9000/mcp".into(),
                headers: BTreeMap::from([("X-Key".into(), "k".into())]),
            }
        );
        Ok(())
    }

    #[test]
    fn vscode_format_with_type_parses() -> Result<()> {
        let cfg = parse_str(
            r#"{"inputs": [], "servers": {
                "fs": {"type": "stdio", "command": "mcp-fs"},
                "web": {"type": "http", "url": "https://example.com/mcp"}
            }}"#,
        )?;
        assert_eq!(cfg.servers.len(), 2);
        assert!(matches!(cfg.servers[0].transport, Transport::Stdio { .. }));
        assert!(matches!(cfg.servers[1].transport, Transport::Http { .. }));
        assert!(cfg.warnings.is_empty());
        Ok(())
    }

    #[test]
    fn pegboard_extras_are_read() -> Result<()> {
        let cfg = parse_str(
            r#"{"mcpServers": {
                "a": {"command": "x", "namespace": "web", "allow": ["search"], "deny": ["rm"], "timeout": 2.5},
                "b": {"command": "y", "prefix": false},
                "c": {"command": "z", "disabled": true}
            }}"#,
        )?;
        assert_eq!(cfg.servers.len(), 2, "disabled entries are dropped");
        let a = &cfg.servers[0];
        assert_eq!(a.namespace.as_deref(), Some("web"));
        assert_eq!(a.allow, Some(vec!["search".to_string()]));
        assert_eq!(a.deny, vec!["rm".to_string()]);
        assert_eq!(a.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(cfg.servers[1].namespace, None);
        Ok(())
    }

    #[test]
    fn unknown_fields_warn_naming_server_and_field() -> Result<()> {
        let cfg = parse_str(
            r#"{"mcpServers": {"notes": {"command": "x", "autoApprove": [], "envFile": "a"}}}"#,
        )?;
        assert_eq!(cfg.servers.len(), 1);
        assert_eq!(cfg.warnings.len(), 2);
        assert!(cfg.warnings[0].contains("`notes`") && cfg.warnings[0].contains("`autoApprove`"));
        assert!(cfg.warnings[1].contains("`envFile`"));
        Ok(())
    }

    #[test]
    fn bad_json_reports_file_line_and_column() {
        let err = parse_str("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}").err();
        let msg = format!("{:#}", err.expect("must fail"));
        assert!(msg.starts_with("/cfg/pegboard.json:2:"), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
    }

    #[test]
    fn wrong_type_reports_line_and_column() {
        let err =
            parse_str("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"args\": \"-v\"}\n}}")
                .err();
        let msg = format!("{:#}", err.expect("must fail"));
        assert!(msg.contains(":2:"), "{msg}");
        assert!(msg.contains("expected a sequence"), "{msg}");
    }

    #[test]
    fn entry_without_command_or_url_is_named() {
        let err = parse_str(r#"{"mcpServers": {"broken": {"args": []}}}"#).err();
        let msg = format!("{:#}", err.expect("must fail"));
        assert!(
            msg.contains("server `broken`") && msg.contains("neither `command`"),
            "{msg}"
        );
    }

    #[test]
    fn missing_servers_object_is_an_error() {
        let msg = format!("{:#}", parse_str(r#"{"other": 1}"#).expect_err("must fail"));
        assert!(msg.contains("no `mcpServers`"), "{msg}");
    }

    #[test]
    fn sse_type_is_refused_with_advice() {
        let msg = format!(
            "{:#}",
            parse_str(r#"{"servers": {"s": {"type": "sse", "url": "http://x/sse"}}}"#)
                .expect_err("must fail")
        );
        assert!(msg.contains("not supported"), "{msg}");
    }

    #[test]
    fn variables_expand_in_args_env_url_and_headers() -> Result<()> {
        let cfg = parse_str(
            r#"{"mcpServers": {
                "a": {"command": "x", "args": ["${HOME}/notes", "$${HOME}", "cost: $5"], "env": {"T": "${TOKEN}"}},
                "b": {"url": "http://h/${MISSING:-mcp}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
        )?;
        let Transport::Stdio { args, env, .. } = &cfg.servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(args, &["/home/ada/notes", "${HOME}", "cost: $5"]);
        assert_eq!(env["T"], "s3cret");
        let Transport::Http { url, headers } = &cfg.servers[1].transport else {
            panic!("http expected")
        };
        assert_eq!(url, "http://h/mcp");
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        Ok(())
    }

    #[test]
    fn unset_variable_is_a_clear_error() {
        let msg = format!(
            "{:#}",
            parse_str(r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}"#)
                .expect_err("must fail")
        );
        assert!(
            msg.contains("server `a`")
                && msg.contains("`NOPE` is not set")
                && msg.contains("env.K"),
            "{msg}"
        );
    }

    #[test]
    fn expand_edge_cases() {
        assert_eq!(expand("${EMPTY:-d}", &vars).ok().as_deref(), Some("d"));
        assert_eq!(expand("${EMPTY}", &vars).ok().as_deref(), Some(""));
        assert_eq!(expand("a$", &vars).ok().as_deref(), Some("a$"));
        assert!(expand("${HOME", &vars).is_err());
        assert!(expand("${input:key}", &vars).is_err());
    }

    #[test]
    fn paths_are_kept_as_given() -> Result<()> {
        let cfg =
            parse_str(r#"{"mcpServers": {"a": {"command": "./bin/server", "cwd": "work"}}}"#)?;
        let Transport::Stdio { command, cwd, .. } = &cfg.servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(command, "./bin/server");
        assert_eq!(cwd.as_deref(), Some(Path::new("work")));
        Ok(())
    }

    #[test]
    fn default_locations_are_local_then_xdg_then_home() {
        let c = default_candidates(Some("/x".into()), Some("/home/u".into()));
        assert_eq!(
            c,
            vec![
                PathBuf::from("pegboard.json"),
                PathBuf::from("/x/pegboard/config.json")
            ]
        );
        let c = default_candidates(None, Some("/home/u".into()));
        assert_eq!(c[1], PathBuf::from("/home/u/.config/pegboard/config.json"));
    }

    #[test]
    fn missing_explicit_file_is_named() {
        let msg = format!(
            "{:#}",
            locate(Some(Path::new("/nope/x.json"))).expect_err("must fail")
        );
        assert!(msg.contains("/nope/x.json"), "{msg}");
    }
}
