//! `pegboard status`: a running gateway's status (GET /status on its `--metrics` listener) as a
//! table, or as JSON.

use anyhow::Result;
use pegboard_gateway::status::{StatusReport, fetch_status};

use crate::cli::StatusArgs;

/// Run `pegboard status`.
pub async fn run(args: StatusArgs) -> Result<i32> {
    let report = fetch_status(&args.metrics_url, args.token.as_deref()).await?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        table(&report)
    };
    crate::output::print(&text)?;
    Ok(0)
}

fn ms(value: Option<f64>) -> String {
    match value {
        None => "-".to_string(),
        Some(v) if v < 10.0 => format!("{v:.2}ms"),
        Some(v) if v < 1000.0 => format!("{v:.0}ms"),
        Some(v) => format!("{:.1}s", v / 1000.0),
    }
}

/// The servers in aligned columns, then a line per server that says why it is not up, then a
/// summary line.
pub fn table(report: &StatusReport) -> String {
    let header = [
        "SERVER", "STATE", "TOOLS", "RESTARTS", "CALLS", "ERRORS", "P50", "P99",
    ]
    .map(String::from);
    let rows: Vec<[String; 8]> = report
        .servers
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                s.state.replace('_', " "),
                s.tools.to_string(),
                s.restarts.to_string(),
                s.calls.to_string(),
                s.errors.to_string(),
                ms(s.p50_ms),
                ms(s.p99_ms),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            // Names and states to the left, numbers to the right.
            if i < 2 {
                line.push_str(&format!("{cell:<w$}  "));
            } else {
                line.push_str(&format!("{cell:>w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for s in &report.servers {
        if let Some(reason) = &s.reason {
            let first = reason.lines().next().unwrap_or("");
            out.push_str(&format!(
                "{}: {}: {first}\n",
                s.name,
                s.state.replace('_', " ")
            ));
        }
    }
    let up = report.servers.iter().filter(|s| s.state == "up").count();
    out.push_str(&format!(
        "{up} of {} servers up, {} sessions, {} requests in flight; calls, errors and latency over the last {} minutes\n",
        report.servers.len(),
        report.sessions,
        report.calls_in_flight,
        report.window_seconds / 60
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pegboard_gateway::status::ServerStatus;

    #[test]
    fn the_table_aligns_columns_and_says_why() {
        let server = |name: &str, state: &str, reason: Option<&str>, calls, p50| ServerStatus {
            name: name.into(),
            state: state.into(),
            reason: reason.map(String::from),
            tools: 3,
            restarts: 1,
            calls,
            errors: 0,
            p50_ms: p50,
            p99_ms: p50,
        };
        let report = StatusReport {
            version: "0.1.0".into(),
            uptime_seconds: 10,
            window_seconds: 300,
            sessions: 2,
            calls_in_flight: 0,
            exporting_spans: false,
            spans_dropped: 0,
            servers: vec![
                server("units", "up", None, 1200, Some(1.234)),
                server(
                    "docs-long-name",
                    "needs_login",
                    Some("run `pegboard login docs`\nmore"),
                    0,
                    None,
                ),
            ],
        };
        let text = table(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "SERVER          STATE        TOOLS  RESTARTS  CALLS  ERRORS     P50     P99"
        );
        assert_eq!(
            lines[1],
            "units           up               3         1   1200       0  1.23ms  1.23ms"
        );
        assert_eq!(
            lines[3],
            "docs-long-name: needs login: run `pegboard login docs`"
        );
        assert!(lines[4].starts_with("1 of 2 servers up, 2 sessions"));
    }
}
