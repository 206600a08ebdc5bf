//! `clients` and `auth` as the config parser reads them.

use super::access::AuthConfig;
use super::token::TokenDigest;
use super::*;

#[test]
fn the_issue_example_parses_in_file_order() {
    let cfg = parse(&issue_example()).unwrap();
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    let a = cfg.access.unwrap();
    let names: Vec<&str> = a.clients.iter().map(|c| &*c.name).collect();
    assert_eq!(names, ["ci-bot", "analyst", "alice", "readers"]);
    assert_eq!(a.clients[0].token, Some(TokenDigest::of(CI_TOKEN)));
    assert_eq!(a.clients[1].token, Some(TokenDigest::of(ANALYST_TOKEN)));
    assert!(a.clients[2].jwt.is_some() && a.clients[2].tools.sees_everything());
    let readers = &a.clients[3];
    assert!(!readers.resources);
    assert_eq!(readers.limits.max_sessions, Some(5));
    assert_eq!(readers.limits.max_concurrent, Some(2));
    assert_eq!(readers.limits.calls_per_minute.map(|n| n.get()), Some(60));
    assert_eq!(
        a.auth,
        Some(AuthConfig {
            issuer: "https://idp.example.com".into(),
            audience: "https://gateway.example.com/mcp".into()
        })
    );
}

#[test]
fn a_file_without_clients_or_auth_has_no_access_section() {
    assert_eq!(parse(r#""x": 1"#).unwrap().access, None);
}

#[test]
fn two_clients_with_the_same_token_are_refused_naming_both() {
    let e = error(&format!(
        r#""clients": {{ "a": {{"token": "${{CI_BOT_TOKEN}}"}}, "b": {{"tokenSha256": "{}"}} }}"#,
        sha(CI_TOKEN).to_uppercase()
    ));
    assert!(e.contains("clients `a` and `b` hold the same token"), "{e}");
    assert!(e.starts_with("/cfg/pegboard.json: "), "{e}");
}

#[test]
fn bad_credentials_are_refused_naming_the_client() {
    let cases = [
        (
            r#"{"token": "${EMPTY}"}"#,
            "client `c`: `token` is empty (its variable is set to nothing)",
        ),
        (r#"{"token": "  "}"#, "client `c`: `token` is empty"),
        (
            r#"{"token": "${UNSET_VAR}"}"#,
            "client `c`: in `token`: environment variable `UNSET_VAR` is not set",
        ),
        (
            r#"{"tokenSha256": "abc"}"#,
            "client `c`: `tokenSha256` is 3 characters long",
        ),
        (r#"{"tools": ["*"]}"#, "client `c`: no credential"),
        (
            r#"{"token": "${CI_BOT_TOKEN}", "tokenSha256": "00"}"#,
            "client `c`: has both",
        ),
        (
            r#"{"jwt": {"sub": "x"}}"#,
            "client `c`: has `jwt` but the config has no `auth`",
        ),
        (r#""not an object""#, "client `c`: must be an object"),
        (
            r#"{"token": "${CI_BOT_TOKEN}", "tools": "docs-*"}"#,
            "client `c`: invalid type: string",
        ),
        (
            r#"{"token": "${CI_BOT_TOKEN}", "tools": ["docs-[a"]}"#,
            "client `c`: in `tools`: pattern `docs-[a` is not a valid glob",
        ),
    ];
    for (body, want) in cases {
        let e = error(&format!(r#""clients": {{"c": {body}}}"#));
        assert!(e.contains(want), "{body}: {e}");
    }
}

#[test]
fn limits_must_be_whole_numbers_from_one() {
    for bad in ["0", "1.5", "\"3\"", "-1"] {
        let e = error(&format!(
            r#""clients": {{"c": {{"token": "${{CI_BOT_TOKEN}}", "maxConcurrent": {bad}}}}}"#
        ));
        assert!(
            e.contains("`maxConcurrent` must be a whole number from 1"),
            "{bad}: {e}"
        );
    }
    let e =
        error(r#""clients": {"c": {"token": "${CI_BOT_TOKEN}", "callsPerMinute": 5000000000}}"#);
    assert!(
        e.contains("`callsPerMinute` must be a whole number from 1 to 4294967295"),
        "{e}"
    );
}

#[test]
fn a_client_written_twice_is_refused() {
    let e = error(
        r#""clients": {"c": {"token": "${CI_BOT_TOKEN}"}, "c": {"token": "${ANALYST_TOKEN}"}}"#,
    );
    assert!(e.contains("client `c` appears twice"), "{e}");
}

#[test]
fn unknown_fields_and_tokens_in_the_file_are_warned() {
    let cfg = parse(
        r#""clients": {"c": {"token": "written-in-the-file-0123456789", "color": "red"}},
           "auth": {"issuer": "https://idp", "audience": "https://gw/mcp", "jwks": "x"}"#,
    )
    .unwrap();
    let all = cfg.warnings.join("\n");
    assert!(
        all.contains("client `c`: unknown field `color` ignored"),
        "{all}"
    );
    assert!(
        all.contains("`auth`: unknown field `jwks` ignored"),
        "{all}"
    );
    assert!(
        all.contains("client `c`: `token` is written in the file"),
        "{all}"
    );
    assert!(all.contains("no client has a `jwt`"), "{all}");
}

#[test]
fn auth_needs_an_https_issuer_and_a_url_audience() {
    let e = error(r#""auth": {"issuer": "http://idp.example.com", "audience": "https://gw/mcp"}"#);
    assert!(
        e.contains("`auth`: `issuer` `http://idp.example.com` must use https"),
        "{e}"
    );
    let e = error(r#""auth": {"audience": "https://gw/mcp"}"#);
    assert!(e.contains("`auth`: `issuer` is missing"), "{e}");
    let e = error(r#""auth": {"issuer": "https://idp", "audience": "gateway"}"#);
    assert!(e.contains("`audience` `gateway` is not a URL"), "{e}");
    // Plain http on loopback is for tests.
    parse(
        r#""auth": {"issuer": "http://127.0.0.1:4000", "audience": "http://127.0.0.1:8080/mcp"}"#,
    )
    .unwrap();
}
