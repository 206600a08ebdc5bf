//! `pegboard import`: clients' servers into pegboard's config.

use anyhow::{Result, bail};

use crate::cli::ImportArgs;
use crate::clients::client_named;
use crate::clients::format::ClientDoc;
use crate::clients::import::{guess_client, import_into};
use crate::clients::known::{ALL, Env};
use crate::config_edit::ConfigEdit;

/// Run `pegboard import`.
pub fn run(args: ImportArgs) -> Result<i32> {
    let env = Env::from_process();
    // Every source is read (and must parse) before pegboard's config is touched.
    let mut sources = Vec::new();
    if let Some(file) = &args.from {
        let client = match args.clients.as_slice() {
            [] => {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
                guess_client(file, &text).ok_or_else(|| {
                    anyhow::anyhow!("{}: not a file of MCP servers pegboard can read; name its client: `pegboard import CLIENT --from FILE`", file.display())
                })?
            }
            [one] => client_named(one)?,
            _ => bail!("--from reads one file: name at most one client (its shape)"),
        };
        if !file.is_file() {
            bail!("{} does not exist (or is not a file)", file.display());
        }
        let doc = ClientDoc::open(file, client.format(), client.container())?;
        sources.push((client, doc.entries()?));
    } else {
        let chosen = if args.all {
            ALL.to_vec()
        } else if args.clients.is_empty() {
            bail!(
                "name the clients to import from (see `pegboard clients`), or pass --all or --from FILE"
            );
        } else {
            args.clients
                .iter()
                .map(|n| client_named(n))
                .collect::<Result<Vec<_>, _>>()?
        };
        for client in chosen {
            let Some(path) = client.user_path(&env) else {
                bail!("cannot find {}'s config file: set HOME", client.name());
            };
            if !path.is_file() {
                if !args.all {
                    eprintln_quiet(&format!("{}: no file at {}", client.name(), path.display()));
                }
                continue;
            }
            let doc = ClientDoc::open(&path, client.format(), client.container())?;
            sources.push((client, doc.entries()?));
        }
    }
    // A dry run changes nothing, not even by creating the config: it imports into a scratch one.
    let scratch = tempfile::tempdir()?;
    let will_create = ConfigEdit::existing(args.config.as_deref()).is_none();
    let mut config = if args.dry_run && will_create {
        ConfigEdit::scratch(&scratch.path().join("config.json"))?
    } else {
        ConfigEdit::open(args.config.as_deref())?
    };
    let mut lines = Vec::new();
    for (client, entries) in &sources {
        lines.extend(import_into(&mut config, *client, entries)?);
    }
    let mut out = String::new();
    for line in &lines {
        out.push_str(&line.render());
        out.push('\n');
    }
    if lines.is_empty() {
        out.push_str("no servers to import\n");
    }
    if args.dry_run && will_create {
        out.push_str("dry run: nothing written (pegboard's config does not exist yet; `import` would create it)\n");
    } else if args.dry_run {
        out.push_str(&format!(
            "dry run: {} not changed\n",
            config.path().display()
        ));
    } else {
        let path = config.path().to_path_buf();
        if config.changed() {
            out.push_str(&format!("wrote {}\n", path.display()));
        }
        config.save()?;
    }
    crate::output::print(&out)?;
    Ok(i32::from(lines.iter().any(|l| !l.in_pegboard())))
}

fn eprintln_quiet(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}
