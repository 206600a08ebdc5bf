//! Entries between each client's shape and pegboard's `mcpServers` shape: what `import` reads
//! and what `connect` writes.

use serde_json::{Map, Value, json};

use super::known::ClientId;

mod shapes;
#[cfg(test)]
mod tests;
mod to_client;

use shapes::{codex, goose, opencode, zed};
pub use to_client::{is_pegboard, is_server, launcher};

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
