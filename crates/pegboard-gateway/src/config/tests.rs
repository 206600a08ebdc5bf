use super::*;

fn vars(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/ada".into()),
        "TOKEN" => Some("s3cret".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

type Result<T> = std::result::Result<T, ConfigError>;

fn parse_str(text: &str) -> Result<Config> {
    parse(text, Path::new("/cfg/pegboard.json"), &vars)
}

#[test]
fn claude_desktop_format_parses_in_file_order() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {
                "zeta": {"command": "npx", "args": ["-y", "@x/server"], "env": {"A": "1"}},
                "alpha": {"url": "http://127.0.0.1:9000/mcp", "headers": {"X-Key": "k"}}
            }}"#,
    )?;
    assert_eq!(cfg.servers.len(), 2);
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    let zeta = &cfg.servers[0];
    assert_eq!(zeta.name, "zeta");
    assert_eq!(zeta.namespace.as_deref(), Some("zeta"));
    assert_eq!(
        zeta.transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@x/server".into()],
            env: BTreeMap::from([("A".into(), "1".into())]),
            cwd: None,
        }
    );
    assert_eq!(
        cfg.servers[1].transport,
        Transport::Http {
            url: "http://127.0.0.1:9000/mcp".into(),
            headers: BTreeMap::from([("X-Key".into(), "k".into())]),
            oauth: Default::default(),
        }
    );
    Ok(())
}

#[test]
fn vscode_format_with_type_parses() -> Result<()> {
    let cfg = parse_str(
        r#"{"inputs": [], "servers": {
                "fs": {"type": "stdio", "command": "mcp-fs"},
                "web": {"type": "http", "url": "https://example.com/mcp"}
            }}"#,
    )?;
    assert_eq!(cfg.servers.len(), 2);
    assert!(matches!(cfg.servers[0].transport, Transport::Stdio { .. }));
    assert!(matches!(cfg.servers[1].transport, Transport::Http { .. }));
    assert!(cfg.warnings.is_empty());
    Ok(())
}

#[test]
fn pegboard_extras_are_read() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {
                "a": {"command": "x", "namespace": "web", "allow": ["search"], "deny": ["rm"], "timeout": 2.5},
                "b": {"command": "y", "prefix": false},
                "c": {"command": "z", "disabled": true}
            }}"#,
    )?;
    assert_eq!(cfg.servers.len(), 2, "disabled entries are dropped");
    let a = &cfg.servers[0];
    assert_eq!(a.namespace.as_deref(), Some("web"));
    assert_eq!(a.allow, Some(vec!["search".to_string()]));
    assert_eq!(a.deny, vec!["rm".to_string()]);
    assert_eq!(a.timeout, Some(Duration::from_millis(2500)));
    assert_eq!(cfg.servers[1].namespace, None);
    Ok(())
}

#[test]
fn unknown_fields_warn_naming_server_and_field() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {"notes": {"command": "x", "autoApprove": [], "envFile": "a"}}}"#,
    )?;
    assert_eq!(cfg.servers.len(), 1);
    assert_eq!(cfg.warnings.len(), 2);
    assert!(cfg.warnings[0].contains("`notes`") && cfg.warnings[0].contains("`autoApprove`"));
    assert!(cfg.warnings[1].contains("`envFile`"));
    Ok(())
}

#[test]
fn bad_json_reports_file_line_and_column() {
    let err = parse_str("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}").err();
    let msg = format!("{:#}", err.expect("must fail"));
    assert!(msg.starts_with("/cfg/pegboard.json:2:"), "{msg}");
    assert!(msg.contains("line 2"), "{msg}");
}

#[test]
fn wrong_type_reports_line_and_column() {
    let err =
        parse_str("{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"args\": \"-v\"}\n}}").err();
    let msg = format!("{:#}", err.expect("must fail"));
    assert!(msg.contains(":2:"), "{msg}");
    assert!(msg.contains("expected a sequence"), "{msg}");
}

/// The one skipped entry's message; the config itself parsed.
fn skipped_message(text: &str) -> String {
    let cfg = parse_str(text).expect("a bad entry is skipped, not fatal");
    assert_eq!(cfg.skipped().len(), 1, "{:?}", cfg.skipped());
    cfg.skipped()[0].to_string()
}

