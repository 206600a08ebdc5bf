//! The guard fields of a config and the lock read beside it.

use std::path::Path;

use super::*;
use crate::pins::{OnChange, OnNew};

fn parse_str(text: &str) -> std::result::Result<Config, ConfigError> {
    parse(text, Path::new("/cfg/pegboard.json"), &|_| None)
}

#[test]
fn guards_default_then_file_then_entry() -> std::result::Result<(), ConfigError> {
    let cfg = parse_str(
        r#"{"onChange": "warn", "maxResultTokens": 25000, "stripInvisible": false,
            "mcpServers": {
                "a": {"command": "x"},
                "b": {"command": "x", "onChange": "hide", "onNew": "hide", "maxResultTokens": 100, "stripInvisible": true}
            }}"#,
    )?;
    let (a, b) = (&cfg.servers[0].guards, &cfg.servers[1].guards);
    assert_eq!(
        (
            a.on_change,
            a.on_new,
            a.strip_invisible,
            a.max_result_tokens
        ),
        (OnChange::Warn, OnNew::Allow, false, Some(25_000))
    );
    assert_eq!(
        (
            b.on_change,
            b.on_new,
            b.strip_invisible,
            b.max_result_tokens
        ),
        (OnChange::Hide, OnNew::Hide, true, Some(100))
    );
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    assert_eq!(cfg.lock_file, Path::new("/cfg/pegboard.lock"));
    // Without a file lock, nothing is pinned.
    assert!(a.pins.is_none());

    let plain = parse_str(r#"{"mcpServers": {"a": {"command": "x"}}}"#)?;
    let g = &plain.servers[0].guards;
    assert_eq!(
        (
            g.on_change,
            g.on_new,
            g.strip_invisible,
            g.max_result_tokens
        ),
        (OnChange::Hide, OnNew::Allow, true, None)
    );
    // --max-result-tokens fills in where nothing is set.
    let capped = plain.with_max_result_tokens(7);
    assert_eq!(capped.servers[0].guards.max_result_tokens, Some(7));
    Ok(())
}

#[test]
fn a_bad_guard_value_in_an_entry_skips_it_and_at_the_top_fails_the_file() {
    let cfg = parse_str(r#"{"mcpServers": {"a": {"command": "x", "onNew": "maybe"}, "b": {"command": "x", "maxResultTokens": 0.5}, "c": {"command": "x"}}}"#)
        .expect("the file parses");
    assert_eq!(cfg.servers.len(), 1);
    let skipped: Vec<String> = cfg.skipped.iter().map(ToString::to_string).collect();
    assert!(
        skipped[0].contains("`onNew` must be \"allow\""),
        "{skipped:?}"
    );
    assert!(
        skipped[1].contains("`maxResultTokens` must be a whole number"),
        "{skipped:?}"
    );
    let err =
        parse_str(r#"{"onChange": "ignore", "mcpServers": {"a": {"command": "x"}}}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/cfg/pegboard.json: `onChange` must be \"warn\" (list it, log a warning) or \"hide\" (keep it off the board until accepted); got `ignore`"
    );
}

#[test]
fn load_reads_the_lock_beside_the_config_or_at_lock_file()
-> std::result::Result<(), Box<dyn std::error::Error>> {
    use crate::pins::lock::{self, LOCK_VERSION, Lock, Pin, ServerPins};
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("pegboard.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}}}"#,
    )?;
    assert!(load(&config)?.servers[0].guards.pins.is_none());

    let mut pins = ServerPins::default();
    pins.tools
        .insert("t".into(), Pin::of(serde_json::json!({"name": "t"})));
    let mut written = Lock {
        pegboard_lock: LOCK_VERSION,
        ..Lock::default()
    };
    written.servers.insert("a".into(), pins.clone());
    lock::write(&dir.path().join("pegboard.lock"), &written)?;
    let cfg = load(&config)?;
    assert_eq!(cfg.servers[0].guards.pins.as_deref(), Some(&pins));
    // A lock without a section for `b` pins nothing of it: everything of it is new.
    assert_eq!(
        cfg.servers[1].guards.pins.as_deref(),
        Some(&ServerPins::default())
    );

    // `lockFile`, relative to the config's folder.
    std::fs::write(
        &config,
        r#"{"lockFile": "locks/p.lock", "mcpServers": {"a": {"command": "x"}}}"#,
    )?;
    assert!(load(&config)?.servers[0].guards.pins.is_none());
    std::fs::create_dir(dir.path().join("locks"))?;
    lock::write(&dir.path().join("locks/p.lock"), &written)?;
    let cfg = load(&config)?;
    assert_eq!(cfg.lock_file, dir.path().join("locks/p.lock"));
    assert!(cfg.servers[0].guards.pins.is_some());

    // A broken lock fails the load, naming the file.
    std::fs::write(dir.path().join("locks/p.lock"), "{")?;
    let err = load(&config).unwrap_err();
    assert!(
        err.to_string()
            .contains("p.lock:1:1: not a pegboard lock file"),
        "{err}"
    );
    Ok(())
}

#[test]
fn changed_pins_make_an_entry_changed_for_a_reload_and_reports_do_not()
-> std::result::Result<(), ConfigError> {
    let text = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let (one, two) = (parse_str(text)?, parse_str(text)?);
    // Each load has its own report, yet the entries are equal.
    assert_eq!(one.servers[0], two.servers[0]);
    let mut pinned = two.servers[0].clone();
    pinned.guards.pins = Some(std::sync::Arc::new(crate::pins::lock::ServerPins::default()));
    assert_ne!(one.servers[0], pinned);
    Ok(())
}
