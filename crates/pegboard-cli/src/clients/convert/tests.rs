use super::*;

fn import(client: ClientId, entry: Value) -> Result<Imported, String> {
    to_pegboard(client, &entry)
}

#[test]
fn references_become_pegboard_variables() {
    assert_eq!(
        references(ClientId::VsCode, "Bearer ${env:TOKEN}").as_deref(),
        Ok("Bearer ${TOKEN}")
    );
    assert_eq!(
        references(ClientId::OpenCode, "{env:KEY}/x").as_deref(),
        Ok("${KEY}/x")
    );
    assert_eq!(
        references(ClientId::Gemini, "$HOME/$1 and $API_KEY").as_deref(),
        Ok("${HOME}/$1 and ${API_KEY}")
    );
    assert_eq!(
        references(ClientId::Cursor, "$HOME").as_deref(),
        Ok("$HOME")
    );
    assert!(references(ClientId::VsCode, "${input:token}").is_err());
    assert!(references(ClientId::VsCode, "${workspaceFolder}/x").is_err());
}

#[test]
fn gemini_fields_are_converted() {
    let got = import(
        ClientId::Gemini,
        json!({"command": "node", "args": ["s.js"], "env": {"K": "$KEY"}, "timeout": 30000, "trust": true, "includeTools": ["a"]}),
    )
    .expect("import");
    assert_eq!(
        got.entry,
        json!({"command": "node", "args": ["s.js"], "env": {"K": "${KEY}"}, "timeout": 30.0, "allow": ["a"]})
    );
    assert_eq!(got.notes, ["`trust` dropped (pegboard does not read it)"]);
    assert!(
        import(ClientId::Gemini, json!({"url": "http://h/sse"}))
            .expect_err("sse")
            .contains("SSE")
    );
    let http = import(
        ClientId::Gemini,
        json!({"httpUrl": "http://h/mcp", "headers": {"A": "b"}}),
    )
    .expect("http");
    assert_eq!(
        http.entry,
        json!({"url": "http://h/mcp", "headers": {"A": "b"}})
    );
}

#[test]
fn codex_headers_come_from_its_variables() {
    let got = import(
        ClientId::Codex,
        json!({"url": "https://h/mcp", "bearer_token_env_var": "TOK", "env_http_headers": {"X-Team": "TEAM"}, "startup_timeout_sec": 20}),
    )
    .expect("import");
    assert_eq!(
        got.entry,
        json!({"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOK}", "X-Team": "${TEAM}"}})
    );
    assert_eq!(got.notes.len(), 1);
}

#[test]
fn goose_opencode_and_zed_shapes_are_read() {
    let goose = import(ClientId::Goose, json!({"type": "stdio", "cmd": "npx", "args": ["-y", "m"], "envs": {}, "env_keys": ["K"], "enabled": true, "name": "m", "timeout": 300})).expect("goose");
    assert_eq!(
        goose.entry,
        json!({"command": "npx", "args": ["-y", "m"], "env": {"K": "${K}"}, "timeout": 300})
    );
    assert!(
        import(
            ClientId::Goose,
            json!({"type": "builtin", "name": "developer"})
        )
        .is_err()
    );
    let oc = import(ClientId::OpenCode, json!({"type": "local", "command": ["npx", "-y", "m"], "environment": {"A": "{env:A}"}, "enabled": false})).expect("opencode");
    assert_eq!(
        oc.entry,
        json!({"command": "npx", "args": ["-y", "m"], "env": {"A": "${A}"}, "disabled": true})
    );
    let zed_old = import(
        ClientId::Zed,
        json!({"command": {"path": "node", "args": ["x"], "env": {}}, "settings": {}}),
    )
    .expect("zed");
    assert_eq!(zed_old.entry, json!({"command": "node", "args": ["x"]}));
    let zed_new = import(
        ClientId::Zed,
        json!({"source": "custom", "command": "node", "args": ["x"]}),
    )
    .expect("zed");
    assert_eq!(zed_new.entry, zed_old.entry);
}

#[test]
fn http_launchers_reference_the_variable_never_the_token() {
    let launch = Launch::Http {
        url: "http://127.0.0.1:8700/mcp".into(),
        token_env: Some("PB_TOKEN".into()),
    };
    let vscode = launcher(ClientId::VsCode, &launch).expect("vscode");
    assert_eq!(vscode["headers"]["Authorization"], "Bearer ${env:PB_TOKEN}");
    let codex = launcher(ClientId::Codex, &launch).expect("codex");
    assert_eq!(
        codex,
        json!({"url": "http://127.0.0.1:8700/mcp", "bearer_token_env_var": "PB_TOKEN"})
    );
    assert_eq!(
        launcher(ClientId::Gemini, &launch).expect("gemini")["httpUrl"],
        "http://127.0.0.1:8700/mcp"
    );
    assert!(
        launcher(ClientId::ClaudeDesktop, &launch)
            .expect_err("desktop")
            .contains("stdio")
    );
    assert!(
        launcher(ClientId::Zed, &launch)
            .expect_err("zed")
            .contains("stdio")
    );
}

#[test]
fn the_launcher_is_recognised_in_every_shape() {
    let launch = Launch::Stdio {
        command: "/opt/bin/pegboard".into(),
        args: vec!["serve".into(), "--config".into(), "/c.json".into()],
    };
    for client in super::super::known::ALL {
        let entry = launcher(client, &launch).expect("stdio");
        assert!(is_pegboard(&entry), "{}: {entry}", client.name());
        let back = to_pegboard(client, &entry).expect("reads back");
        assert_eq!(
            back.entry["command"],
            "/opt/bin/pegboard",
            "{}",
            client.name()
        );
    }
}
