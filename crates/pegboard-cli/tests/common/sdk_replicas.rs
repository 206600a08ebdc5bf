//! The official SDK clients that call through a fleet of replicas (`tests/clients/python/replicas.py`
//! and `tests/clients/ts/replicas.mjs`): the command that starts one, its own flags left to the
//! test (sessions, calls, concurrency, timeout, ...).

use std::path::Path;

use super::{installed, test_deps};

/// Which SDK's client.
#[derive(Clone, Copy, Debug)]
pub enum Sdk {
    /// The official Python SDK (`mcp`), a legacy stateful session.
    Python,
    /// The official TypeScript SDK (`@modelcontextprotocol/sdk`).
    Ts,
}

/// The command that runs `sdk`'s replicas client (from the installed test dependencies).
pub fn command(sdk: Sdk) -> tokio::process::Command {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    match sdk {
        Sdk::Python => {
            let mut c =
                tokio::process::Command::new(installed(test_deps().join("venv/bin/python")));
            c.arg(clients.join("python/replicas.py"));
            c
        }
        Sdk::Ts => {
            let modules = test_deps().join("node/node_modules");
            installed(modules.join("@modelcontextprotocol/sdk/package.json"));
            let mut c = tokio::process::Command::new("node");
            c.arg(clients.join("ts/replicas.mjs"))
                .arg("--node-modules")
                .arg(modules);
            c
        }
    }
}
