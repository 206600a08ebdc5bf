//! `pegboard tools`: connect everything and print the merged tool list.

use anyhow::{Context, Result};
use pegboard::PegBoard;
use pegboard::export::{ExportOptions, Provider};

use super::{fill_board_from, gateway_for, load_config};
use crate::cli::{Format, ToolsArgs};
use pegboard_gateway::Progress;

/// Longest description shown in the table.
const DESCRIPTION_MAX: usize = 80;

/// Run `pegboard tools`.
pub async fn run(args: ToolsArgs, progress: Progress) -> Result<i32> {
    let config = load_config(args.config.config.as_deref(), args.config.strict)?;
    let reports: Vec<(String, pegboard_gateway::pins::Report)> = config
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.guards.report.clone()))
        .collect();
    let gateway = fill_board_from(gateway_for(config, &args.config, progress)).await?;
    let board = gateway.board();
    let options = ExportOptions::default().defer_loading(args.defer_loading);
    if args.defer_loading && !matches!(args.format, Format::Anthropic | Format::Openai) {
        tracing::warn!("--defer-loading applies to --format anthropic and openai only; ignored");
    }
    let printed = print_tools_with(board, args.format, options);
    // Pins and the description scan: on stderr, the tool list on stdout stays what it was.
    super::findings::print(board, &reports);
    gateway.shutdown().await;
    printed.map(|()| 0)
}

/// Print the board's tools to stdout in `format`.
pub fn print_tools(board: &PegBoard, format: Format) -> Result<()> {
    print_tools_with(board, format, ExportOptions::default())
}

/// [`print_tools`] with export options (`defer_loading`).
pub fn print_tools_with(board: &PegBoard, format: Format, options: ExportOptions) -> Result<()> {
    crate::output::print(&render(board, format, options)?)
}

fn render(board: &PegBoard, format: Format, options: ExportOptions) -> Result<String> {
    let provider = match format {
        Format::Table => return Ok(table(board)),
        Format::Json => {
            // As the gateway lists them (`tools/list`): every member their servers sent.
            let tools = board.listed_tools();
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
    layout(&rows)
}

/// Rows under a header, in aligned columns.
fn layout(rows: &[(String, String, String)]) -> String {
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
        // Padded by hand: `format!`'s width is capped at u16::MAX and panics past it, and a
        // namespace can be longer than that.
        let mut line =
            String::with_capacity(w_name.saturating_add(w_ns).saturating_add(desc.len() + 4));
        pad_into(&mut line, name, w_name);
        line.push_str("  ");
        pad_into(&mut line, ns, w_ns);
        line.push_str("  ");
        line.push_str(desc);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text`, then spaces up to `width` characters.
fn pad_into(line: &mut String, text: &str, width: usize) {
    line.push_str(text);
    let used = text.chars().count();
    line.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
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
    fn a_namespace_longer_than_a_format_width_does_not_panic() {
        let huge = "n".repeat(65_536);
        let rows = vec![
            (format!("{huge}-t"), huge.clone(), "Does it.".to_string()),
            ("x".to_string(), "-".to_string(), String::new()),
        ];
        let text = layout(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with(&format!("{huge}  Does it.")));
        assert_eq!(lines[2].find('-'), Some(65_538 + 2));
    }

    proptest::proptest! {
        #[test]
        fn the_table_and_first_line_never_panic(
            rows in proptest::collection::vec(("\\PC{0,300}", "\\PC{0,300}", "\\PC{0,300}"), 0..5),
            max in 0usize..100,
        ) {
            let text = layout(&rows);
            proptest::prop_assert_eq!(text.matches('\n').count(), rows.len() + 1 + rows.iter().map(|r| r.0.matches('\n').count() + r.1.matches('\n').count() + r.2.matches('\n').count()).sum::<usize>());
            for (_, _, desc) in &rows {
                proptest::prop_assert!(first_line(desc, max).chars().count() <= max.max(1));
            }
        }
    }

    #[test]
    fn empty_board_table_has_a_header() {
        assert_eq!(table(&PegBoard::new()), "NAME  NAMESPACE  DESCRIPTION\n");
    }
}
