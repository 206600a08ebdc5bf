//! `pegboard clients`, `import`, `connect` and `disconnect`, run as the real binary on the twelve
//! clients' files (tests/client_files/: the shapes of each client's docs, with comments where the
//! format allows, other settings and servers) under a temporary HOME and XDG_CONFIG_HOME.

mod common;

use std::path::Path;

use common::client_home::{CLIENTS, ClientHome, fixture, read};
use serde_json::{Value, json};

/// The servers of a client file, as a JSON value, read with the same parsers as pegboard's (so
/// these checks see what the client would).
fn servers(client: &str, path: &Path) -> Value {
    let text = read(path);
    let whole: Value = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => {
            let doc: toml_edit::DocumentMut = text.parse().expect("toml");
            return doc.get("mcp_servers").map_or(Value::Null, toml_item);
        }
        Some("yaml") => serde_norway::from_str(&text).expect("yaml"),
        _ => jsonc_parser::cst::CstRootNode::parse(&text, &Default::default())
            .expect("json")
            .to_serde_value()
            .unwrap_or(Value::Null),
    };
    let key = match client {
        "vscode" => "servers",
        "zed" => "context_servers",
        "goose" => "extensions",
        "opencode" => "mcp",
        _ => "mcpServers",
    };
    let section = whole.get(key).cloned().unwrap_or(Value::Null);
    if let Value::Array(items) = section {
        // Continue's list, by name.
        return Value::Object(
            items
                .into_iter()
                .map(|i| (i["name"].as_str().unwrap_or_default().to_string(), i))
                .collect(),
        );
    }
    section
}

fn toml_item(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::Value(v) => toml_value(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_item(v)))
                .collect(),
        ),
        other => panic!("unexpected TOML item {other}"),
    }
}

fn toml_value(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => json!(s.value()),
        toml_edit::Value::Integer(i) => json!(i.value()),
        toml_edit::Value::Boolean(b) => json!(b.value()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value(v)))
                .collect(),
        ),
        other => json!(other.to_string()),
    }
}

fn clients_json(home: &ClientHome) -> Vec<Value> {
    let out = home.ok(&["clients", "--json"]);
    serde_json::from_str::<Vec<Value>>(&out).expect("clients --json")
}

fn pegboard_exe() -> String {
    std::fs::canonicalize(common::pegboard())
        .expect("canonical binary")
        .display()
        .to_string()
}

#[test]
fn clients_lists_every_client_with_its_file_and_servers() {
    let home = ClientHome::with_fixtures();
    let rows = clients_json(&home);
    let expected_servers = [
        ("claude-desktop", 1),
        ("claude-code", 2),
        ("cursor", 2),
        ("vscode", 3),
        ("windsurf", 2),
        ("zed", 2),
        ("codex", 2),
        ("gemini", 3),
        // The built-in `developer` extension is not a server.
        ("goose", 2),
        ("lmstudio", 1),
        ("continue", 2),
        ("opencode", 2),
    ];
    assert_eq!(rows.len(), 12);
    for (row, (client, count)) in rows.iter().zip(expected_servers) {
        let keys: Vec<&String> = row.as_object().expect("object").keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            ["connected", "found", "name", "path", "servers"],
            "{row}"
        );
        assert_eq!(row["name"], client);
        assert_eq!(
            row["path"],
            home.path_of(client).display().to_string(),
            "{client}"
        );
        assert_eq!(row["found"], true, "{client}");
        assert_eq!(row["servers"], count, "{client}");
        assert_eq!(row["connected"], false, "{client}");
    }
    // The table has the same rows.
    let table = home.ok(&["clients"]);
    assert!(table.starts_with("NAME"), "{table}");
    assert_eq!(table.lines().count(), 13, "{table}");

    // Without the files: not found, no servers.
    let empty = ClientHome::new();
    for row in clients_json(&empty) {
        assert_eq!(row["found"], false, "{row}");
        assert_eq!(row["servers"], 0, "{row}");
    }
}

