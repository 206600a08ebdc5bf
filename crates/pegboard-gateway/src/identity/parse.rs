//! `clients` and `auth` from the file to an [`AccessConfig`]: `${VAR}` expanded, every field
//! checked, every error naming the client. Called by `crate::config` while it parses the file.

use std::num::NonZeroU32;
use std::sync::Arc;

use serde_json::Value;

use crate::limits::LimitSettings;
use crate::policy::ToolPatterns;

use super::access::{AccessConfig, AuthConfig, ClientConfig};
use super::claims::ClaimsMatch;
use super::errors::{AccessConfigError, ClientProblem};
use super::raw::{AUTH_FIELDS, CLIENT_FIELDS, RawAuth, RawClient, RawClients};
use super::token::TokenDigest;

/// Tokens shorter than this are accepted with a warning (guessable).
const SHORT_TOKEN: usize = 16;

/// Parse the `clients` and `auth` sections (`None` when the file has neither).
///
/// `expand` fills `${VAR}` (its error says why it cannot); `warn` takes each non-fatal problem
/// (an unknown field, a token written in the file).
///
/// # Errors
/// The first client or `auth` problem, naming the client.
pub fn parse_access(
    clients: Option<RawClients>,
    auth: Option<Value>,
    expand: &dyn Fn(&str) -> Result<String, String>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<AccessConfig>, AccessConfigError> {
    if clients.is_none() && auth.is_none() {
        return Ok(None);
    }
    let auth = auth.map(|a| parse_auth(a, expand, warn)).transpose()?;
    let clients = clients.unwrap_or_default();
    if clients.0.is_empty() {
        warn("`clients` is empty: only `--token`, if given, can reach the HTTP gateway".into());
    }
    let mut out: Vec<ClientConfig> = Vec::with_capacity(clients.0.len());
    for (name, body) in clients.0 {
        let client =
            parse_client(&name, body, auth.is_some(), expand, warn).map_err(|problem| {
                AccessConfigError::Client {
                    client: name.clone(),
                    problem,
                }
            })?;
        if let Some(token) = &client.token
            && let Some(first) = out.iter().find(|c| c.token.as_ref() == Some(token))
        {
            return Err(AccessConfigError::SameToken {
                first: first.name.to_string(),
                second: name,
            });
        }
        out.push(client);
    }
    if auth.is_some() && !out.iter().any(|c| c.jwt.is_some()) {
        warn(
            "`auth` is set but no client has a `jwt` object: every token of the issuer will be \
             answered 403"
                .into(),
        );
    }
    Ok(Some(AccessConfig { clients: out, auth }))
}

fn parse_auth(
    value: Value,
    expand: &dyn Fn(&str) -> Result<String, String>,
    warn: &mut dyn FnMut(String),
) -> Result<AuthConfig, AccessConfigError> {
    let bad = AccessConfigError::Auth;
    let value = known_fields(value, AUTH_FIELDS, "`auth`", warn)
        .map_err(|_| bad("must be an object with `issuer` and `audience`".into()))?;
    let raw: RawAuth = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    let field = |v: Option<String>, name: &str, what: &str| -> Result<String, AccessConfigError> {
        let v = v.ok_or_else(|| bad(format!("`{name}` is missing: {what}")))?;
        expand(&v).map_err(|e| bad(format!("in `{name}`: {e}")))
    };
    let issuer = field(
        raw.issuer,
        "issuer",
        "the URL of the authorization server whose tokens are accepted",
    )?;
    let audience = field(
        raw.audience,
        "audience",
        "this gateway's resource URL, e.g. https://gateway.example.com/mcp",
    )?;
    check_url(&issuer, "issuer", true).map_err(bad)?;
    check_url(&audience, "audience", false).map_err(bad)?;
    Ok(AuthConfig { issuer, audience })
}

/// An `http(s)` URL without a fragment; `https` unless the host is loopback (for the issuer,
/// whose keys are fetched from it: plain HTTP to a remote IdP would let anyone on the path
/// swap the keys).
fn check_url(text: &str, name: &str, must_be_https: bool) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("`{name}` `{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "https" | "http") || url.fragment().is_some() {
        return Err(format!(
            "`{name}` `{text}` must be an http(s) URL without a `#` fragment"
        ));
    }
    if must_be_https && url.scheme() == "http" && !is_loopback(&url) {
        return Err(format!(
            "`{name}` `{text}` must use https (plain http is accepted only on loopback, for testing)"
        ));
    }
    Ok(())
}

