//! Entries between each client's shape and pegboard's `mcpServers` shape: what `import` reads
//! and what `connect` writes.

use serde_json::{Map, Value, json};

use super::known::ClientId;

/// A client's entry as a pegboard entry, and what was dropped on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The pegboard `mcpServers` entry.
    pub entry: Value,
    /// One note per field pegboard does not read (dropped).
    pub notes: Vec<String>,
}

/// How `connect` has the client reach pegboard.
#[derive(Debug, Clone)]
pub enum Launch {
    /// The client starts `command args...` (pegboard serve) over stdio.
    Stdio {
        /// Absolute path of the pegboard binary.
        command: String,
        /// `serve --config ...`.
        args: Vec<String>,
    },
    /// The client connects to a running `pegboard serve --http`.
    Http {
        /// The gateway's URL.
        url: String,
        /// The environment variable holding the bearer token.
        token_env: Option<String>,
    },
}

/// The fields pegboard reads, gathered from any client's shape.
#[derive(Default)]
struct Spec {
    command: Option<String>,
    args: Vec<String>,
    env: Map<String, Value>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Map<String, Value>,
    extra: Map<String, Value>,
    notes: Vec<String>,
}

/// The fields a client uses for bookkeeping only: dropped without a note.
const SILENT: &[&str] = &[
    "name",
    "description",
    "bundled",
    "display_name",
    "source",
    "type",
];

/// `entry` (named `name` in `client`'s file) as a pegboard entry, or why it cannot be one.
pub fn to_pegboard(client: ClientId, entry: &Value) -> Result<Imported, String> {
    let Value::Object(map) = entry else {
        return Err("not an object".into());
    };
    let mut spec = Spec::default();
    let mut used: Vec<&str> = Vec::new();
    let kind = str_of(map, "type");
    match client {
        ClientId::Goose => goose(map, kind, &mut spec, &mut used)?,
        ClientId::OpenCode => opencode(map, kind, &mut spec, &mut used)?,
        ClientId::Codex => codex(map, &mut spec, &mut used),
        ClientId::Zed => zed(map, &mut spec, &mut used),
        _ => generic(client, map, kind, &mut spec, &mut used)?,
    }
    for (key, _) in map {
        if !used.contains(&key.as_str()) && !SILENT.contains(&key.as_str()) {
            spec.notes
                .push(format!("`{key}` dropped (pegboard does not read it)"));
        }
    }
    finish(client, spec)
}

fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn object(value: Option<&Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(_) => v.clone(),
                    other => Value::String(other.to_string()),
                };
                (k.clone(), v)
            })
            .collect(),
        _ => Map::new(),
    }
}

/// The `mcpServers`-like shapes: Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini,
/// LM Studio, Continue.
fn generic<'a>(
    client: ClientId,
    map: &'a Map<String, Value>,
    kind: Option<&str>,
    spec: &mut Spec,
    used: &mut Vec<&'a str>,
) -> Result<(), String> {
    if matches!(kind, Some("sse")) {
        return Err("SSE only (pegboard speaks streamable HTTP)".into());
    }
    used.extend(["command", "args", "env", "cwd", "headers", "disabled"]);
    spec.command = str_of(map, "command").map(str::to_string);
    spec.args = strings(map.get("args"));
    spec.env = object(map.get("env"));
    spec.cwd = str_of(map, "cwd").map(str::to_string);
    spec.headers = object(map.get("headers"));
    if map.get("disabled") == Some(&Value::Bool(true)) {
        spec.extra.insert("disabled".into(), Value::Bool(true));
    }
    match client {
        ClientId::Gemini => {
            used.extend(["httpUrl", "url", "timeout", "includeTools", "excludeTools"]);
            if spec.command.is_none() && map.contains_key("url") && !map.contains_key("httpUrl") {
                return Err("SSE only: Gemini's `url` is an SSE endpoint (use `httpUrl` for streamable HTTP)".into());
            }
            spec.url = str_of(map, "httpUrl").map(str::to_string);
            if let Some(ms) = map.get("timeout").and_then(Value::as_f64) {
                spec.extra.insert("timeout".into(), json!(ms / 1000.0));
            }
            if let Some(allow) = map.get("includeTools") {
                spec.extra.insert("allow".into(), allow.clone());
            }
            if let Some(deny) = map.get("excludeTools") {
                spec.extra.insert("deny".into(), deny.clone());
            }
        }
        ClientId::Windsurf => {
            used.extend(["serverUrl", "url"]);
            spec.url = str_of(map, "serverUrl")
                .or_else(|| str_of(map, "url"))
                .map(str::to_string);
        }
        ClientId::Continue => {
            used.extend(["url", "requestOptions"]);
            spec.url = str_of(map, "url").map(str::to_string);
            if let Some(h) = map.get("requestOptions").and_then(|r| r.get("headers")) {
                spec.headers.extend(object(Some(h)));
            }
        }
        _ => {
            used.push("url");
            spec.url = str_of(map, "url").map(str::to_string);
        }
    }
    Ok(())
}

