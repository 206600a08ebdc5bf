//! `pegboard call`: call one tool by its board name and print the result.

use std::io::Read;

use anyhow::{Context, Result, bail};
use pegboard::{CallOptions, PegBoard, PegBoardError};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use pegboard_gateway::Progress;

use super::{fill_board_from, gateway_for, load_config};
use crate::cli::CallArgs;
use crate::config::{Config, ServerConfig};

/// Run `pegboard call`.
pub async fn run(args: CallArgs, progress: Progress) -> Result<i32> {
    let arguments = parse_arguments(args.arguments.as_deref())?;
    let config = load_config(args.config.config.as_deref(), args.config.strict)?;
    // Start only the servers that can own the name (seconds saved per npx/uvx server); when the
    // tool is not among them after all, start everything and look again.
    let (config, narrowed) = match owners(&config, &args.tool) {
        Some(servers) => (
            Config {
                servers,
                ..config.clone()
            },
            Some(config),
        ),
        None => (config, None),
    };
    let mut loaded = fill_board_from(gateway_for(config, &args.config, progress)).await;
    if let Some(all) = narrowed
        && loaded
            .as_ref()
            .map_or(true, |g| g.board().get_tool(&args.tool).is_none())
    {
        if let Ok(gateway) = loaded {
            gateway.shutdown().await;
        }
        tracing::debug!(tool = %args.tool, "not on the servers its namespace names; starting all");
        loaded = fill_board_from(gateway_for(all, &args.config, progress)).await;
    }
    let gateway = loaded?;
    let outcome = call_and_print(
        gateway.board(),
        &args.tool,
        arguments,
        args.timeout,
        args.json,
    )
    .await;
    let failed = gateway
        .started()
        .unwrap_or_default()
        .iter()
        .filter(|s| s.result.is_err())
        .count();
    gateway.shutdown().await;
    match outcome {
        Err(e) if is_not_found(&e) => {
            let mut msg = format!("{e}\n  run `pegboard tools` to see every name on the board");
            if failed > 0 {
                msg.push_str(&format!(
                    "\n  note: {failed} server{} failed to start (see above); the tool may belong to one of them",
                    if failed == 1 { "" } else { "s" }
                ));
            }
            Err(anyhow::anyhow!(msg))
        }
        other => other,
    }
}

/// The servers that can own `tool`: those whose namespace prefixes it (`units-convert` ->
/// `units`), with every unprefixed server (its tools keep their own names). `None` when no
/// namespace prefixes it, or every server would be started anyway.
pub fn owners(config: &Config, tool: &str) -> Option<Vec<ServerConfig>> {
    let prefixes = |s: &ServerConfig| {
        s.namespace.as_deref().is_some_and(|ns| {
            tool.strip_prefix(ns)
                .is_some_and(|rest| rest.starts_with('-'))
        })
    };
    if !config.servers.iter().any(prefixes) {
        return None;
    }
    let picked: Vec<ServerConfig> = config
        .servers
        .iter()
        .filter(|s| s.namespace.is_none() || prefixes(s))
        .cloned()
        .collect();
    (picked.len() < config.servers.len()).then_some(picked)
}

fn is_not_found(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<PegBoardError>(),
        Some(PegBoardError::ToolNotFound { .. })
    )
}

/// The arguments: none → null (no arguments), `-` → stdin, else a JSON object.
pub fn parse_arguments(raw: Option<&str>) -> Result<Value> {
    let text = match raw {
        None => return Ok(Value::Null),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read the arguments from stdin")?;
            s
        }
        Some(s) => s.to_string(),
    };
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "the arguments are not valid JSON ({e}); pass one JSON object, quoted for the shell, e.g. \
             '{{\"query\": \"rust\"}}'"
        )
    })?;
    match value {
        Value::Object(_) | Value::Null => Ok(value),
        other => bail!(
            "the arguments must be a JSON object like '{{\"query\": \"rust\"}}', not {}",
            kind(&other)
        ),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Call and print; `Ok(1)` when the tool reported an error.
pub async fn call_and_print(
    board: &PegBoard,
    tool: &str,
    arguments: Value,
    timeout: Option<std::time::Duration>,
    json: bool,
) -> Result<i32> {
    let mut options = CallOptions::new();
    if let Some(t) = timeout {
        options = options.timeout(t);
    }
    let result = match board.call_tool_with(tool, arguments, options).await {
        Ok(r) => r,
        Err(e) => return Err(anyhow::Error::new(e)),
    };
    let failed = result.is_error == Some(true);
    if json {
        crate::output::println(&serde_json::to_string_pretty(&result)?)?;
    } else {
        let text = render_result(&result);
        if failed {
            eprintln!("{tool} reported an error:");
            if !text.is_empty() {
                eprintln!("{text}");
            }
        } else if !text.is_empty() {
            crate::output::println(&text)?;
        }
    }
    Ok(i32::from(failed))
}

/// The text of a result: text blocks as they are, other blocks summarised, structured content as JSON when
/// there is nothing else.
pub fn render_result(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result.content.iter().map(render_block).collect();
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(serde_json::to_string_pretty(s).unwrap_or_else(|_| s.to_string()));
    }
    parts.join("\n")
}

fn render_block(block: &ContentBlock) -> String {
    if let Some(t) = block.as_text() {
        return t.text.clone();
    }
    match serde_json::to_value(block) {
        Ok(v) => {
            let kind = v
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("content")
                .to_string();
            match kind.as_str() {
                "image" | "audio" => {
                    let mime = v.get("mimeType").and_then(Value::as_str).unwrap_or("?");
                    let len = v.get("data").and_then(Value::as_str).map_or(0, str::len);
                    format!("[{kind}: {mime}, {len} bytes of base64; use --json to get it]")
                }
                _ => serde_json::to_string_pretty(&v).unwrap_or_default(),
            }
        }
        Err(_) => "[unprintable content block]".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(parse_arguments(None).ok(), Some(Value::Null));
        assert!(parse_arguments(Some(r#"{"a": 1}"#)).is_ok());
        let msg = format!("{:#}", parse_arguments(Some("[1]")).expect_err("must fail"));
        assert!(msg.contains("an array"), "{msg}");
        let msg = format!(
            "{:#}",
            parse_arguments(Some("{a: 1}")).expect_err("must fail")
        );
        assert!(
            msg.contains("not valid JSON") && msg.contains("column"),
            "{msg}"
        );
    }

    #[test]
    fn text_blocks_are_printed_plainly() {
        let r = CallToolResult::success(vec![
            ContentBlock::text("10 km = 6.213712 mi"),
            ContentBlock::text("ok"),
        ]);
        assert_eq!(render_result(&r), "10 km = 6.213712 mi\nok");
    }
}
