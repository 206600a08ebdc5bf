//! The readers of the clients whose entries are not the common `command`/`args`/`env`/`url`
//! shape: Zed, Codex, Goose and opencode, each gathering what pegboard reads into a [`Spec`].

use serde_json::{Map, Value, json};

use super::{Spec, object, str_of, strings};

pub(super) fn zed<'a>(map: &'a Map<String, Value>, spec: &mut Spec, used: &mut Vec<&'a str>) {
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

pub(super) fn codex<'a>(map: &'a Map<String, Value>, spec: &mut Spec, used: &mut Vec<&'a str>) {
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

pub(super) fn goose<'a>(
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

pub(super) fn opencode<'a>(
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