fn zed<'a>(map: &'a Map<String, Value>, spec: &mut Spec, used: &mut Vec<&'a str>) {
    used.extend([
        "command", "args", "env", "url", "headers", "enabled", "settings",
    ]);
    match map.get("command") {
        // The older shape: `"command": {"path", "args", "env"}`.
        Some(Value::Object(cmd)) => {
            spec.command = str_of(cmd, "path").map(str::to_string);
            spec.args = strings(cmd.get("args"));
            spec.env = object(cmd.get("env"));
        }
        Some(Value::String(cmd)) => {
            spec.command = Some(cmd.clone());
            spec.args = strings(map.get("args"));
            spec.env = object(map.get("env"));
        }
        _ => {}
    }
    spec.url = str_of(map, "url").map(str::to_string);
    spec.headers = object(map.get("headers"));
    if map.get("enabled") == Some(&Value::Bool(false)) {
        spec.extra.insert("disabled".into(), Value::Bool(true));
    }
    if map
        .get("settings")
        .is_some_and(|s| s.as_object().is_some_and(|o| !o.is_empty()))
    {
        spec.notes
            .push("`settings` dropped (Zed passes them to its extension)".into());
    }
}

fn codex<'a>(map: &'a Map<String, Value>, spec: &mut Spec, used: &mut Vec<&'a str>) {
    used.extend([
        "command",
        "args",
        "env",
        "cwd",
        "env_vars",
        "url",
        "bearer_token_env_var",
        "http_headers",
        "env_http_headers",
        "tool_timeout_sec",
        "enabled",
        "enabled_tools",
        "disabled_tools",
    ]);
    spec.command = str_of(map, "command").map(str::to_string);
    spec.args = strings(map.get("args"));
    spec.env = object(map.get("env"));
    spec.cwd = str_of(map, "cwd").map(str::to_string);
    // Variables Codex passes through from its own environment.
    for var in strings(map.get("env_vars")) {
        spec.env
            .insert(var.clone(), Value::String(format!("${{{var}}}")));
    }
    spec.url = str_of(map, "url").map(str::to_string);
    spec.headers = object(map.get("http_headers"));
    if let Some(Value::Object(from_env)) = map.get("env_http_headers") {
        for (header, var) in from_env {
            if let Some(var) = var.as_str() {
                spec.headers
                    .insert(header.clone(), Value::String(format!("${{{var}}}")));
            }
        }
    }
    if let Some(var) = str_of(map, "bearer_token_env_var") {
        spec.headers.insert(
            "Authorization".into(),
            Value::String(format!("Bearer ${{{var}}}")),
        );
    }
    if let Some(secs) = map.get("tool_timeout_sec") {
        spec.extra.insert("timeout".into(), secs.clone());
    }
    if map.get("enabled") == Some(&Value::Bool(false)) {
        spec.extra.insert("disabled".into(), Value::Bool(true));
    }
    if let Some(allow) = map.get("enabled_tools") {
        spec.extra.insert("allow".into(), allow.clone());
    }
    if let Some(deny) = map.get("disabled_tools") {
        spec.extra.insert("deny".into(), deny.clone());
    }
}