#[test]
fn entry_without_command_or_url_is_named() {
    let msg = skipped_message(r#"{"mcpServers": {"broken": {"args": []}}}"#);
    assert!(
        msg.contains("server `broken`") && msg.contains("neither `command`"),
        "{msg}"
    );
}

#[test]
fn missing_servers_object_is_an_error() {
    let msg = format!("{:#}", parse_str(r#"{"other": 1}"#).expect_err("must fail"));
    assert!(msg.contains("no `mcpServers`"), "{msg}");
}

#[test]
fn sse_type_is_refused_with_advice() {
    let msg = skipped_message(r#"{"servers": {"s": {"type": "sse", "url": "http://x/sse"}}}"#);
    assert!(
        msg.contains("not supported") && msg.contains("\"type\": \"http\""),
        "{msg}"
    );
}

#[test]
fn variables_expand_in_args_env_url_and_headers() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {
                "a": {"command": "x", "args": ["${HOME}/notes", "$${HOME}", "cost: $5"], "env": {"T": "${TOKEN}"}},
                "b": {"url": "http://h/${MISSING:-mcp}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
    )?;
    let Transport::Stdio { args, env, .. } = &cfg.servers[0].transport else {
        panic!("stdio expected")
    };
    assert_eq!(args, &["/home/ada/notes", "${HOME}", "cost: $5"]);
    assert_eq!(env["T"], "s3cret");
    let Transport::Http { url, headers, .. } = &cfg.servers[1].transport else {
        panic!("http expected")
    };
    assert_eq!(url, "http://h/mcp");
    assert_eq!(headers["Authorization"], "Bearer s3cret");
    Ok(())
}

#[test]
fn unset_variable_is_a_clear_error() {
    let msg =
        skipped_message(r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}"#);
    assert!(
        msg.contains("server `a`") && msg.contains("`NOPE` is not set") && msg.contains("env.K"),
        "{msg}"
    );
}

#[test]
fn expand_edge_cases() {
    assert_eq!(expand("${EMPTY:-d}", &vars).ok().as_deref(), Some("d"));
    assert_eq!(expand("${EMPTY}", &vars).ok().as_deref(), Some(""));
    assert_eq!(expand("a$", &vars).ok().as_deref(), Some("a$"));
    assert!(expand("${HOME", &vars).is_err());
    assert!(expand("${input:key}", &vars).is_err());
}

#[test]
fn paths_are_kept_as_given() -> Result<()> {
    let cfg = parse_str(r#"{"mcpServers": {"a": {"command": "./bin/server", "cwd": "work"}}}"#)?;
    let Transport::Stdio { command, cwd, .. } = &cfg.servers[0].transport else {
        panic!("stdio expected")
    };
    assert_eq!(command, "./bin/server");
    assert_eq!(cwd.as_deref(), Some(Path::new("work")));
    Ok(())
}

#[test]
fn default_locations_are_local_then_xdg_then_home() {
    let c = default_candidates(Some("/x".into()), Some("/home/u".into()));
    assert_eq!(
        c,
        vec![
            PathBuf::from("pegboard.json"),
            PathBuf::from("/x/pegboard/config.json")
        ]
    );
    let c = default_candidates(None, Some("/home/u".into()));
    assert_eq!(c[1], PathBuf::from("/home/u/.config/pegboard/config.json"));
}

#[test]
fn missing_explicit_file_is_named() {
    let msg = format!(
        "{:#}",
        locate(Some(Path::new("/nope/x.json"))).expect_err("must fail")
    );
    assert!(msg.contains("/nope/x.json"), "{msg}");
}

#[test]
fn a_bad_entry_is_skipped_with_its_line_and_the_rest_is_served() -> Result<()> {
    let cfg = parse_str(
        "{\"servers\": {\n  \"good\": {\"command\": \"x\"},\n  \"old\": {\"type\": \"sse\", \"url\": \"http://x/sse\"},\n  \
         \"vs\": {\"command\": \"y\", \"env\": {\"K\": \"${input:key}\"}},\n  \"also\": {\"command\": \"z\"}\n}}",
    )?;
    let names: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "also"]);
    let skipped = cfg.skipped();
    assert_eq!(skipped.len(), 2);
    assert_eq!(
        (skipped[0].name.as_str(), skipped[0].line),
        ("old", Some(3))
    );
    assert_eq!(skipped[0].problem, EntryProblem::Sse);
    assert!(
        skipped[0]
            .to_string()
            .starts_with("/cfg/pegboard.json:3: server `old` skipped")
    );
    assert_eq!((skipped[1].name.as_str(), skipped[1].line), ("vs", Some(4)));
    assert!(
        skipped[1].to_string().contains("editor variable"),
        "{}",
        skipped[1]
    );
    Ok(())
}

#[test]
fn strict_turns_a_skipped_entry_into_a_failure() -> Result<()> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("pegboard.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"a": {"command": "x"}, "b": {"type": "sse", "url": "http://x"}}}"#,
    )
    .expect("write");
    assert_eq!(load_strict(&path, false)?.servers.len(), 1);
    let err = load_strict(&path, true).expect_err("strict refuses it");
    let msg = err.to_string();
    assert!(
        msg.contains("server `b` skipped") && msg.contains("--strict"),
        "{msg}"
    );
    Ok(())
}

#[test]
fn keys_with_dots_or_spaces_become_safe_namespaces() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {"github.com": {"command": "x"}, "My Server": {"command": "y"}, "n": {"command": "z", "namespace": "a.b"}}}"#,
    )?;
    let namespaces: Vec<Option<&str>> =
        cfg.servers.iter().map(|s| s.namespace.as_deref()).collect();
    assert_eq!(
        namespaces,
        [Some("github_com"), Some("My_Server"), Some("a_b")]
    );
    let board = pegboard::PegBoard::new();
    for ns in namespaces.into_iter().flatten() {
        assert_eq!(board.naming().namespace(Some(ns)).ok().flatten(), Some(ns));
    }
    Ok(())
}

