//! `pegboard` built without code mode (`cargo test -p pegboard-cli --no-default-features --test
//! e2e_no_code_mode`): `serve --code-mode`, and a config whose `codeMode` turns it on, stop with
//! an error that says how to get a build with it; nothing of QuickJS is in the binary. With the
//! `code-mode` feature (the default) this file is empty.
#![cfg(not(feature = "code-mode"))]

mod common;

use anyhow::Result;
use serde_json::json;

/// `pegboard serve ARGS --config CONFIG` with stdin closed: its exit code and stderr.
fn serve(args: &[&str], config: &std::path::Path) -> Result<(Option<i32>, String)> {
    let out = std::process::Command::new(common::pegboard())
        .arg("serve")
        .args(args)
        .arg("--config")
        .arg(config)
        .stdin(std::process::Stdio::null())
        .output()?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    ))
}

#[test]
fn code_mode_is_refused_with_how_to_get_it() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let plain = common::observe::write_config(
        dir.path(),
        json!({"units": common::demo_server("units", &[])}),
    )?;
    let (code, stderr) = serve(&["--code-mode"], &plain)?;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--code-mode turns code mode on, but this pegboard was built without it")
            && stderr
                .contains("cargo install --locked --path crates/pegboard-cli --features code-mode"),
        "{stderr}"
    );
    let keyed = dir.path().join("keyed.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plain)?)?;
    config["codeMode"] = json!(true);
    std::fs::write(&keyed, config.to_string())?;
    let (code, stderr) = serve(&[], &keyed)?;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("`codeMode` in "), "{stderr}");
    // Nothing of the engine is linked in.
    let binary = std::fs::read(common::pegboard())?;
    assert!(
        !binary
            .windows(b"JS_NewRuntime".len())
            .any(|w| w == b"JS_NewRuntime"),
        "QuickJS is in the binary"
    );
    Ok(())
}
