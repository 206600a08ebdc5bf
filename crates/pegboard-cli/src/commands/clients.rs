//! `pegboard clients`: the known clients, their files, and whether they are connected.

use anyhow::Result;
use serde::Serialize;

use crate::cli::ClientsArgs;
use crate::clients::connect::ENTRY;
use crate::clients::convert::{is_pegboard, is_server};
use crate::clients::format::ClientDoc;
use crate::clients::known::{ALL, ClientId, Env};

/// One row.
#[derive(Debug, Serialize)]
struct Row {
    name: &'static str,
    path: Option<String>,
    found: bool,
    /// `None` when the file does not parse.
    servers: Option<usize>,
    connected: bool,
}

fn row(client: ClientId, env: &Env) -> Row {
    let path = client.user_path(env);
    let found = path.as_ref().is_some_and(|p| p.is_file());
    let (servers, connected) = match path.as_ref().filter(|_| found) {
        None => (Some(0), false),
        Some(p) => match ClientDoc::open(p, client.format(), client.container())
            .and_then(|d| d.entries())
        {
            Err(e) => {
                tracing::warn!("{e}");
                (None, false)
            }
            Ok(entries) => {
                let servers = entries
                    .iter()
                    .filter(|(n, e)| n != ENTRY && is_server(client, e))
                    .count();
                let connected = entries.iter().any(|(n, e)| n == ENTRY && is_pegboard(e));
                (Some(servers), connected)
            }
        },
    };
    Row {
        name: client.name(),
        path: path.map(|p| p.display().to_string()),
        found,
        servers,
        connected,
    }
}

/// Run `pegboard clients`.
pub fn run(args: ClientsArgs) -> Result<i32> {
    let env = Env::from_process();
    let rows: Vec<Row> = ALL.iter().map(|c| row(*c, &env)).collect();
    let text = if args.json {
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        table(&rows)
    };
    crate::output::print(&text)?;
    Ok(0)
}

fn table(rows: &[Row]) -> String {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.name.to_string(),
                r.path.clone().unwrap_or_else(|| "-".into()),
                if r.found { "yes" } else { "no" }.to_string(),
                r.servers
                    .map_or_else(|| "unreadable".into(), |n| n.to_string()),
                if r.connected { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    let header = ["NAME", "PATH", "FOUND", "SERVERS", "CONNECTED"].map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&cells) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
