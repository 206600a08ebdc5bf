//! A registry `server.json` turned into a PegBoard config entry (pure: no I/O). Values the
//! document leaves to the user come from a `provide` callback (the command line's `--env`, a
//! prompt); secret ones go into the entry as `${secret:ENTRY.NAME}` references and are handed
//! back to be stored, never written into the entry.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::server_json::{Argument, Input, KeyValueInput, Package, Remote, ServerJson};

/// What the conversion made.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The `mcpServers` entry.
    pub entry: Value,
    /// Secrets to store, as (`ENTRY.NAME`, value); the entry refers to each by name.
    pub secrets: Vec<(String, String)>,
    /// One line each: what was chosen, what was left out.
    pub notes: Vec<String>,
}

/// Why a server.json cannot become an entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    /// Neither packages nor remotes.
    #[error("`{0}` lists no packages and no remotes: its server.json does not say how to run it")]
    NothingToRun(String),
    /// Only SSE remotes (and nothing else usable).
    #[error(
        "`{name}` is only offered over the old HTTP+SSE transport ({urls}), which PegBoard does not \
         speak (MCP replaced it with streamable HTTP); ask its publisher for a streamable-http remote"
    )]
    SseOnly {
        /// The server.
        name: String,
        /// Its SSE URLs.
        urls: String,
    },
    /// Packages of kinds PegBoard cannot start.
    #[error(
        "`{name}` offers no package PegBoard can start ({kinds}; npm, pypi and oci are supported) \
         and no streamable-http remote"
    )]
    Unsupported {
        /// The server.
        name: String,
        /// What it offers.
        kinds: String,
    },
    /// Required values nobody gave.
    #[error(
        "`{name}` needs {}: give each with --env NAME=VALUE (or run in a terminal to be asked)",
        .missing.join(", ")
    )]
    Missing {
        /// The server.
        name: String,
        /// Each missing value, with its description.
        missing: Vec<String>,
    },
}

/// What is asked of the user for one value.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted<'a> {
    /// The variable's, header's or argument's name (what `--env NAME=` gives).
    pub name: &'a str,
    /// Its description, if any.
    pub description: Option<&'a str>,
    /// A password or token: asked without echo.
    pub secret: bool,
    /// Required with no default: worth a prompt (an optional one is only taken from `--env`).
    pub required: bool,
    /// The values allowed, if listed.
    pub choices: &'a [String],
}

/// How a value is obtained: `Some` when given (by `--env` or a prompt).
pub type Provide<'p> = dyn FnMut(&Wanted<'_>) -> Option<String> + 'p;

/// Convert `server` into the entry `entry_name` (see the module docs).
///
/// # Errors
/// [`ConvertError`]: nothing runnable, SSE only, or required values missing.
pub fn convert(
    server: &ServerJson,
    entry_name: &str,
    provide: &mut Provide<'_>,
) -> Result<Converted, ConvertError> {
    if server.packages.is_empty() && server.remotes.is_empty() {
        return Err(ConvertError::NothingToRun(server.name.clone()));
    }
    let mut ctx = Context {
        entry: entry_name,
        provide,
        secrets: Vec::new(),
        missing: Vec::new(),
        notes: Vec::new(),
    };
    let runnable = server.packages.iter().find(|p| {
        matches!(p.registry_type.as_str(), "npm" | "pypi" | "oci")
            && p.transport.as_ref().is_none_or(|t| t.kind == "stdio")
    });
    let remote = server.remotes.iter().find(|r| r.kind == "streamable-http");
    let entry = match (runnable, remote) {
        (Some(package), _) => ctx.package(package),
        (None, Some(remote)) => ctx.remote(remote),
        (None, None) => return Err(refusal(server)),
    };
    if !ctx.missing.is_empty() {
        return Err(ConvertError::Missing {
            name: server.name.clone(),
            missing: ctx.missing,
        });
    }
    Ok(Converted {
        entry,
        secrets: ctx.secrets,
        notes: ctx.notes,
    })
}