fn goose<'a>(
    map: &'a Map<String, Value>,
    kind: Option<&str>,
    spec: &mut Spec,
    used: &mut Vec<&'a str>,
) -> Result<(), String> {
    used.extend([
        "cmd", "args", "envs", "env_keys", "timeout", "enabled", "uri", "headers",
    ]);
    match kind {
        Some("stdio") => {
            spec.command = str_of(map, "cmd").map(str::to_string);
            spec.args = strings(map.get("args"));
        }
        Some("streamable_http") => spec.url = str_of(map, "uri").map(str::to_string),
        Some("sse") => return Err("SSE only (pegboard speaks streamable HTTP)".into()),
        Some(other) => {
            return Err(format!(
                "a Goose `{other}` extension, not an MCP server it starts"
            ));
        }
        None => return Err("no `type`".into()),
    }
    spec.env = object(map.get("envs"));
    // Goose keeps these variables' values in its keyring: pegboard reads them from its environment.
    for key in strings(map.get("env_keys")) {
        spec.notes.push(format!(
            "`{key}` is read from the environment (Goose keeps it in its keyring)"
        ));
        spec.env
            .insert(key.clone(), Value::String(format!("${{{key}}}")));
    }
    spec.headers = object(map.get("headers"));
    if let Some(secs) = map.get("timeout").filter(|t| t.is_number()) {
        spec.extra.insert("timeout".into(), secs.clone());
    }
    if map.get("enabled") == Some(&Value::Bool(false)) {
        spec.extra.insert("disabled".into(), Value::Bool(true));
    }
    Ok(())
}

fn opencode<'a>(
    map: &'a Map<String, Value>,
    kind: Option<&str>,
    spec: &mut Spec,
    used: &mut Vec<&'a str>,
) -> Result<(), String> {
    used.extend([
        "command",
        "environment",
        "url",
        "headers",
        "enabled",
        "timeout",
    ]);
    match kind {
        Some("local") => {
            let mut command = strings(map.get("command")).into_iter();
            spec.command = command.next();
            spec.args = command.collect();
            spec.env = object(map.get("environment"));
        }
        Some("remote") => {
            spec.url = str_of(map, "url").map(str::to_string);
            spec.headers = object(map.get("headers"));
        }
        _ => return Err("`type` is neither `local` nor `remote`".into()),
    }
    if map.get("enabled") == Some(&Value::Bool(false)) {
        spec.extra.insert("disabled".into(), Value::Bool(true));
    }
    if let Some(ms) = map.get("timeout").and_then(Value::as_f64) {
        spec.extra.insert("timeout".into(), json!(ms / 1000.0));
    }
    Ok(())
}

fn finish(client: ClientId, spec: Spec) -> Result<Imported, String> {
    let fix = |s: &str| references(client, s);
    let mut entry = Map::new();
    match (&spec.command, &spec.url) {
        (Some(command), _) => {
            entry.insert("command".into(), Value::String(fix(command)?));
            if !spec.args.is_empty() {
                let args: Result<Vec<Value>, String> = spec
                    .args
                    .iter()
                    .map(|a| fix(a).map(Value::String))
                    .collect();
                entry.insert("args".into(), Value::Array(args?));
            }
            if !spec.env.is_empty() {
                entry.insert("env".into(), fix_map(&spec.env, &fix)?);
            }
            if let Some(cwd) = &spec.cwd {
                entry.insert("cwd".into(), Value::String(fix(cwd)?));
            }
        }
        (None, Some(url)) => {
            entry.insert("url".into(), Value::String(fix(url)?));
            if !spec.headers.is_empty() {
                entry.insert("headers".into(), fix_map(&spec.headers, &fix)?);
            }
        }
        (None, None) => return Err("neither a command nor a URL".into()),
    }
    entry.extend(spec.extra);
    Ok(Imported {
        entry: Value::Object(entry),
        notes: spec.notes,
    })
}

