//! `pegboard search QUERY...`: the board's best tools for a request, as a table or JSON.

use anyhow::{Result, bail};
use pegboard::ToolMatch;
use serde_json::json;

use super::{fill_board, tools::first_line};
use crate::cli::SearchArgs;
use pegboard_gateway::Progress;

/// Longest description shown in the table.
const DESCRIPTION_MAX: usize = 70;

/// Run `pegboard search`.
pub async fn run(args: SearchArgs, progress: Progress) -> Result<i32> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        bail!("the query is empty: say what the tool should do, or give its name");
    }
    // As that client's view when asked: its hidden tools never show (nor take a place).
    let gateway = fill_board(&args.config, progress, args.client.clone()).await?;
    let found = gateway
        .stdio_client()
        .search_tools(gateway.board(), &query, args.limit);
    gateway.shutdown().await;
    let text = if args.json {
        json_text(&found)?
    } else {
        table(&found)
    };
    crate::output::print(&text)?;
    Ok(if found.is_empty() { 1 } else { 0 })
}

fn json_text(found: &[ToolMatch]) -> Result<String> {
    let tools: Vec<_> = found
        .iter()
        .map(|m| {
            json!({
                "name": m.tool.name.as_str(),
                "description": m.tool.description.as_deref().unwrap_or_default(),
                "inputSchema": &*m.tool.input_schema,
                "namespace": m.namespace.as_deref(),
                "score": m.score,
            })
        })
        .collect();
    Ok(serde_json::to_string_pretty(&json!({ "tools": tools }))? + "\n")
}

/// rank, name, score, first line of the description.
fn table(found: &[ToolMatch]) -> String {
    if found.is_empty() {
        return "no tool matches\n".to_string();
    }
    let width = found
        .iter()
        .map(|m| m.tool.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (rank, m) in (1..).zip(found) {
        let description = first_line(m.tool.description.as_deref().unwrap_or(""), DESCRIPTION_MAX);
        let score = if m.exact {
            "exact".to_string()
        } else {
            format!("{:.2}", m.score)
        };
        // Padded by hand: `format!` widths panic past u16::MAX, and names can be that long.
        let name = m.tool.name.as_str();
        let pad = " ".repeat(width.saturating_sub(name.chars().count()));
        let line = format!("{rank:>2}. {name}{pad}  {score:>6}  {description}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