/// Why nothing could be used: SSE only, or unsupported packages.
fn refusal(server: &ServerJson) -> ConvertError {
    let sse: Vec<&str> = server
        .remotes
        .iter()
        .filter(|r| r.kind == "sse")
        .map(|r| r.url.as_str())
        .collect();
    let local_sse = server
        .packages
        .iter()
        .any(|p| p.transport.as_ref().is_some_and(|t| t.kind == "sse"));
    if !sse.is_empty() && server.packages.is_empty() || local_sse && server.remotes.is_empty() {
        return ConvertError::SseOnly {
            name: server.name.clone(),
            urls: if sse.is_empty() {
                "a package serving SSE".to_string()
            } else {
                sse.join(", ")
            },
        };
    }
    let kinds: Vec<String> = server
        .packages
        .iter()
        .map(|p| {
            let transport = p.transport.as_ref().map_or("stdio", |t| t.kind.as_str());
            format!("{} {} over {transport}", p.registry_type, p.identifier)
        })
        .chain(server.remotes.iter().map(|r| format!("{} remote", r.kind)))
        .collect();
    ConvertError::Unsupported {
        name: server.name.clone(),
        kinds: kinds.join(", "),
    }
}

struct Context<'a, 'p> {
    entry: &'a str,
    provide: &'a mut Provide<'p>,
    secrets: Vec<(String, String)>,
    missing: Vec<String>,
    notes: Vec<String>,
}

/// A literal value as a config string: `${` would be read as a variable.
fn literal(value: &str) -> String {
    value.replace("${", "$${")
}

impl Context<'_, '_> {
    /// The value of one input named `name`, ready for the config (secrets as references);
    /// `None` when it is optional and nobody gave it, or required and missing (noted).
    fn value(&mut self, name: &str, input: &Input) -> Option<String> {
        self.value_or_default(name, input, input.is_required)
    }

    /// [`value`](Self::value); with `use_default`, a default fills an optional input too (a
    /// `{variable}` of a template must be filled for the template to mean anything).
    fn value_or_default(&mut self, name: &str, input: &Input, use_default: bool) -> Option<String> {
        if let Some(fixed) = &input.value {
            let filled = self.fill(fixed, &input.variables)?;
            return Some(filled);
        }
        let wanted = Wanted {
            name,
            description: input.description.as_deref(),
            secret: input.is_secret,
            required: input.is_required && input.default.is_none(),
            choices: &input.choices,
        };
        let value = match ((self.provide)(&wanted), &input.default) {
            (Some(v), _) => v,
            (None, Some(default)) if use_default => default.clone(),
            (None, Some(default)) => {
                self.notes
                    .push(format!("{name}: left to the server's default ({default})"));
                return None;
            }
            (None, None) if input.is_required => {
                let what = match &input.description {
                    Some(d) => format!("{name} ({d})"),
                    None => name.to_string(),
                };
                self.missing.push(what);
                return None;
            }
            (None, None) => return None,
        };
        Some(self.keep(name, &value, input.is_secret))
    }

    /// `value` as the config holds it: a secret stored aside and referred to.
    fn keep(&mut self, name: &str, value: &str, secret: bool) -> String {
        if secret {
            let key = format!("{}.{name}", self.entry);
            self.secrets.push((key.clone(), value.to_string()));
            format!("${{secret:{key}}}")
        } else {
            literal(value)
        }
    }

    /// `template` with each `{var}` of `variables` filled (an unknown `{x}` stays as it is, as
    /// the schema says); `None` when a required variable is missing.
    fn fill(&mut self, template: &str, variables: &BTreeMap<String, Input>) -> Option<String> {
        let mut out = literal(template);
        let mut complete = true;
        for (var, input) in variables {
            let pattern = format!("{{{var}}}");
            if !out.contains(&pattern) {
                continue;
            }
            match self.value_or_default(var, input, true) {
                Some(v) => out = out.replace(&pattern, &v),
                None => complete = false,
            }
        }
        complete.then_some(out)
    }