#[test]
fn a_key_written_twice_in_one_section_is_said_to_appear_twice() {
    let err = parse_str(
        "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"a\": {\"command\": \"y\"}\n}}",
    )
    .expect_err("a repeated key is refused");
    let msg = err.to_string();
    assert!(msg.contains("server `a` appears twice"), "{msg}");
    assert!(!msg.contains("both"), "{msg}");
    assert!(msg.starts_with("/cfg/pegboard.json:3:"), "{msg}");
}

#[test]
fn a_key_in_both_sections_is_named() {
    let err =
        parse_str(r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}"#)
            .expect_err("refused");
    assert!(err.to_string().contains("appears in both"), "{err}");
}

#[test]
fn max_message_mib_is_per_server_and_wins_over_the_default() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {
                "big": {"command": "x", "maxMessageMib": 64},
                "plain": {"command": "y"},
                "zero": {"command": "z", "maxMessageMib": 0},
                "half": {"command": "z", "maxMessageMib": 1.5}
            }}"#,
    )?;
    assert_eq!(cfg.servers.len(), 2);
    assert_eq!(cfg.servers[0].max_message, Some(64 << 20));
    assert_eq!(cfg.servers[1].max_message, None);
    assert_eq!(cfg.servers[1].message_limit(), DEFAULT_MAX_MESSAGE);
    assert_eq!(cfg.skipped().len(), 2);
    assert!(
        cfg.skipped()[0]
            .to_string()
            .contains("`maxMessageMib` must be a whole number"),
        "{}",
        cfg.skipped()[0]
    );
    // The command line's limit fills in the servers without their own.
    let cfg = cfg.with_max_message(16 << 20);
    assert_eq!(cfg.servers[0].message_limit(), 64 << 20);
    assert_eq!(cfg.servers[1].message_limit(), 16 << 20);
    Ok(())
}

#[test]
fn session_is_shared_unless_per_client_and_a_bad_value_is_skipped_with_its_line() -> Result<()> {
    let cfg = parse_str(
        "{\"mcpServers\": {\n  \"plain\": {\"command\": \"x\"},\n  \"own\": {\"command\": \"y\", \"session\": \"per-client\"},\n  \
         \"one\": {\"command\": \"z\", \"session\": \"shared\"},\n  \"typo\": {\"command\": \"w\", \"session\": \"perclient\"}\n}}",
    )?;
    let modes: Vec<(&str, SessionMode)> = cfg
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.session))
        .collect();
    assert_eq!(
        modes,
        [
            ("plain", SessionMode::Shared),
            ("own", SessionMode::PerClient),
            ("one", SessionMode::Shared)
        ]
    );
    let skipped = cfg.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    let msg = skipped[0].to_string();
    assert!(
        msg.starts_with(
            "/cfg/pegboard.json:5: server `typo` skipped: `session` must be \"shared\""
        ),
        "{msg}"
    );
    assert!(msg.contains("got `perclient`"), "{msg}");
    Ok(())
}

