//! A gateway built without the `code-mode` feature (`cargo test -p pegboard-gateway --test
//! no_code_mode`, no features): asking for code mode, by the builder (`--code-mode`) or by the
//! config's `codeMode`, is an error that says how to get a build with it, and a config that
//! says `"codeMode": false` builds as before. With the feature this file is empty.
#![cfg(not(feature = "code-mode"))]

use std::path::Path;

use pegboard_gateway::config::{CodeModeSettings, parse};
use pegboard_gateway::{Gateway, GatewayError};

fn config(code_mode: &str) -> pegboard_gateway::config::Config {
    let text = format!(
        r#"{{"mcpServers": {{"units": {{"command": "pegboard-demo-units"}}}}{code_mode}}}"#
    );
    parse(&text, Path::new("pegboard.json"), &|_| None).expect("a good config")
}

fn refused(builder: pegboard_gateway::GatewayBuilder) -> GatewayError {
    match builder.build() {
        Ok(_) => panic!("built with code mode asked for"),
        Err(error) => error,
    }
}

fn says_how_to_get_it(error: &GatewayError, asked_by: &str) {
    let text = error.to_string();
    for part in [
        asked_by,
        "built without it",
        "pip and npm packages",
        "--features code-mode",
    ] {
        assert!(text.contains(part), "{part:?} not in {text:?}");
    }
}

#[test]
fn the_flag_is_refused_with_how_to_get_code_mode() {
    let error = refused(Gateway::builder(config("")).code_mode(CodeModeSettings::default()));
    assert!(
        matches!(error, GatewayError::NoCodeMode { .. }),
        "{error:?}"
    );
    says_how_to_get_it(&error, "--code-mode");
}

#[test]
fn the_config_key_is_refused_alike_and_false_is_fine() {
    for on in [r#", "codeMode": true"#, r#", "codeMode": {"maxCalls": 5}"#] {
        let error = refused(Gateway::builder(config(on)));
        says_how_to_get_it(&error, "`codeMode` in pegboard.json");
    }
    assert!(
        Gateway::builder(config(r#", "codeMode": false"#))
            .build()
            .is_ok()
    );
    assert!(Gateway::builder(config("")).build().is_ok());
}