    /// The command-line words of `args`.
    fn arguments(&mut self, args: &[Argument]) -> Vec<String> {
        let mut out = Vec::new();
        for arg in args {
            let named = arg.kind == "named";
            let label = match (&arg.name, &arg.value_hint) {
                (Some(n), _) if named => n.trim_start_matches('-').to_string(),
                (_, Some(hint)) => hint.clone(),
                (Some(n), None) => n.clone(),
                (None, None) => "argument".to_string(),
            };
            let Some(value) = self.value(&label, &arg.input) else {
                continue;
            };
            match (named, arg.name.as_deref()) {
                (true, Some(flag)) if arg.input.format.as_deref() == Some("boolean") => {
                    if value == "true" {
                        out.push(flag.to_string());
                    }
                }
                (true, Some(flag)) => {
                    out.push(flag.to_string());
                    out.push(value);
                }
                _ => out.push(value),
            }
        }
        out
    }

    /// The `env` of a package (only what is given or required).
    fn environment(&mut self, vars: &[KeyValueInput]) -> Map<String, Value> {
        let mut env = Map::new();
        for var in vars {
            if let Some(value) = self.value(&var.name, &var.input) {
                env.insert(var.name.clone(), Value::String(value));
            }
        }
        env
    }

    fn package(&mut self, package: &Package) -> Value {
        let version = package.version.as_deref().filter(|v| !v.is_empty());
        let runtime = self.arguments(&package.runtime_arguments);
        let program = self.arguments(&package.package_arguments);
        let env = self.environment(&package.environment_variables);
        let id = &package.identifier;
        let (command, args) = match package.registry_type.as_str() {
            "npm" => {
                let mut args = vec!["-y".to_string()];
                args.extend(runtime);
                args.push(match version {
                    Some(v) => format!("{id}@{v}"),
                    None => id.clone(),
                });
                args.extend(program);
                ("npx", args)
            }
            "pypi" => {
                let spec = match version {
                    Some(v) => format!("{id}=={v}"),
                    None => id.clone(),
                };
                let mut args = runtime;
                // `uvx NAME` runs the program NAME; a package with extras (`pkg[x]`) still
                // installs a program named after the package.
                match id.split_once('[') {
                    Some((program_name, _)) => {
                        args.extend(["--from".to_string(), spec, program_name.to_string()]);
                    }
                    None => args.push(spec),
                }
                args.extend(program);
                ("uvx", args)
            }
            _ => {
                // oci: the container gets each variable from docker's own environment (`-e NAME`).
                let forwarded: Vec<String> = env
                    .keys()
                    .flat_map(|k| ["-e".to_string(), k.clone()])
                    .collect();
                let mut args = Vec::new();
                if runtime.first().map(String::as_str) == Some("run") {
                    // The document spells the whole `docker run` line, image included.
                    args.extend(runtime);
                    args.splice(1..1, forwarded);
                } else {
                    args.extend(["run", "-i", "--rm"].map(str::to_string));
                    args.extend(forwarded);
                    args.extend(runtime);
                    args.push(id.clone());
                }
                args.extend(program);
                ("docker", args)
            }
        };
        self.notes.push(format!(
            "runs the {} package {id}{}",
            package.registry_type,
            version.map(|v| format!(" {v}")).unwrap_or_default()
        ));
        let mut entry = json!({ "command": command, "args": args });
        if !env.is_empty() {
            entry["env"] = Value::Object(env);
        }
        entry
    }

