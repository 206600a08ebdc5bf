//! `pegboard add REGISTRY_NAME` and `pegboard find` against an MCP Registry served here from
//! real server.json documents (tests/registry/, see SOURCES.md): the npm and PyPI servers it
//! names are really started (`npx`, `uvx` from the test deps) and their tools listed; secrets go
//! to the credential store and are filled in at load; a registry that answers 500 or garbage, a
//! server.json with nothing to run, an SSE-only one: a clear error, and the config unchanged.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use axum::Router;
use axum::extract::{Path as UrlPath, RawQuery};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

const FIXTURES: [&str; 7] = [
    "server-everything",
    "server-time",
    "brave-search",
    "github-mcp-server",
    "remote-weather",
    "mcp-fs-sse",
    "minimal",
];

fn fixtures() -> Vec<Value> {
    FIXTURES
        .iter()
        .map(|name| {
            let path = format!("{}/tests/registry/{name}.json", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
        })
        .collect()
}

fn version_of(doc: &Value) -> &str {
    doc["version"]
        .as_str()
        .or_else(|| doc["version_detail"]["version"].as_str())
        .unwrap_or("")
}

fn row(doc: &Value) -> Value {
    json!({"server": doc, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}})
}

/// A registry with the `/v0.1/` read API over the fixtures; the base URL.
async fn registry() -> String {
    let docs = fixtures();
    let list_docs = docs.clone();
    let app = Router::new()
        .route(
            "/v0.1/servers",
            get(move |RawQuery(q): RawQuery| {
                let term = url::form_urlencoded::parse(q.unwrap_or_default().as_bytes())
                    .find(|(k, _)| k == "search")
                    .map(|(_, v)| v.to_lowercase())
                    .unwrap_or_default();
                let found: Vec<Value> = list_docs
                    .iter()
                    .filter(|d| {
                        d["name"]
                            .as_str()
                            .unwrap_or("")
                            .to_lowercase()
                            .contains(&term)
                            || d["description"]
                                .as_str()
                                .unwrap_or("")
                                .to_lowercase()
                                .contains(&term)
                    })
                    .map(row)
                    .collect();
                async move {
                    json_response(
                        StatusCode::OK,
                        &json!({"servers": found, "metadata": {"count": found.len()}}),
                    )
                }
            }),
        )
        .route(
            "/v0.1/servers/{name}/versions/{version}",
            get(move |UrlPath((name, version)): UrlPath<(String, String)>| {
                let found = docs
                    .iter()
                    .find(|d| {
                        d["name"] == name.as_str()
                            && (version == "latest" || version_of(d) == version)
                    })
                    .map(row);
                async move {
                    match found {
                        Some(doc) => json_response(StatusCode::OK, &doc),
                        None => json_response(
                            StatusCode::NOT_FOUND,
                            &json!({"error": "Server not found"}),
                        ),
                    }
                }
            }),
        );
    serve(app).await
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A registry whose every answer is `answer`.
async fn broken_registry(answer: fn() -> Response) -> String {
    serve(Router::new().fallback(move || async move { answer() })).await
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

struct Home {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Home {
    /// A home with a config whose secrets go to the file store (no keyring on test machines).
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("pegboard.json");
        std::fs::write(
            &config,
            "{\n  \"credentials\": \"file\",\n  \"mcpServers\": {}\n}\n",
        )
        .expect("write");
        Self { dir, config }
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let deps = common::test_deps();
        let path = format!(
            "{}:{}",
            common::installed(deps.join("venv-uv/bin")).display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = tokio::process::Command::new(common::pegboard());
        // The config first: after `--` everything is the server's command line.
        let (first, rest) = args.split_first().expect("a command");
        command
            .arg(first)
            .arg("--config")
            .arg(&self.config)
            .args(rest)
            .env("XDG_CONFIG_HOME", self.dir.path().join(".config"))
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("PATH", path)
            // uv's downloads are kept between runs; npx finds server-everything in the test
            // deps' node project (its own run directory).
            .env(
                "UV_CACHE_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("uv-cache"),
            )
            .env_remove("PEGBOARD_CONFIG")
            .env_remove("PEGBOARD_REGISTRY")
            .current_dir(common::installed(deps.join("node")))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        command
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().await.expect("run pegboard")
    }

    fn servers(&self) -> Value {
        let text = std::fs::read_to_string(&self.config).expect("read");
        serde_json::from_str::<Value>(&text).expect("json")["mcpServers"].clone()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_and_pypi_servers_from_the_registry_start_and_list_their_tools() {
    let url = registry().await;
    let home = Home::new();
    for name in [
        "io.github.modelcontextprotocol/server-everything",
        "io.github.modelcontextprotocol/server-time",
    ] {
        let out = home.run(&["add", name, "--registry", &url]).await;
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    }
    assert_eq!(
        home.servers(),
        json!({
            "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]},
            "time": {"command": "uvx", "args": ["mcp-server-time==2026.10.19"]}
        })
    );
    let out = home
        .run(&["tools", "--format", "json", "--startup-timeout", "120"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Value = serde_json::from_slice(&out.stdout).expect("tools json");
    let names: Vec<&str> = tools
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"everything-echo"), "{names:?}");
    assert!(names.contains(&"time-get_current_time"), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_goes_to_the_store_and_is_filled_in_at_load() {
    let url = registry().await;
    let home = Home::new();
    let before = std::fs::read(&home.config).expect("read");
    // Not on a terminal and not given: refused, naming what is missing.
    let out = home
        .run(&[
            "add",
            "io.github.brave/brave-search-mcp-server",
            "--registry",
            &url,
        ])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("needs BRAVE_API_KEY (Your API key for the service)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&home.config).expect("read"), before);

    let out = home
        .run(&[
            "add",
            "io.github.brave/brave-search-mcp-server",
            "--registry",
            &url,
            "--env",
            "BRAVE_API_KEY=bsk-123",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        home.servers()["brave-search"],
        json!({"command": "npx", "args": ["-y", "@brave/brave-search-mcp-server@2.1.3"],
               "env": {"BRAVE_API_KEY": "${secret:brave-search.BRAVE_API_KEY}"}})
    );
    assert!(
        !std::fs::read_to_string(&home.config)
            .expect("read")
            .contains("bsk-123")
    );
    let out = home.run(&["secret", "list"]).await;
    assert_eq!(text(&out.stdout), "brave-search.BRAVE_API_KEY\n");

    // The reference is filled in when the config loads: server-everything's get-env shows it.
    let out = home.run(&["remove", "brave-search"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = home
        .run(&[
            "add",
            "env",
            "--env",
            "FROM_STORE=${secret:brave-search.BRAVE_API_KEY}",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything@2026.8.31",
            "stdio",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = home
        .run(&["call", "env-get-env", "--startup-timeout", "120"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("bsk-123"),
        "{}",
        text(&out.stdout)
    );

    // `secret rm`, then the entry is skipped with what to do.
    let out = home
        .run(&["secret", "rm", "brave-search.BRAVE_API_KEY"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = home.run(&["tools", "--startup-timeout", "120"]).await;
    assert!(
        text(&out.stderr).contains("pegboard secret set brave-search.BRAVE_API_KEY"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_arguments_and_headers_remote_and_oci() {
    let url = registry().await;
    let home = Home::new();
    let out = home
        .run(&[
            "add",
            "io.github.user/remote-weather",
            "--registry",
            &url,
            "--env",
            "Authorization=Bearer w-1",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = home
        .run(&[
            "add",
            "io.github.github/github-mcp-server",
            "--registry",
            &url,
            "--env",
            "token=ghp-1",
            "--name",
            "gh",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        home.servers(),
        json!({
            "remote-weather": {"url": "https://api.example.com/mcp",
                               "headers": {"Authorization": "${secret:remote-weather.Authorization}"}},
            "gh": {"command": "docker", "args": ["run", "-i", "--rm", "-e",
                   "GITHUB_PERSONAL_ACCESS_TOKEN=${secret:gh.token}", "ghcr.io/github/github-mcp-server"]}
        })
    );
    let out = home.run(&["secret", "list"]).await;
    assert_eq!(
        text(&out.stdout),
        "gh.token\nremote-weather.Authorization\n"
    );
    assert!(!text(&out.stdout).contains("ghp-1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_installed_is_refused_and_nothing_is_written() {
    let url = registry().await;
    let failing =
        broken_registry(|| (StatusCode::INTERNAL_SERVER_ERROR, "database down").into_response())
            .await;
    let garbage =
        broken_registry(|| (StatusCode::OK, "<html>not json</html>").into_response()).await;
    let home = Home::new();
    let before = std::fs::read(&home.config).expect("read");
    let cases: [(&str, &str, &str); 5] = [
        (
            &url,
            "io.github.user/weather",
            "lists no packages and no remotes",
        ),
        (
            &url,
            "io.modelcontextprotocol.anonymous/mcp-fs",
            "old HTTP+SSE transport (http://mcp-fs.anonymous.modelcontextprotocol.io/sse)",
        ),
        (
            &url,
            "io.github.nobody/nothing",
            "has no server `io.github.nobody/nothing`",
        ),
        (
            &failing,
            "io.github.modelcontextprotocol/server-time",
            "answered 500",
        ),
        (
            &garbage,
            "io.github.modelcontextprotocol/server-time",
            "is not what the MCP Registry API returns",
        ),
    ];
    for (registry, name, expected) in cases {
        let out = home.run(&["add", name, "--registry", registry]).await;
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            text(&out.stderr).contains(expected),
            "{name}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read(&home.config).expect("read"),
            before,
            "{name} changed the config"
        );
    }
    let out = home
        .run(&[
            "add",
            "io.github.modelcontextprotocol/server-time",
            "--registry",
            &url,
            "--version",
            "0.0.1",
        ])
        .await;
    assert!(
        text(&out.stderr).contains("at version 0.0.1"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !home
            .dir
            .path()
            .join("pegboard.json.pegboard-backup")
            .exists()
    );
    assert!(!home.dir.path().join("data/pegboard/secrets.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_lists_matches_as_a_table_or_json() {
    let url = registry().await;
    let home = Home::new();
    let out = home
        .run(&["find", "time", "--json", "--registry", &url])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let found: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        found,
        json!([{"name": "io.github.modelcontextprotocol/server-time", "title": null,
                "description": "MCP server providing tools for time queries and timezone conversions for LLMs",
                "version": "2026.10.19", "transports": ["stdio"]}])
    );
    let out = home
        .run(&["find", "everything", "--json", "--registry", &url])
        .await;
    let found: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(found[0]["transports"], json!(["stdio", "streamable-http"]));
    let out = home.run(&["find", "weather", "--registry", &url]).await;
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("io.github.user/remote-weather"),
        "{}",
        text(&out.stdout)
    );
    let out = home
        .run(&["find", "no-such-thing", "--registry", &url])
        .await;
    assert_eq!(out.status.code(), Some(1));
    // The config's `registry` is used when no flag says otherwise.
    std::fs::write(
        &home.config,
        format!("{{\"registry\": \"{url}\", \"mcpServers\": {{}}}}"),
    )
    .expect("write");
    let out = home.run(&["find", "brave", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let found: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(found[0]["name"], "io.github.brave/brave-search-mcp-server");
}