#[test]
fn connect_then_disconnect_leaves_every_clients_file_byte_for_byte() {
    let home = ClientHome::with_fixtures();
    let exe = pegboard_exe();
    let config = home.config().display().to_string();
    for (client, _, _) in CLIENTS {
        let path = home.path_of(client);
        let before = read(&path);
        let out = home.ok(&["connect", client]);
        assert!(out.contains(&format!("{client}: connected")), "{out}");
        let after = read(&path);
        // Everything the user wrote is still there: every line of the original.
        for line in before.lines() {
            assert!(
                after.contains(line),
                "{client}: lost line {line:?}:\n{after}"
            );
        }
        let entry = &servers(client, &path)["pegboard"];
        let (command, args) = match client {
            "goose" => (entry["cmd"].clone(), entry["args"].clone()),
            "opencode" => (
                entry["command"][0].clone(),
                json!(entry["command"].as_array().expect("array")[1..]),
            ),
            _ => (entry["command"].clone(), entry["args"].clone()),
        };
        assert_eq!(command, json!(exe), "{client}: {entry}");
        assert_eq!(
            args,
            json!(["serve", "--config", config]),
            "{client}: {entry}"
        );
        // The other servers are still there.
        let names = servers(client, &path);
        let original = servers(client, &fixture(client));
        for name in original.as_object().expect("servers").keys() {
            assert_eq!(names[name], original[name], "{client}: {name}");
        }
        let backup = Path::new(&format!("{}.pegboard-backup", path.display())).to_path_buf();
        assert_eq!(read(&backup), before, "{client}: backup");
    }
    for row in clients_json(&home) {
        assert_eq!(row["connected"], true, "{row}");
    }
    // pegboard's config was created (there was none) and every client starts it.
    assert!(home.config().is_file());

    for (client, _, _) in CLIENTS {
        let path = home.path_of(client);
        let out = home.ok(&["disconnect", client]);
        assert!(out.contains(&format!("{client}: disconnected")), "{out}");
        assert_eq!(
            read(&path),
            read(&fixture(client)),
            "{client}: not byte-identical"
        );
    }
    for row in clients_json(&home) {
        assert_eq!(row["connected"], false, "{row}");
    }
}

#[test]
fn connecting_again_replaces_the_entry_and_client_names_the_view() {
    let home = ClientHome::with_fixtures();
    home.ok(&["connect", "cursor"]);
    let again = home.ok(&["connect", "cursor"]);
    assert!(again.contains("cursor: already connected"), "{again}");
    home.ok(&["connect", "cursor", "--client", "ide"]);
    let entry = &servers("cursor", &home.path_of("cursor"))["pegboard"];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("str"))
        .collect();
    assert_eq!(args[3..], ["--client", "ide"]);
    home.ok(&["disconnect", "cursor"]);
    assert_eq!(read(&home.path_of("cursor")), read(&fixture("cursor")));
}