#[test]
fn oauth_settings_are_read_with_variables_and_the_secret_hidden() -> Result<()> {
    let cfg = parse_str(
        r#"{"credentials": "keyring", "mcpServers": {
            "corp": {"url": "https://mcp.corp.example/mcp", "oauth": {
                "clientId": "pegboard", "clientSecret": "${TOKEN}", "scopes": ["a", "b:c"],
                "redirectPort": 40000}},
            "plain": {"url": "https://mcp.example/mcp"}
        }}"#,
    )?;
    let Transport::Http { oauth, .. } = &cfg.servers[0].transport else {
        panic!("an http server");
    };
    assert_eq!(oauth.client_id.as_deref(), Some("pegboard"));
    assert_eq!(
        oauth.client_secret.as_ref().map(Secret::expose),
        Some("s3cret")
    );
    assert_eq!(oauth.scopes, ["a", "b:c"]);
    assert_eq!(oauth.redirect_port(), 40000);
    assert_eq!(oauth.credentials, CredentialsBackend::Keyring);
    assert!(!format!("{oauth:?}").contains("s3cret"));
    let Transport::Http { oauth, .. } = &cfg.servers[1].transport else {
        panic!("an http server");
    };
    assert_eq!(oauth.redirect_port(), DEFAULT_REDIRECT_PORT);
    assert_eq!(oauth.credentials, CredentialsBackend::Keyring);
    Ok(())
}

#[test]
fn a_bad_oauth_object_skips_only_its_entry() -> Result<()> {
    let cfg = parse_str(
        r#"{"mcpServers": {
            "typo": {"url": "https://a.example/mcp", "oauth": {"clientID": "x"}},
            "secret": {"url": "https://b.example/mcp", "oauth": {"clientSecret": "s"}},
            "cimd": {"url": "https://c.example/mcp", "oauth": {"clientMetadataUrl": "http://c.example/m.json"}},
            "scopes": {"url": "https://d.example/mcp", "oauth": {"scopes": ["a b"]}},
            "ok": {"url": "https://e.example/mcp"}
        }}"#,
    )?;
    assert_eq!(cfg.servers.len(), 1);
    let messages: Vec<String> = cfg.skipped().iter().map(ToString::to_string).collect();
    assert!(
        messages[0].contains("unknown field `clientID`"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("needs `oauth.clientId`"),
        "{messages:?}"
    );
    assert!(
        messages[2].contains("must be an https:// URL"),
        "{messages:?}"
    );
    assert!(messages[3].contains("is not one scope"), "{messages:?}");
    Ok(())
}

#[test]
fn an_unknown_credentials_backend_is_refused() {
    let err = parse_str(r#"{"credentials": "vault", "mcpServers": {}}"#).expect_err("must fail");
    assert!(
        err.to_string()
            .contains("`credentials` must be \"keyring\" (the OS keyring), \"file\""),
        "{err}"
    );
    assert!(
        err.to_string().contains("\"store\" (the fleet's store"),
        "{err}"
    );
}

#[test]
fn credentials_in_the_store_are_read() -> Result<()> {
    let config = parse_str(
        r#"{"credentials": "store", "mcpServers": {"a": {"url": "https://a.example/mcp"}}}"#,
    )?;
    let Transport::Http { oauth, .. } = &config.servers[0].transport else {
        panic!("an http server");
    };
    assert_eq!(oauth.credentials, CredentialsBackend::Store);
    Ok(())
}

#[test]
fn secrets_are_asked_for_by_their_whole_reference() -> Result<()> {
    let lookup = |name: &str| (name == "secret:brave.KEY").then(|| "k-1".to_string());
    let text = r#"{"mcpServers": {
        "brave": {"command": "x", "env": {"KEY": "${secret:brave.KEY}", "B": "${secret:none.X:-dflt}"}},
        "other": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${secret:gone.TOKEN}"}}
    }}"#;
    let config = parse(text, Path::new("c.json"), &lookup)?;
    let Transport::Stdio { env, .. } = &config.servers[0].transport else {
        panic!("not stdio");
    };
    assert_eq!(env["KEY"], "k-1");
    assert_eq!(env["B"], "dflt");
    let skipped = config.skipped()[0].to_string();
    assert!(
        skipped.contains("secret `gone.TOKEN` is not in the credential store"),
        "{skipped}"
    );
    assert!(
        skipped.contains("pegboard secret set gone.TOKEN"),
        "{skipped}"
    );
    assert_eq!(
        expand("${secret:a b}", &lookup),
        Err(VariableProblem::NotAName("secret:a b".into()))
    );
    // Editor variables are still refused as such.
    assert!(matches!(
        expand("${input:x}", &lookup),
        Err(VariableProblem::Editor(_))
    ));
    Ok(())
}
