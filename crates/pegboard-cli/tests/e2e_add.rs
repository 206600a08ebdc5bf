//! `pegboard add NAME -- CMD`, `add NAME --url`, `remove`, `enable`, `disable` on real config
//! files: what they write, what they refuse (leaving every file as it was), and two `add`s at
//! once (the lock: both entries are there after).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

fn pegboard(args: &[&str], home: &Path) -> Output {
    std::process::Command::new(common::pegboard())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env_remove("PEGBOARD_CONFIG")
        .current_dir(home)
        .output()
        .expect("run pegboard")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

/// A config with other settings, as a user's file has them.
fn user_config(dir: &Path) -> PathBuf {
    let path = dir.join("pegboard.json");
    std::fs::write(
        &path,
        r#"{
  "toolSearch": {"mode": "off"},
  "mcpServers": {
    "zeta": {"command": "zeta-server", "args": ["--fast"], "timeout": 10},
    "alpha": {"url": "http://127.0.0.1:9/mcp"}
  },
  "onChange": "warn"
}
"#,
    )
    .expect("write");
    path
}

#[test]
fn add_a_command_and_a_url_keeping_order_and_other_settings() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = user_config(home.path());
    let before = std::fs::read_to_string(&config).expect("read");
    let c = config.to_str().expect("utf-8");
    let out = pegboard(
        &[
            "add",
            "memory",
            "-c",
            c,
            "--env",
            "MEMORY_FILE_PATH=/tmp/m.json",
            "--cwd",
            "/tmp",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-memory",
            "--flag",
        ],
        home.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("added `memory`"),
        "{}",
        text(&out.stdout)
    );
    let out = pegboard(
        &[
            "add",
            "docs",
            "-c",
            c,
            "--url",
            "https://docs.example.com/mcp",
            "--header",
            "Authorization: Bearer ${DOCS_TOKEN}",
        ],
        home.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = read(&config);
    assert_eq!(
        written["mcpServers"]["memory"],
        json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory", "--flag"],
               "env": {"MEMORY_FILE_PATH": "/tmp/m.json"}, "cwd": "/tmp"})
    );
    assert_eq!(
        written["mcpServers"]["docs"],
        json!({"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}})
    );
    // Entries keep their order (new ones last), top-level keys theirs, other settings kept.
    let raw = std::fs::read_to_string(&config).expect("read");
    let at = |s: &str| raw.find(s).unwrap_or_else(|| panic!("{s} in {raw}"));
    assert!(
        at("\"toolSearch\"") < at("\"mcpServers\"") && at("\"mcpServers\"") < at("\"onChange\"")
    );
    assert!(
        at("\"zeta\"") < at("\"alpha\"")
            && at("\"alpha\"") < at("\"memory\"")
            && at("\"memory\"") < at("\"docs\"")
    );
    assert_eq!(written["mcpServers"]["zeta"]["timeout"], 10);
    assert_eq!(written["onChange"], "warn");
    // The backup is the file as it was before the first change.
    let backup = home.path().join("pegboard.json.pegboard-backup");
    assert_eq!(std::fs::read_to_string(backup).expect("backup"), before);
    // What was written loads as a config.
    let loaded = pegboard_gateway::config::parse(&raw, &config, &|_| Some("set".into()))
        .expect("the written file is a valid config");
    assert!(loaded.skipped().is_empty(), "{:?}", loaded.skipped());
    assert_eq!(loaded.servers.len(), 4);
}

#[test]
fn disable_enable_remove() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = user_config(home.path());
    let c = config.to_str().expect("utf-8");
    let out = pegboard(&["disable", "zeta", "-c", c], home.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(read(&config)["mcpServers"]["zeta"]["disabled"], true);
    let out = pegboard(&["enable", "zeta", "-c", c], home.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        read(&config)["mcpServers"]["zeta"]
            .get("disabled")
            .is_none()
    );
    assert_eq!(
        read(&config)["mcpServers"]["zeta"]["args"],
        json!(["--fast"])
    );
    let out = pegboard(&["remove", "zeta", "-c", c], home.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let servers = read(&config)["mcpServers"].clone();
    assert_eq!(servers, json!({"alpha": {"url": "http://127.0.0.1:9/mcp"}}));
}

#[test]
fn bad_input_changes_no_file() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = user_config(home.path());
    let c = config.to_str().expect("utf-8");
    let before = std::fs::read(&config).expect("read");
    let cases: &[(&[&str], &str)] = &[
        (&["remove", "nope", "-c", c], "no server `nope`"),
        (&["enable", "nope", "-c", c], "no server `nope`"),
        (&["disable", "nope", "-c", c], "(servers: zeta, alpha)"),
        (&["add", "zeta", "-c", c, "--", "other"], "already exists"),
        (&["add", "x", "-c", c], "say how to run `x`"),
        (
            &["add", "x", "-c", c, "--url", "ftp://h/mcp"],
            "must start with http",
        ),
        (
            &[
                "add",
                "x",
                "-c",
                c,
                "--url",
                "http://h/mcp",
                "--header",
                "NoColon",
            ],
            "--header `NoColon`",
        ),
        (
            &["add", "x", "-c", c, "--env", "NOEQUALS", "--", "cmd"],
            "--env `NOEQUALS`",
        ),
    ];
    for (args, expected) in cases {
        let out = pegboard(args, home.path());
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&config).expect("read"),
            before,
            "{args:?} changed the file"
        );
    }
    assert!(!home.path().join("pegboard.json.pegboard-backup").exists());
    // A file that does not parse is refused, and kept as it is.
    let broken = home.path().join("broken.json");
    std::fs::write(&broken, "{\"mcpServers\": {\"a\": ").expect("write");
    let out = pegboard(
        &[
            "add",
            "b",
            "-c",
            broken.to_str().expect("utf-8"),
            "--",
            "cmd",
        ],
        home.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("broken.json"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&broken).expect("read"),
        "{\"mcpServers\": {\"a\": "
    );
    // remove on a config that does not exist creates nothing.
    let none = home.path().join("none.json");
    let out = pegboard(
        &["remove", "a", "-c", none.to_str().expect("utf-8")],
        home.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!none.exists());
}

#[test]
fn add_creates_the_default_config_and_says_so() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = pegboard(&["add", "units", "--", "units-server"], home.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let created = home.path().join(".config/pegboard/config.json");
    assert!(
        text(&out.stderr).contains(&format!("created {}", created.display())),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        read(&created),
        json!({"mcpServers": {"units": {"command": "units-server", "args": []}}})
    );
}

#[test]
fn two_adds_at_once_both_land() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = user_config(home.path());
    let c = config.to_str().expect("utf-8").to_string();
    // Many at once: without the lock, one read-modify-write would drop another's entry.
    let children: Vec<_> = (0..8)
        .map(|i| {
            std::process::Command::new(common::pegboard())
                .args([
                    "add",
                    &format!("s{i}"),
                    "-c",
                    &c,
                    "--",
                    "server",
                    &i.to_string(),
                ])
                .env("HOME", home.path())
                .env_remove("PEGBOARD_CONFIG")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let servers = read(&config)["mcpServers"].clone();
    for i in 0..8 {
        assert_eq!(
            servers[format!("s{i}")]["args"],
            json!([i.to_string()]),
            "{servers}"
        );
    }
    assert!(servers.get("zeta").is_some() && servers.get("alpha").is_some());
}
