//! `pegboard find TERM`: search the MCP Registry.

use anyhow::Result;
use serde::Serialize;

use super::servers::{config_path, registry_url};
use crate::cli::FindArgs;
use crate::registry::RegistryClient;
use crate::registry::server_json::ServerJson;

/// One row of `--json`.
#[derive(Debug, Serialize)]
struct Found {
    name: String,
    title: Option<String>,
    description: Option<String>,
    version: Option<String>,
    transports: Vec<String>,
}

impl Found {
    fn of(server: &ServerJson) -> Self {
        let mut transports: Vec<String> = Vec::new();
        let kinds = server
            .packages
            .iter()
            .map(|p| p.transport.as_ref().map_or("stdio", |t| t.kind.as_str()))
            .chain(server.remotes.iter().map(|r| r.kind.as_str()));
        for kind in kinds {
            if !transports.iter().any(|t| t == kind) {
                transports.push(kind.to_string());
            }
        }
        Self {
            name: server.name.clone(),
            title: server.title.clone(),
            description: server.description.clone(),
            version: server.version().map(str::to_string),
            transports,
        }
    }
}

/// Run `pegboard find`.
pub async fn run(args: FindArgs) -> Result<i32> {
    let config = config_path(&args.config);
    let client = RegistryClient::new(&registry_url(args.registry.as_deref(), config.as_deref()))?;
    let found: Vec<Found> = client
        .search(&args.term)
        .await?
        .iter()
        .map(Found::of)
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else if !found.is_empty() {
        let width = found.iter().map(|f| f.name.len()).max().unwrap_or(0);
        for f in &found {
            let description = f
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            println!(
                "{:width$}  {:10}  {:24}  {description}",
                f.name,
                f.version.as_deref().unwrap_or("-"),
                f.transports.join(","),
            );
        }
    }
    if found.is_empty() {
        eprintln!("no server in the registry matches `{}`", args.term);
        return Ok(1);
    }
    Ok(0)
}
