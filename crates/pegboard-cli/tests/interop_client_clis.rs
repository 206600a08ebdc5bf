//! `pegboard connect` checked by the clients themselves: the real Claude Code, Codex and Gemini
//! CLIs (npm, pinned in scripts/setup-test-deps.sh) run `mcp list` under a temporary HOME on the
//! file `connect` wrote. Claude Code and Gemini start every server they list to check it, so
//! they start `pegboard serve --config` on a config of the bundled demo servers and must find it
//! connected; Codex's `mcp list` only reads its config (it starts nothing), so it must list the
//! entry as written.
//!
//! With `--http URL --token-env VAR`, Claude Code and Gemini connect to a running `pegboard serve
//! --http --token` with the token they read from `VAR` through the reference `connect` wrote, and
//! fail with a wrong one.
//!
//! None of the three needs a network or an API key for `mcp list`. Gemini suppresses every MCP
//! server in a folder it does not trust, so the test trusts its project folder the way a user
//! does (`~/.gemini/trustedFolders.json`). Claude Code is told not to update itself or send
//! non-essential traffic.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::client_home::ClientHome;

/// `$PEGBOARD_CLIENT_CLIS`, else `<test deps>/clients` (where scripts/setup-test-deps.sh puts them).
fn cli(name: &str) -> PathBuf {
    let dir = std::env::var_os("PEGBOARD_CLIENT_CLIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::test_deps().join("clients"));
    common::installed(dir.join("node_modules/.bin").join(name))
}

/// Run `cmd` to its end (stdin closed) and return stdout and stderr together; a CLI still running
/// after two minutes is killed and fails the test.
fn run(cmd: Command) -> String {
    let (text, ok) = run_status(cmd);
    assert!(ok, "the client CLI failed: {text}");
    text
}

/// [`run`], with whether it exited 0 instead of requiring it.
fn run_status(mut cmd: Command) -> (String, bool) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("start the client CLI");
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out.expect("client CLI output"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("the client CLI did not finish within two minutes: {cmd:?}");
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.success())
}

fn client_command(home: &ClientHome, program: PathBuf) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(&home.project)
        .env("HOME", &home.home)
        .env("XDG_CONFIG_HOME", &home.xdg)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME");
    cmd
}

fn demo_config(home: &ClientHome) -> String {
    common::write_demo_config(&home.project)
        .display()
        .to_string()
}

/// The line of `text` about the entry `pegboard`.
fn pegboard_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains("pegboard:") || l.trim_start().starts_with("pegboard "))
        .unwrap_or_else(|| panic!("no pegboard entry listed:\n{text}"))
}

#[test]
fn claude_code_lists_the_entry_and_finds_it_connected() {
    let home = ClientHome::new();
    let config = demo_config(&home);
    // $CLAUDE_CONFIG_DIR moves Claude Code's .claude.json: pegboard must write it there.
    let claude_dir = home.home.join("claude-dir");
    std::fs::create_dir_all(&claude_dir).expect("mkdir");
    let out = home
        .command(&["connect", "claude-code", "--config", &config])
        .env("CLAUDE_CONFIG_DIR", &claude_dir)
        .output()
        .expect("connect");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(claude_dir.join(".claude.json").is_file());

    let mut list = client_command(&home, cli("claude"));
    list.args(["mcp", "list"])
        .env("CLAUDE_CONFIG_DIR", &claude_dir)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let text = run(list);
    let line = pegboard_line(&text);
    assert!(line.contains(&format!("serve --config {config}")), "{text}");
    assert!(
        line.contains("Connected") && !line.contains("Failed"),
        "{text}"
    );

    // After disconnect, Claude Code has no pegboard entry any more.
    let out = home
        .command(&["disconnect", "claude-code", "--config", &config])
        .env("CLAUDE_CONFIG_DIR", &claude_dir)
        .output()
        .expect("disconnect");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut list = client_command(&home, cli("claude"));
    list.args(["mcp", "list"])
        .env("CLAUDE_CONFIG_DIR", &claude_dir)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let text = run(list);
    assert!(!text.contains("pegboard"), "{text}");
}