#[test]
fn connect_http_writes_each_clients_own_reference_to_the_token_variable() {
    let home = ClientHome::with_fixtures();
    let url = "http://127.0.0.1:8700/mcp";
    let expect = [
        (
            "claude-code",
            json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${PB_TOKEN}"}}),
        ),
        (
            "cursor",
            json!({"url": url, "headers": {"Authorization": "Bearer ${env:PB_TOKEN}"}}),
        ),
        (
            "vscode",
            json!({"type": "http", "url": url, "headers": {"Authorization": "Bearer ${env:PB_TOKEN}"}}),
        ),
        (
            "windsurf",
            json!({"serverUrl": url, "headers": {"Authorization": "Bearer ${env:PB_TOKEN}"}}),
        ),
        (
            "gemini",
            json!({"httpUrl": url, "headers": {"Authorization": "Bearer ${PB_TOKEN}"}}),
        ),
        (
            "codex",
            json!({"url": url, "bearer_token_env_var": "PB_TOKEN"}),
        ),
        (
            "opencode",
            json!({"type": "remote", "url": url, "enabled": true, "headers": {"Authorization": "Bearer {env:PB_TOKEN}"}}),
        ),
    ];
    for (client, entry) in expect {
        let mut cmd = home.command(&["connect", client, "--http", url, "--token-env", "PB_TOKEN"]);
        let out = cmd
            .env("PB_TOKEN", "secret-token-value")
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{client}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = home.path_of(client);
        assert_eq!(servers(client, &path)["pegboard"], entry, "{client}");
        assert!(
            !read(&path).contains("secret-token-value"),
            "{client}: the token itself was written"
        );
        home.ok(&["disconnect", client]);
        assert_eq!(read(&path), read(&fixture(client)), "{client}");
    }
    // Without a token: the plain URL shapes.
    home.ok(&["connect", "zed", "--http", url]);
    assert_eq!(
        servers("zed", &home.path_of("zed"))["pegboard"],
        json!({"url": url})
    );
    home.ok(&["disconnect", "zed"]);

    // Clients that cannot take it: a clear error, the file untouched.
    for (client, args) in [
        ("claude-desktop", vec!["--http", url]),
        ("zed", vec!["--http", url, "--token-env", "PB_TOKEN"]),
        ("lmstudio", vec!["--http", url, "--token-env", "PB_TOKEN"]),
    ] {
        let mut all = vec!["connect", client];
        all.extend(args);
        let out = home.run(&all);
        assert_eq!(out.status.code(), Some(1), "{client}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("stdio"), "{client}: {err}");
        assert_eq!(
            read(&home.path_of(client)),
            read(&fixture(client)),
            "{client}"
        );
    }
}

#[test]
fn connect_move_takes_the_servers_behind_pegboard_and_disconnect_puts_them_back() {
    let home = ClientHome::with_fixtures();
    for client in [
        "cursor", "vscode", "codex", "goose", "continue", "opencode", "zed",
    ] {
        let path = home.path_of(client);
        let out = home.run(&["connect", client, "--move"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let left = servers(client, &path);
        let original = servers(client, &fixture(client));
        for name in original.as_object().expect("servers").keys() {
            let kept = client == "vscode" && name == "perplexity"
                || client == "goose" && name == "developer";
            assert_eq!(left.get(name).is_some(), kept, "{client}: {name}\n{stdout}");
        }
        // vscode's `${input:..}` server cannot run behind pegboard: exit 1, and it stays.
        assert_eq!(
            out.status.code(),
            Some(i32::from(client == "vscode")),
            "{client}: {stdout}"
        );
        assert!(left.get("pegboard").is_some(), "{client}");
    }
    let config: Value = serde_json::from_str(&read(&home.config())).expect("config");
    let mut names: Vec<&String> = config["mcpServers"]
        .as_object()
        .expect("servers")
        .keys()
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "SQLite",
            "context7",
            "docs",
            "fetch",
            "figma",
            "github",
            "linear",
            "memory",
            "memory-opencode",
            "postgres",
            "remote-tools",
            "time"
        ]
    );
    assert_eq!(
        config["mcpServers"]["linear"]["headers"]["Authorization"],
        "Bearer ${LINEAR_API_KEY}"
    );
    assert_eq!(
        config["mcpServers"]["figma"]["headers"]["Authorization"],
        "Bearer ${FIGMA_OAUTH_TOKEN}"
    );
    assert_eq!(
        config["mcpServers"]["memory-opencode"]["env"]["MEMORY_DIR"],
        "/tmp/memory"
    );

    for client in [
        "cursor", "vscode", "codex", "goose", "continue", "opencode", "zed",
    ] {
        let path = home.path_of(client);
        let out = home.ok(&["disconnect", client]);
        assert!(out.contains("put back"), "{client}: {out}");
        let back = servers(client, &path);
        assert_eq!(
            back,
            servers(client, &fixture(client)),
            "{client}:\n{}",
            read(&path)
        );
    }
    // For JSON with nothing after the moved entries, the text itself comes back.
    assert_eq!(read(&home.path_of("cursor")), read(&fixture("cursor")));
    // pegboard's config keeps them: they are the user's servers.
    let config: Value = serde_json::from_str(&read(&home.config())).expect("config");
    assert_eq!(config["mcpServers"].as_object().expect("servers").len(), 12);
}

#[test]
fn import_all_adds_each_server_once_and_says_why_for_the_others() {
    let home = ClientHome::with_fixtures();
    let out = home.run(&["import", "--all"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // vscode's `${input:..}` server and Gemini's SSE server cannot be imported.
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for line in [
        "claude-desktop: filesystem: added",
        "claude-code: memory: added",
        "cursor: memory: already there (same as memory)",
        "vscode: perplexity: not importable: `${input:perplexity-key}` is a reference only vscode can fill in",
        // Not the same github: Claude Code's sends a header.
        "vscode: github: added as github-vscode (the name github is taken by another server)",
        "windsurf: figma: added",
        "codex: figma: already there (same as figma)",
        "codex: docs: added; `startup_timeout_sec` dropped (pegboard does not read it)",
        "gemini: sseServer: not importable: SSE only",
        "goose: fetch: already there (same as fetch)",
        "continue: memory: already there (same as memory)",
        "opencode: memory: added as memory-opencode (the name memory is taken by another server)",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("developer"), "{stdout}");
    let config: Value = serde_json::from_str(&read(&home.config())).expect("config");
    let servers = &config["mcpServers"];
    assert_eq!(
        servers["pythonTools"],
        json!({"command": "python", "args": ["-m", "my_mcp_server", "--port", "8080"], "env": {"API_KEY": "${EXTERNAL_API_KEY}", "DATABASE_URL": "${DB_CONNECTION_STRING}"}, "cwd": "./mcp-servers/python", "timeout": 15.0})
    );
    assert_eq!(servers["postgres"]["command"], "npx");
    assert_eq!(
        servers["remote-tools"],
        json!({"url": "https://tools.example.com/mcp", "headers": {"X-Team": "platform"}, "timeout": 300})
    );
    // Every imported entry is one pegboard can use (variables given a value, as at start).
    let text = read(&home.config());
    let loaded = pegboard_gateway::config::parse(&text, &home.config(), &|_| Some("value".into()))
        .expect("pegboard loads the imported config");
    assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
    assert_eq!(
        loaded.servers.len(),
        servers.as_object().expect("servers").len()
    );

    // Again: everything is already there (the SSE and input servers still are not).
    let again = home.run(&["import", "--all"]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(!stdout.contains(": added"), "{stdout}");
    assert_eq!(again.status.code(), Some(1));

    // Clients whose every server imports: exit 0.
    let fresh = ClientHome::with_fixtures();
    let out = fresh.run(&["import", "cursor", "codex"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn import_dry_run_and_from_file_change_nothing_they_should_not() {
    let home = ClientHome::with_fixtures();
    let out = home.ok(&["import", "cursor", "--dry-run"]);
    assert!(out.contains("cursor: memory: added"), "{out}");
    assert!(!home.config().exists(), "a dry run created the config");

    // --from: a file in a client's format, named or guessed from its keys.
    let file = home.project.join("servers.toml");
    std::fs::copy(fixture("codex"), &file).expect("copy");
    let out = home.ok(&["import", "--from", "servers.toml"]);
    assert!(out.contains("codex: docs: added"), "{out}");
    let out = home.run(&[
        "import",
        "gemini",
        "--from",
        &fixture("gemini").display().to_string(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("gemini: httpServer: added"), "{stdout}");
    // Its SSE server cannot be imported: exit 1.
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

#[test]
fn bad_input_gets_a_clear_error_and_changes_no_file() {
    let home = ClientHome::with_fixtures();
    let unchanged = |home: &ClientHome| {
        for (client, _, _) in CLIENTS {
            assert_eq!(
                read(&home.path_of(client)),
                read(&fixture(client)),
                "{client} changed"
            );
            assert!(
                !Path::new(&format!(
                    "{}.pegboard-backup",
                    home.path_of(client).display()
                ))
                .exists()
            );
        }
        assert!(!home.config().exists(), "pegboard's config was created");
    };
    let fails = |home: &ClientHome, args: &[&str], says: &str| {
        let out = home.run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    fails(
        &home,
        &["connect", "emacs"],
        "unknown client `emacs` (known: claude-desktop, claude-code",
    );
    fails(&home, &["import", "emacs"], "unknown client `emacs`");
    fails(
        &home,
        &["connect", "goose", "--scope", "project"],
        "goose has no project-scope file",
    );
    unchanged(&home);

    // A malformed file of each format: FILE:LINE:COL, never written.
    for (client, broken) in [
        (
            "cursor",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n  }\n}\n",
        ),
        ("codex", "model = \"x\"\n[mcp_servers.a]\ncommand = \n"),
        ("goose", "extensions:\n  a: [1, 2\n"),
    ] {
        let path = home.path_of(client);
        std::fs::write(&path, broken).expect("write");
        for args in [
            vec!["connect", client],
            vec!["import", client],
            vec!["disconnect", client],
        ] {
            let out = home.run(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains(&format!("{}:", path.display())),
                "{args:?}: {err}"
            );
            assert!(err.contains("the file was not changed"), "{args:?}: {err}");
            assert_eq!(read(&path), broken, "{args:?}");
        }
        let line_col = String::from_utf8_lossy(&home.run(&["connect", client]).stderr).to_string();
        let after = line_col
            .split(&format!("{}:", path.display()))
            .nth(1)
            .expect("path");
        let mut parts = after.split(':');
        assert!(
            parts.next().expect("line").parse::<usize>().is_ok(),
            "{line_col}"
        );
        assert!(
            parts.next().expect("col").parse::<usize>().is_ok(),
            "{line_col}"
        );
        std::fs::copy(fixture(client), &path).expect("restore");
    }
    unchanged(&home);

    // A read-only file: refused, even when this test runs as root.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = home.path_of("vscode");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        fails(&home, &["connect", "vscode"], "is read-only");
        fails(&home, &["connect", "vscode", "--move"], "is read-only");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        unchanged(&home);
    }

    // Disconnecting a client that is not connected.
    fails(&home, &["disconnect", "cursor"], "cursor is not connected");
    unchanged(&home);

    // A malformed pegboard config: nothing written anywhere.
    std::fs::create_dir_all(home.config().parent().expect("dir")).expect("mkdir");
    std::fs::write(home.config(), "{\"mcpServers\": {\n").expect("write");
    fails(
        &home,
        &["connect", "cursor"],
        &format!("{}:", home.config().display()),
    );
    fails(
        &home,
        &["import", "cursor"],
        &format!("{}:", home.config().display()),
    );
    assert_eq!(read(&home.config()), "{\"mcpServers\": {\n");
    assert_eq!(read(&home.path_of("cursor")), read(&fixture("cursor")));
}

#[test]
fn project_scope_writes_the_projects_file_in_the_current_folder() {
    let home = ClientHome::with_fixtures();
    for (client, file) in [
        ("claude-code", ".mcp.json"),
        ("cursor", ".cursor/mcp.json"),
        ("vscode", ".vscode/mcp.json"),
    ] {
        let out = home.ok(&["connect", client, "--scope", "project"]);
        let path = home.project.join(file);
        assert!(out.contains(&path.display().to_string()), "{out}");
        assert!(servers(client, &path)["pegboard"].is_object(), "{client}");
        // The user file is untouched.
        assert_eq!(read(&home.path_of(client)), read(&fixture(client)));
        home.ok(&["disconnect", client, "--scope", "project"]);
        assert!(
            !path.exists(),
            "{client}: pegboard created {file} and should remove it"
        );
    }
}