    fn remote(&mut self, remote: &Remote) -> Value {
        let url = self
            .fill(&remote.url, &remote.variables)
            .unwrap_or_default();
        let mut headers = Map::new();
        for header in &remote.headers {
            if let Some(value) = self.value(&header.name, &header.input) {
                headers.insert(header.name.clone(), Value::String(value));
            }
        }
        self.notes.push(format!("connects to {url}"));
        let mut entry = json!({ "url": url });
        if !headers.is_empty() {
            entry["headers"] = Value::Object(headers);
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> ServerJson {
        let path = format!("{}/tests/registry/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).expect("fixture");
        serde_json::from_str(&text).expect("server.json")
    }

    fn given<'a>(
        pairs: &'a [(&'a str, &'a str)],
    ) -> impl FnMut(&Wanted<'_>) -> Option<String> + 'a {
        move |w| {
            pairs
                .iter()
                .find(|(k, _)| *k == w.name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn npm_with_a_package_argument() {
        let c = convert(&doc("server-everything"), "everything", &mut given(&[])).expect("ok");
        assert_eq!(
            c.entry,
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]})
        );
        assert!(c.secrets.is_empty());
    }

    #[test]
    fn pypi_pins_with_double_equals() {
        let c = convert(&doc("server-time"), "time", &mut given(&[])).expect("ok");
        assert_eq!(
            c.entry,
            json!({"command": "uvx", "args": ["mcp-server-time==2026.10.19"]})
        );
    }

    #[test]
    fn a_required_secret_goes_to_the_store_and_is_referred_to() {
        let server = doc("brave-search");
        let missing = convert(&server, "brave-search", &mut given(&[])).expect_err("missing");
        assert!(
            matches!(&missing, ConvertError::Missing { missing, .. } if missing[0].starts_with("BRAVE_API_KEY"))
        );
        let c = convert(
            &server,
            "brave-search",
            &mut given(&[("BRAVE_API_KEY", "k-123")]),
        )
        .expect("ok");
        assert_eq!(
            c.entry["env"],
            json!({"BRAVE_API_KEY": "${secret:brave-search.BRAVE_API_KEY}"})
        );
        assert_eq!(
            c.secrets,
            [(
                "brave-search.BRAVE_API_KEY".to_string(),
                "k-123".to_string()
            )]
        );
        assert!(!c.entry.to_string().contains("k-123"));
    }

    #[test]
    fn oci_with_a_whole_docker_line_and_a_secret_variable() {
        let c = convert(
            &doc("github-mcp-server"),
            "github",
            &mut given(&[("token", "ghp_x")]),
        )
        .expect("ok");
        assert_eq!(
            c.entry,
            json!({"command": "docker", "args": ["run", "-i", "--rm", "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN=${secret:github.token}", "ghcr.io/github/github-mcp-server"]})
        );
        assert_eq!(
            c.secrets,
            [("github.token".to_string(), "ghp_x".to_string())]
        );
    }

    #[test]
    fn a_streamable_http_remote_with_a_secret_header_and_a_url_variable() {
        let c = convert(
            &doc("remote-weather"),
            "remote-weather",
            &mut given(&[("Authorization", "Bearer t")]),
        )
        .expect("ok");
        assert_eq!(
            c.entry,
            json!({"url": "https://api.example.com/mcp",
                   "headers": {"Authorization": "${secret:remote-weather.Authorization}"}})
        );
    }

    #[test]
    fn sse_only_and_nothing_to_run_are_refused() {
        let sse = convert(&doc("mcp-fs-sse"), "fs", &mut given(&[])).expect_err("sse");
        assert!(sse.to_string().contains("SSE"), "{sse}");
        assert!(
            sse.to_string()
                .contains("http://mcp-fs.anonymous.modelcontextprotocol.io/sse")
        );
        let none = convert(&doc("minimal"), "weather", &mut given(&[])).expect_err("nothing");
        assert!(matches!(none, ConvertError::NothingToRun(_)));
    }

    #[test]
    fn a_literal_dollar_brace_is_escaped() {
        assert_eq!(literal("a${B}"), "a$${B}");
    }
}