fn fix_map(
    map: &Map<String, Value>,
    fix: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Value, String> {
    let mut out = Map::new();
    for (k, v) in map {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        out.insert(k.clone(), Value::String(fix(&text)?));
    }
    Ok(Value::Object(out))
}

/// `text` with the client's variable references written as pegboard's `${VAR}`: `${env:VAR}`
/// (VS Code, Cursor, Windsurf), `{env:VAR}` (opencode), `$VAR` (Gemini). A reference pegboard has
/// no value for (`${input:..}`, `${workspaceFolder}`) makes the entry not importable.
pub fn references(client: ClientId, text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(['$', '{']) {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if let Some(inner) = tail.strip_prefix("${") {
            let Some(end) = inner.find('}') else {
                out.push_str(tail);
                return Ok(out);
            };
            let body = &inner[..end];
            if let Some(var) = body.strip_prefix("env:") {
                out.push_str(&format!("${{{var}}}"));
            } else if body.contains(':') || body == "workspaceFolder" || body == "userHome" {
                return Err(format!(
                    "`${{{body}}}` is a reference only {} can fill in",
                    client.name()
                ));
            } else {
                out.push_str(&format!("${{{body}}}"));
            }
            rest = &inner[end + 1..];
        } else if client == ClientId::OpenCode && tail.starts_with("{env:") {
            let inner = &tail[5..];
            let Some(end) = inner.find('}') else {
                out.push_str(tail);
                return Ok(out);
            };
            out.push_str(&format!("${{{}}}", &inner[..end]));
            rest = &inner[end + 1..];
        } else if client == ClientId::Gemini && tail.starts_with('$') {
            let name: String = tail[1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                out.push('$');
                rest = &tail[1..];
            } else {
                out.push_str(&format!("${{{name}}}"));
                rest = &tail[1 + name.len()..];
            }
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The part of a pegboard entry that says what runs: two entries with the same key are the same
/// server (`command`, `args`, `env`, `cwd`, or `url` and `headers`).
pub fn identity(entry: &Value) -> Value {
    let pick = |keys: &[&str]| {
        let mut out = Map::new();
        for k in keys {
            match entry.get(*k) {
                None | Some(Value::Null) => {}
                Some(Value::Array(a)) if a.is_empty() => {}
                Some(Value::Object(o)) if o.is_empty() => {}
                Some(v) => {
                    out.insert((*k).to_string(), v.clone());
                }
            }
        }
        Value::Object(out)
    };
    if entry.get("command").is_some() {
        pick(&["command", "args", "env", "cwd"])
    } else {
        pick(&["url", "headers"])
    }
}

/// The `pegboard` entry for `client`, in its own shape.
pub fn launcher(client: ClientId, launch: &Launch) -> Result<Value, String> {
    match launch {
        Launch::Stdio { command, args } => Ok(stdio_launcher(client, command, args)),
        Launch::Http { url, token_env } => http_launcher(client, url, token_env.as_deref()),
    }
}

fn stdio_launcher(client: ClientId, command: &str, args: &[String]) -> Value {
    match client {
        ClientId::ClaudeCode => {
            json!({"type": "stdio", "command": command, "args": args, "env": {}})
        }
        ClientId::VsCode => json!({"type": "stdio", "command": command, "args": args}),
        ClientId::Zed => json!({"source": "custom", "command": command, "args": args, "env": {}}),
        ClientId::Goose => json!({
            "name": "pegboard",
            "description": "PegBoard: one MCP gateway for your servers",
            "type": "stdio",
            "cmd": command,
            "args": args,
            "enabled": true,
            "envs": {},
            "env_keys": [],
            "timeout": 300,
        }),
        ClientId::Continue => {
            json!({"name": "pegboard", "type": "stdio", "command": command, "args": args})
        }
        ClientId::OpenCode => {
            let mut all = vec![command.to_string()];
            all.extend(args.iter().cloned());
            json!({"type": "local", "command": all, "enabled": true})
        }
        _ => json!({"command": command, "args": args}),
    }
}

fn http_launcher(client: ClientId, url: &str, token_env: Option<&str>) -> Result<Value, String> {
    // The token as the client's own reference to an environment variable, never its value.
    let reference = |make: &dyn Fn(&str) -> String| {
        token_env.map(|v| json!({"Authorization": format!("Bearer {}", make(v))}))
    };
    let no_env_refs = |what: &str| -> Result<(), String> {
        if token_env.is_some() {
            return Err(format!(
                "{} cannot read a header from an environment variable in its file ({what}); connect it over stdio instead (without --http): `pegboard connect {}`",
                client.name(),
                client.name()
            ));
        }
        Ok(())
    };
    let mut entry = match client {
        ClientId::ClaudeDesktop => {
            return Err("Claude Desktop does not connect to remote servers configured in claude_desktop_config.json (it takes stdio servers only); connect it over stdio instead: `pegboard connect claude-desktop`".into());
        }
        ClientId::ClaudeCode => {
            let mut e = json!({"type": "http", "url": url});
            if let Some(h) = reference(&|v| format!("${{{v}}}")) {
                e["headers"] = h;
            }
            e
        }
        ClientId::Cursor => {
            with_headers(json!({"url": url}), reference(&|v| format!("${{env:{v}}}")))
        }
        ClientId::VsCode => with_headers(
            json!({"type": "http", "url": url}),
            reference(&|v| format!("${{env:{v}}}")),
        ),
        ClientId::Windsurf => with_headers(
            json!({"serverUrl": url}),
            reference(&|v| format!("${{env:{v}}}")),
        ),
        ClientId::Gemini => {
            with_headers(json!({"httpUrl": url}), reference(&|v| format!("${{{v}}}")))
        }
        ClientId::Codex => {
            let mut e = json!({"url": url});
            if let Some(v) = token_env {
                e["bearer_token_env_var"] = json!(v);
            }
            e
        }
        ClientId::OpenCode => with_headers(
            json!({"type": "remote", "url": url, "enabled": true}),
            reference(&|v| format!("{{env:{v}}}")),
        ),
        ClientId::Zed => {
            no_env_refs("Zed's settings have no variable references")?;
            json!({"url": url})
        }
        ClientId::LmStudio => {
            no_env_refs("LM Studio's mcp.json has no variable references")?;
            json!({"url": url})
        }
        ClientId::Goose => {
            no_env_refs("Goose expands no variables in headers")?;
            json!({
                "name": "pegboard",
                "description": "PegBoard: one MCP gateway for your servers",
                "type": "streamable_http",
                "uri": url,
                "enabled": true,
                "envs": {},
                "env_keys": [],
                "headers": {},
                "timeout": 300,
            })
        }
        ClientId::Continue => {
            no_env_refs("Continue reads secrets, not environment variables, in its headers")?;
            json!({"name": "pegboard", "type": "streamable-http", "url": url})
        }
    };
    if let Value::Object(map) = &mut entry {
        map.retain(|_, v| !v.is_null());
    }
    Ok(entry)
}

fn with_headers(mut entry: Value, headers: Option<Value>) -> Value {
    if let Some(h) = headers {
        entry["headers"] = h;
    }
    entry
}

/// Whether `entry` (the client's `pegboard` entry) starts this gateway or points at one.
pub fn is_pegboard(entry: &Value) -> bool {
    let command = ["command", "cmd"].iter().find_map(|k| match entry.get(*k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str).map(str::to_string),
        Some(Value::Object(o)) => o.get("path").and_then(Value::as_str).map(str::to_string),
        _ => None,
    });
    if let Some(command) = command {
        let stem = std::path::Path::new(&command)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut args = strings(entry.get("args"));
        if let Some(Value::Array(a)) = entry.get("command") {
            args.extend(
                a.iter()
                    .skip(1)
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
        }
        return stem.starts_with("pegboard") && args.iter().any(|a| a == "serve");
    }
    ["url", "httpUrl", "serverUrl", "uri"]
        .iter()
        .any(|k| entry.get(*k).and_then(Value::as_str).is_some())
}

/// Whether a client entry is an MCP server (Goose's built-in extensions are not).
pub fn is_server(client: ClientId, entry: &Value) -> bool {
    match client {
        ClientId::Goose => matches!(
            entry.get("type").and_then(Value::as_str),
            Some("stdio" | "sse" | "streamable_http")
        ),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(client: ClientId, entry: Value) -> Result<Imported, String> {
        to_pegboard(client, &entry)
    }

    #[test]
    fn references_become_pegboard_variables() {
        assert_eq!(
            references(ClientId::VsCode, "Bearer ${env:TOKEN}").as_deref(),
            Ok("Bearer ${TOKEN}")
        );
        assert_eq!(
            references(ClientId::OpenCode, "{env:KEY}/x").as_deref(),
            Ok("${KEY}/x")
        );
        assert_eq!(
            references(ClientId::Gemini, "$HOME/$1 and $API_KEY").as_deref(),
            Ok("${HOME}/$1 and ${API_KEY}")
        );
        assert_eq!(
            references(ClientId::Cursor, "$HOME").as_deref(),
            Ok("$HOME")
        );
        assert!(references(ClientId::VsCode, "${input:token}").is_err());
        assert!(references(ClientId::VsCode, "${workspaceFolder}/x").is_err());
    }

    #[test]
    fn gemini_fields_are_converted() {
        let got = import(
            ClientId::Gemini,
            json!({"command": "node", "args": ["s.js"], "env": {"K": "$KEY"}, "timeout": 30000, "trust": true, "includeTools": ["a"]}),
        )
        .expect("import");
        assert_eq!(
            got.entry,
            json!({"command": "node", "args": ["s.js"], "env": {"K": "${KEY}"}, "timeout": 30.0, "allow": ["a"]})
        );
        assert_eq!(got.notes, ["`trust` dropped (pegboard does not read it)"]);
        assert!(
            import(ClientId::Gemini, json!({"url": "http://h/sse"}))
                .expect_err("sse")
                .contains("SSE")
        );
        let http = import(
            ClientId::Gemini,
            json!({"httpUrl": "http://h/mcp", "headers": {"A": "b"}}),
        )
        .expect("http");
        assert_eq!(
            http.entry,
            json!({"url": "http://h/mcp", "headers": {"A": "b"}})
        );
    }

    #[test]
    fn codex_headers_come_from_its_variables() {
        let got = import(
            ClientId::Codex,
            json!({"url": "https://h/mcp", "bearer_token_env_var": "TOK", "env_http_headers": {"X-Team": "TEAM"}, "startup_timeout_sec": 20}),
        )
        .expect("import");
        assert_eq!(
            got.entry,
            json!({"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOK}", "X-Team": "${TEAM}"}})
        );
        assert_eq!(got.notes.len(), 1);
    }

    #[test]
    fn goose_opencode_and_zed_shapes_are_read() {
        let goose = import(ClientId::Goose, json!({"type": "stdio", "cmd": "npx", "args": ["-y", "m"], "envs": {}, "env_keys": ["K"], "enabled": true, "name": "m", "timeout": 300})).expect("goose");
        assert_eq!(
            goose.entry,
            json!({"command": "npx", "args": ["-y", "m"], "env": {"K": "${K}"}, "timeout": 300})
        );
        assert!(
            import(
                ClientId::Goose,
                json!({"type": "builtin", "name": "developer"})
            )
            .is_err()
        );
        let oc = import(ClientId::OpenCode, json!({"type": "local", "command": ["npx", "-y", "m"], "environment": {"A": "{env:A}"}, "enabled": false})).expect("opencode");
        assert_eq!(
            oc.entry,
            json!({"command": "npx", "args": ["-y", "m"], "env": {"A": "${A}"}, "disabled": true})
        );
        let zed_old = import(
            ClientId::Zed,
            json!({"command": {"path": "node", "args": ["x"], "env": {}}, "settings": {}}),
        )
        .expect("zed");
        assert_eq!(zed_old.entry, json!({"command": "node", "args": ["x"]}));
        let zed_new = import(
            ClientId::Zed,
            json!({"source": "custom", "command": "node", "args": ["x"]}),
        )
        .expect("zed");
        assert_eq!(zed_new.entry, zed_old.entry);
    }

    #[test]
    fn http_launchers_reference_the_variable_never_the_token() {
        let launch = Launch::Http {
            url: "http://127.0.0.1:8700/mcp".into(),
            token_env: Some("PB_TOKEN".into()),
        };
        let vscode = launcher(ClientId::VsCode, &launch).expect("vscode");
        assert_eq!(vscode["headers"]["Authorization"], "Bearer ${env:PB_TOKEN}");
        let codex = launcher(ClientId::Codex, &launch).expect("codex");
        assert_eq!(
            codex,
            json!({"url": "http://127.0.0.1:8700/mcp", "bearer_token_env_var": "PB_TOKEN"})
        );
        assert_eq!(
            launcher(ClientId::Gemini, &launch).expect("gemini")["httpUrl"],
            "http://127.0.0.1:8700/mcp"
        );
        assert!(
            launcher(ClientId::ClaudeDesktop, &launch)
                .expect_err("desktop")
                .contains("stdio")
        );
        assert!(
            launcher(ClientId::Zed, &launch)
                .expect_err("zed")
                .contains("stdio")
        );
    }

    #[test]
    fn the_launcher_is_recognised_in_every_shape() {
        let launch = Launch::Stdio {
            command: "/opt/bin/pegboard".into(),
            args: vec!["serve".into(), "--config".into(), "/c.json".into()],
        };
        for client in super::super::known::ALL {
            let entry = launcher(client, &launch).expect("stdio");
            assert!(is_pegboard(&entry), "{}: {entry}", client.name());
            let back = to_pegboard(client, &entry).expect("reads back");
            assert_eq!(
                back.entry["command"],
                "/opt/bin/pegboard",
                "{}",
                client.name()
            );
        }
    }
}
