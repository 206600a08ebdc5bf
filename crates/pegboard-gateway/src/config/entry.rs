//! One `mcpServers` entry turned into a [`ServerConfig`]: variables expanded, fields checked,
//! the namespace made safe; what cannot be used is an [`EntryProblem`] naming the way out.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::oauth::parse_oauth;
use super::raw::RawServer;
use super::{
    EntryProblem, MAX_MESSAGE_MIB, ServerConfig, SessionMode, Transport, expand, safe_namespace,
};

fn invalid(message: impl Into<String>) -> EntryProblem {
    EntryProblem::Invalid(message.into())
}

pub(super) fn build_server(
    name: &str,
    raw: RawServer,
    lookup: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
    defaults: &crate::pins::Guards,
) -> Result<ServerConfig, EntryProblem> {
    let guards = raw.guards().over(defaults).map_err(EntryProblem::Invalid)?;
    let ex = |s: &str, field: &str| {
        expand(s, lookup).map_err(|problem| EntryProblem::Variable {
            field: field.to_string(),
            problem,
        })
    };
    let kind = raw.kind.as_deref().map(str::to_ascii_lowercase);
    let transport = match (kind.as_deref(), raw.command, raw.url) {
        (Some("sse"), _, _) => return Err(EntryProblem::Sse),
        (Some(k), _, _)
            if !matches!(k, "stdio" | "http" | "streamable-http" | "streamablehttp") =>
        {
            return Err(invalid(format!(
                "unknown `type` `{k}`; use \"stdio\" (with `command`) or \"http\" (with `url`)"
            )));
        }
        (_, Some(_), Some(_)) => return Err(invalid("has both `command` and `url`; keep one")),
        (Some("stdio"), None, _) => return Err(invalid("`\"type\": \"stdio\"` needs a `command`")),
        (Some(k), Some(_), None) if k != "stdio" => {
            return Err(invalid(format!(
                "`\"type\": \"{k}\"` needs a `url`, not a `command`"
            )));
        }
        (_, Some(command), None) => {
            let command = ex(&command, "command")?;
            if command.trim().is_empty() {
                return Err(invalid("`command` is empty"));
            }
            if !raw.headers.is_empty() {
                warnings.push(format!(
                    "server `{name}`: `headers` only apply to `url` servers; ignored"
                ));
            }
            if raw.oauth.is_some() {
                warnings.push(format!(
                    "server `{name}`: `oauth` only applies to `url` servers; ignored"
                ));
            }
            let args = raw
                .args
                .iter()
                .map(|a| ex(a, "args"))
                .collect::<Result<Vec<_>, _>>()?;
            let mut env = BTreeMap::new();
            for (k, v) in &raw.env {
                env.insert(k.clone(), ex(v, &format!("env.{k}"))?);
            }
            let cwd = match raw.cwd {
                Some(c) => Some(PathBuf::from(ex(&c, "cwd")?)),
                None => None,
            };
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (_, None, Some(url)) => {
            let url = ex(&url, "url")?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(invalid(format!(
                    "`url` `{url}` must start with http:// or https://"
                )));
            }
            for (field, set) in [
                ("args", !raw.args.is_empty()),
                ("env", !raw.env.is_empty()),
                ("cwd", raw.cwd.is_some()),
            ] {
                if set {
                    warnings.push(format!(
                        "server `{name}`: `{field}` only applies to `command` servers; ignored"
                    ));
                }
            }
            let mut headers = BTreeMap::new();
            for (k, v) in &raw.headers {
                headers.insert(k.clone(), ex(v, &format!("headers.{k}"))?);
            }
            let oauth = parse_oauth(raw.oauth, &ex)?;
            Transport::Http {
                url,
                headers,
                oauth,
            }
        }
        (_, None, None) => {
            return Err(invalid(
                "has neither `command` (a program to start) nor `url` (a streamable HTTP endpoint); \
                 add one, or set `\"disabled\": true`",
            ));
        }
    };

    let namespace = if raw.prefix == Some(false) {
        if raw.namespace.is_some() {
            warnings.push(format!(
                "server `{name}`: `namespace` is ignored because `prefix` is false"
            ));
        }
        None
    } else {
        let ns = raw.namespace.unwrap_or_else(|| name.to_string());
        if ns.trim().is_empty() {
            return Err(invalid(
                "`namespace` is empty; give a name or set `\"prefix\": false`",
            ));
        }
        let safe = safe_namespace(&ns);
        if safe.chars().all(|c| c == '-') {
            return Err(invalid(format!(
                "namespace `{ns}` has no letter or digit; set `\"namespace\"` to a name such as `tools`"
            )));
        }
        Some(safe)
    };

    let timeout = match raw.timeout {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(invalid(format!(
                "`timeout` must be a number of seconds between 0 and 86400 (got {t})"
            )));
        }
    };

    let max_message = match raw.max_message_mib {
        None => None,
        Some(m) if m.fract() == 0.0 && (1.0..=MAX_MESSAGE_MIB).contains(&m) => {
            // A whole number of MiB up to 4096: the product fits in a u64, and in usize on 64 bits.
            usize::try_from((m as u64) << 20).ok()
        }
        Some(m) => {
            return Err(invalid(format!(
                "`maxMessageMib` must be a whole number of MiB between 1 and {MAX_MESSAGE_MIB} (got {m})"
            )));
        }
    };

    let session = match raw.session.as_deref() {
        None | Some("shared") => SessionMode::Shared,
        Some("per-client") => SessionMode::PerClient,
        Some(other) => {
            return Err(invalid(format!(
                "`session` must be \"shared\" (one connection for all clients, the default) or \
                 \"per-client\" (one connection, for a `command` one process, per client session); got `{other}`"
            )));
        }
    };

    Ok(ServerConfig {
        name: name.to_string(),
        namespace,
        transport,
        allow: raw.allow,
        deny: raw.deny,
        timeout,
        max_message,
        session,
        guards,
    })
}
