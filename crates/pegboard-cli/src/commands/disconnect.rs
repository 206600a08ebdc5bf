//! `pegboard disconnect CLIENT`: undo `connect`.

use anyhow::Result;

use crate::cli::{DisconnectArgs, Scope};
use crate::clients::client_named;
use crate::clients::connect::{Target, disconnect};
use crate::clients::known::Env;

/// Run `pegboard disconnect`.
pub fn run(args: DisconnectArgs) -> Result<i32> {
    let client = client_named(&args.client)?;
    let cwd = std::env::current_dir()?;
    let project = (args.scope == Scope::Project).then_some(cwd.as_path());
    let target = Target::new(client, project, &Env::from_process())?;
    // The record of `connect --move` sits beside the config; without a config there is none.
    let config = pegboard_gateway::config::locate(args.config.as_deref())
        .ok()
        .or_else(crate::config_edit::default_path)
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p));
    let done = disconnect(config.as_deref(), &target)?;
    let mut out = String::new();
    if !done.restored.is_empty() {
        out.push_str(&format!("put back: {}\n", done.restored.join(", ")));
    }
    for name in &done.kept {
        out.push_str(&format!(
            "{name}: not put back ({} has a server by that name again)\n",
            client.name()
        ));
    }
    if done.removed_file {
        out.push_str(&format!(
            "{}: disconnected ({} removed: pegboard had created it)\n",
            client.name(),
            target.path.display()
        ));
    } else {
        out.push_str(&format!(
            "{}: disconnected ({})\n",
            client.name(),
            target.path.display()
        ));
    }
    crate::output::print(&out)?;
    Ok(0)
}
