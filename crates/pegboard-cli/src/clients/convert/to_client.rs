//! The other way: the `pegboard` entry `connect` writes in each client's shape, and which of a
//! client's entries are pegboard's or servers at all.

use serde_json::{Value, json};

use super::{Launch, strings};
use crate::clients::known::ClientId;

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