/// Whether `url`'s host is `localhost` or a loopback address.
pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `value` as an object with only `known` fields: the others are dropped with a warning.
fn known_fields(
    value: Value,
    known: &[&str],
    what: &str,
    warn: &mut dyn FnMut(String),
) -> Result<Value, ()> {
    let Value::Object(mut map) = value else {
        return Err(());
    };
    map.retain(|k, _| {
        let ok = known.contains(&k.as_str());
        if !ok {
            warn(format!("{what}: unknown field `{k}` ignored"));
        }
        ok
    });
    Ok(Value::Object(map))
}

fn parse_client(
    name: &str,
    body: Value,
    has_auth: bool,
    expand: &dyn Fn(&str) -> Result<String, String>,
    warn: &mut dyn FnMut(String),
) -> Result<ClientConfig, ClientProblem> {
    let body =
        known_fields(body, CLIENT_FIELDS, &format!("client `{name}`"), warn).map_err(|_| {
            ClientProblem::Shape(
                "must be an object such as {\"token\": \"${TOKEN}\", \"tools\": [\"docs-*\"]}"
                    .into(),
            )
        })?;
    let raw: RawClient =
        serde_json::from_value(body).map_err(|e| ClientProblem::Shape(e.to_string()))?;
    let token = match (raw.token, raw.token_sha256) {
        (Some(_), Some(_)) => return Err(ClientProblem::BothTokens),
        (Some(written), None) => Some(static_token(name, &written, expand, warn)?),
        (None, Some(hex)) => {
            Some(TokenDigest::from_hex(&hex).map_err(ClientProblem::MalformedHash)?)
        }
        (None, None) => None,
    };
    let jwt = match raw.jwt {
        Some(_) if !has_auth => return Err(ClientProblem::JwtWithoutAuth),
        Some(claims) => {
            let claims = ClaimsMatch::new(claims).map_err(ClientProblem::Claims)?;
            if claims.is_empty() {
                warn(format!(
                    "client `{name}`: `jwt` is empty, so every valid token of the issuer for this \
                     gateway is this client"
                ));
            }
            Some(claims)
        }
        None => None,
    };
    if token.is_none() && jwt.is_none() {
        return Err(ClientProblem::NoCredential);
    }
    let tools = match raw.tools {
        Some(list) => ToolPatterns::new(list).map_err(ClientProblem::Pattern)?,
        None => ToolPatterns::all(),
    };
    let limits = LimitSettings {
        max_sessions: limit(raw.max_sessions, "maxSessions", usize::MAX as u64)?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        max_concurrent: limit(raw.max_concurrent, "maxConcurrent", usize::MAX as u64)?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        calls_per_minute: limit(raw.calls_per_minute, "callsPerMinute", u64::from(u32::MAX))?
            .and_then(|n| u32::try_from(n).ok())
            .and_then(NonZeroU32::new),
    };
    Ok(ClientConfig {
        name: Arc::from(name),
        token,
        jwt,
        tools,
        resources: raw.resources.unwrap_or(true),
        limits,
    })
}

fn static_token(
    name: &str,
    written: &str,
    expand: &dyn Fn(&str) -> Result<String, String>,
    warn: &mut dyn FnMut(String),
) -> Result<TokenDigest, ClientProblem> {
    let from_var = written.contains("${");
    let token = expand(written).map_err(ClientProblem::Variable)?;
    if token.trim().is_empty() {
        return Err(ClientProblem::EmptyToken(from_var));
    }
    if token.trim() != token {
        return Err(ClientProblem::TokenWhitespace);
    }
    if !from_var {
        warn(format!(
            "client `{name}`: `token` is written in the file; write \"${{VAR}}\" or give \
             `tokenSha256` so the config holds no secret"
        ));
    }
    if token.chars().count() < SHORT_TOKEN {
        warn(format!(
            "client `{name}`: the token is shorter than {SHORT_TOKEN} characters and easy to guess; \
             use a long random one (e.g. `openssl rand -hex 32`)"
        ));
    }
    Ok(TokenDigest::of(&token))
}

/// A whole number from 1 to `max`, or `None` when absent.
fn limit(
    value: Option<Value>,
    field: &'static str,
    max: u64,
) -> Result<Option<u64>, ClientProblem> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.as_u64() {
        Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(ClientProblem::Limit {
            field,
            max,
            got: value.to_string(),
        }),
    }
}