#[test]
fn gemini_lists_the_entry_and_finds_it_connected() {
    let home = ClientHome::new();
    let config = demo_config(&home);
    home.ok(&["connect", "gemini", "--config", &config]);
    let trusted = serde_json::json!({ home.project.display().to_string(): "TRUST_FOLDER" });
    std::fs::write(
        home.home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .expect("trust");

    let mut list = client_command(&home, cli("gemini"));
    list.args(["mcp", "list"]);
    let text = run(list);
    let line = pegboard_line(&text);
    assert!(line.contains(&format!("serve --config {config}")), "{text}");
    assert!(
        line.contains("Connected") && !line.contains("Disconnected"),
        "{text}"
    );
}

#[test]
fn codex_lists_the_entry_connect_wrote_for_stdio_and_for_http() {
    let home = ClientHome::new();
    let config = demo_config(&home);
    // $CODEX_HOME moves Codex's config.toml: pegboard must write it there.
    let codex_home = home.home.join("codex-home");
    std::fs::create_dir_all(&codex_home).expect("mkdir");
    let connect = |args: &[&str]| {
        let out = home
            .command(args)
            .env("CODEX_HOME", &codex_home)
            .output()
            .expect("connect");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let list = || {
        let mut cmd = client_command(&home, cli("codex"));
        cmd.args(["mcp", "list", "--json"])
            .env("CODEX_HOME", &codex_home);
        let text = run(cmd);
        let start = text
            .find('[')
            .unwrap_or_else(|| panic!("no JSON list:\n{text}"));
        let end = text.rfind(']').expect("end of the JSON list");
        let servers: Vec<serde_json::Value> =
            serde_json::from_str(&text[start..=end]).expect("codex mcp list --json");
        servers
            .into_iter()
            .find(|s| s["name"] == "pegboard")
            .unwrap_or_else(|| panic!("codex does not list pegboard:\n{text}"))
    };
    connect(&["connect", "codex", "--config", &config]);
    let entry = list();
    let exe = std::fs::canonicalize(common::pegboard()).expect("binary");
    let transport = &entry["transport"];
    assert_eq!(transport["command"], exe.display().to_string(), "{entry}");
    assert_eq!(
        transport["args"],
        serde_json::json!(["serve", "--config", config]),
        "{entry}"
    );

    connect(&[
        "connect",
        "codex",
        "--config",
        &config,
        "--http",
        "http://127.0.0.1:8700/mcp",
        "--token-env",
        "PB_TOKEN",
    ]);
    let entry = list();
    let transport = &entry["transport"];
    assert_eq!(transport["url"], "http://127.0.0.1:8700/mcp", "{entry}");
    assert_eq!(transport["bearer_token_env_var"], "PB_TOKEN", "{entry}");
}

/// `claude mcp list` (or `gemini mcp list`) with the token variable set to `token`, on a blocking
/// thread (the gateway's stderr is drained by the runtime meanwhile).
async fn list_with_token(
    home: &ClientHome,
    program: &str,
    env: Vec<(&'static str, PathBuf)>,
    token: &str,
) -> String {
    let mut cmd = client_command(home, cli(program));
    cmd.args(["mcp", "list"])
        .env("PB_TOKEN", token)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || run_status(cmd).0)
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_and_gemini_reach_pegboard_over_http_with_the_token_from_the_variable() {
    let home = ClientHome::new();
    let config = common::write_demo_config(&home.project);
    let (mut gateway, url) = common::serve_http(&config, &["--token", "s3cret-token"], &[])
        .await
        .expect("pegboard serve --http");
    let claude_dir = home.home.join("claude-dir");
    std::fs::create_dir_all(&claude_dir).expect("mkdir");
    for client in ["claude-code", "gemini"] {
        let out = home
            .command(&[
                "connect",
                client,
                "--config",
                &config.display().to_string(),
                "--http",
                &url,
                "--token-env",
                "PB_TOKEN",
            ])
            .env("CLAUDE_CONFIG_DIR", &claude_dir)
            .output()
            .expect("connect");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(
        home.home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ home.project.display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("trust");

    for program in ["claude", "gemini"] {
        let env = vec![("CLAUDE_CONFIG_DIR", claude_dir.clone())];
        let text = list_with_token(&home, program, env.clone(), "s3cret-token").await;
        let line = pegboard_line(&text);
        assert!(line.contains(&url), "{program}: {text}");
        assert!(
            line.contains("Connected") && !line.contains("Disconnected"),
            "{program}: {text}"
        );
        // The token comes from the variable: with another value the gateway refuses it.
        let text = list_with_token(&home, program, env, "wrong-token").await;
        let line = pegboard_line(&text);
        assert!(
            !line.contains("✔ Connected") && !line.contains("✓"),
            "{program}: {text}"
        );
    }
    gateway.kill().await.expect("stop the gateway");
}
