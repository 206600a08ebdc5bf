//! `pegboard tools`: connect everything and print the merged tool list.

use std::io::Write;

use anyhow::{Context, Result};
use pegboard::PegBoard;
use pegboard::export::{ExportOptions, Provider};

use super::{Loaded, fill_board};
use crate::cli::{Format, ToolsArgs};
use crate::connect::Progress;

/// Longest description shown in the table.
const DESCRIPTION_MAX: usize = 80;

/// Run `pegboard tools`.
pub async fn run(args: ToolsArgs, progress: Progress) -> Result<i32> {
    let Loaded { board, .. } = fill_board(&args.config, progress).await?;
    let options = ExportOptions::default().defer_loading(args.defer_loading);
    if args.defer_loading && !matches!(args.format, Format::Anthropic | Format::Openai) {
        tracing::warn!("--defer-loading applies to --format anthropic and openai only; ignored");
    }
    let printed = print_tools_with(&board, args.format, options);
    board.shutdown().await;
    printed.map(|()| 0)
}

/// Print the board's tools to stdout in `format`.
pub fn print_tools(board: &PegBoard, format: Format) -> Result<()> {
    print_tools_with(board, format, ExportOptions::default())
}

/// [`print_tools`] with export options (`defer_loading`).
pub fn print_tools_with(board: &PegBoard, format: Format, options: ExportOptions) -> Result<()> {
    let text = render(board, format, options)?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")
}

fn render(board: &PegBoard, format: Format, options: ExportOptions) -> Result<String> {
    let provider = match format {
        Format::Table => return Ok(table(board)),
        Format::Json => {
            let tools = board.mcp_tools();
            return Ok(serde_json::to_string_pretty(&tools)? + "\n");
        }
        Format::Openai => Provider::OpenAi,
        Format::Anthropic => Provider::Anthropic,
        Format::Gemini => Provider::Gemini,
    };
    let value = board
        .export_with(provider, options)
        .with_context(|| format!("cannot export the tools for {provider:?}"))?;
    Ok(serde_json::to_string_pretty(&value)? + "\n")
}

/// name, namespace, first line of the description; aligned columns.
pub fn table(board: &PegBoard) -> String {
    let rows: Vec<(String, String, String)> = board
        .get_all_tools()
        .iter()
        .map(|tool| {
            let tool = rmcp::model::Tool::from(tool);
            let name = tool.name.to_string();
            let namespace = board.namespace_of(&name).unwrap_or_else(|| "-".to_string());
            let description =
                first_line(tool.description.as_deref().unwrap_or(""), DESCRIPTION_MAX);
            (name, namespace, description)
        })
        .collect();
    let header = (
        "NAME".to_string(),
        "NAMESPACE".to_string(),
        "DESCRIPTION".to_string(),
    );
    let w_name = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .max(header.0.len());
    let w_ns = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .max(header.1.len());
    let mut out = String::new();
    for (name, ns, desc) in std::iter::once(&header).chain(rows.iter()) {
        let line = format!("{name:<w_name$}  {ns:<w_ns$}  {desc}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The first non-empty line of `text`, cut to `max` characters.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_skips_blank_lines_and_cuts() {
        assert_eq!(first_line("\n  Search notes.\nMore.", 80), "Search notes.");
        assert_eq!(first_line("abcdefghij", 5), "abcd…");
        assert_eq!(first_line("", 5), "");
    }

    #[test]
    fn empty_board_table_has_a_header() {
        assert_eq!(table(&PegBoard::new()), "NAME  NAMESPACE  DESCRIPTION\n");
    }
}
