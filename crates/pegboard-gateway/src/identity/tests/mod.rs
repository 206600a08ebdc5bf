//! The `clients` / `auth` config through the real config parser (`config.rs`), and
//! static-token authentication with its HTTP answers (`authenticate.rs`).

mod authenticate;
mod config;

use std::path::Path;

use super::*;
use crate::config::ConfigError;

const CI_TOKEN: &str = "ci-bot-token-0123456789abcdef";
const ANALYST_TOKEN: &str = "analyst-token-0123456789abcdef";

fn vars(name: &str) -> Option<String> {
    match name {
        "CI_BOT_TOKEN" => Some(CI_TOKEN.into()),
        "ANALYST_TOKEN" => Some(ANALYST_TOKEN.into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn sha(token: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

fn parse(sections: &str) -> Result<crate::config::Config, ConfigError> {
    let text = format!(r#"{{"mcpServers": {{"units": {{"command": "units"}}}}, {sections}}}"#);
    crate::config::parse(&text, Path::new("/cfg/pegboard.json"), &vars)
}

fn access(sections: &str) -> AccessConfig {
    parse(sections).unwrap().access.unwrap()
}

fn error(sections: &str) -> String {
    parse(sections).unwrap_err().to_string()
}

fn issue_example() -> String {
    format!(
        r#""clients": {{
            "ci-bot":  {{ "token": "${{CI_BOT_TOKEN}}", "tools": ["units-*", "!units-list_units"] }},
            "analyst": {{ "tokenSha256": "{}", "tools": ["docs-*", "notes-search"] }},
            "alice":   {{ "jwt": {{ "sub": "alice@example.com" }} }},
            "readers": {{ "jwt": {{ "scope": "mcp:read" }}, "tools": ["*-search", "*-read"], "resources": false,
                          "maxSessions": 5, "maxConcurrent": 2, "callsPerMinute": 60 }}
        }},
        "auth": {{ "issuer": "https://idp.example.com", "audience": "https://gateway.example.com/mcp" }}"#,
        sha(ANALYST_TOKEN)
    )
}

fn authenticator(sections: &str, token: Option<&str>) -> Authenticator {
    Authenticator::new(Some(&access(sections)), token, AuthOptions::default()).unwrap()
}
