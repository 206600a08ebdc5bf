//! Shared helpers for the end-to-end tests (spawn the built `pegboard` binary).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The folder cargo put the binaries in (target/debug).
pub fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_pegboard"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A demo server binary built by `cargo build -p demo-servers`.
pub fn demo_bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.is_file(),
        "{} is missing: build the demo servers first (`cargo build -p demo-servers`, or `cargo test --workspace`)",
        path.display()
    );
    path
}

/// Write a config with the notes and units demo servers into `dir`.
pub fn write_demo_config(dir: &Path) -> PathBuf {
    let config = serde_json::json!({
        "mcpServers": {
            "notes": { "command": demo_bin("pegboard-demo-notes") },
            "units": { "command": demo_bin("pegboard-demo-units") }
        }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}
