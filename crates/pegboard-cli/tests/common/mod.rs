//! Shared helpers for the end-to-end tests (spawn the built `pegboard` binary).
#![allow(dead_code)]

pub mod changes;
pub mod client_home;
pub mod fleet;
pub mod latched;
pub mod nginx;
pub mod oauth;
pub mod observe;
pub mod oidc;
pub mod parity;
pub mod sdk_replicas;

use std::path::{Path, PathBuf};

/// `$PEGBOARD_TEST_DEPS`, else `<workspace>/target/test-deps` (filled by `scripts/setup-test-deps.sh`).
pub fn test_deps() -> PathBuf {
    match std::env::var_os("PEGBOARD_TEST_DEPS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"),
    }
}

/// What to do when a third-party test dependency is missing.
pub const TEST_DEPS_HINT: &str =
    "run `scripts/setup-test-deps.sh` (or point PEGBOARD_TEST_DEPS at an installed copy)";

/// `path` (under the test deps), which must exist: the tests fail, never skip, without it.
pub fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "missing third-party test dependency {}: {TEST_DEPS_HINT}",
        path.display()
    );
    path
}

/// The built `pegboard` binary.
pub fn pegboard() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pegboard"))
}

/// A config entry that runs a bundled demo server (`notes`, `units`, `docs`, `test`) as a child
/// process: `pegboard demo-server NAME ARGS...`.
pub fn demo_server(name: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["demo-server".to_string(), name.to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    serde_json::json!({ "command": pegboard(), "args": all })
}

/// Write a config with the notes and units demo servers into `dir`.
pub fn write_demo_config(dir: &Path) -> PathBuf {
    let config = serde_json::json!({
        "mcpServers": {
            "notes": demo_server("notes", &[]),
            "units": demo_server("units", &[])
        }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// The text of a tool result's first content block ("" if it has none).
pub fn first_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// Send SIGTERM to `child` and wait for it to exit (no exit within 15 s is an error): its status.
pub async fn terminate(
    child: &mut tokio::process::Child,
) -> anyhow::Result<std::process::ExitStatus> {
    use anyhow::Context;
    let pid = child.id().context("the child has exited already")?;
    let kill = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()?;
    anyhow::ensure!(kill.success(), "kill -TERM {pid}: {kill}");
    let status = tokio::time::timeout(std::time::Duration::from_secs(15), child.wait())
        .await
        .context("no exit within 15 s of SIGTERM")??;
    Ok(status)
}

/// The URL in the gateway's `serving ... at http://ADDR/mcp` line on stderr, if this is that line.
pub fn serving_url(line: &str) -> Option<String> {
    let rest = line.split(" at ").nth(1)?;
    let url = rest.split_whitespace().next()?;
    url.starts_with("http://").then(|| url.to_string())
}

/// `pegboard serve --http 127.0.0.1:0 EXTRA.. --config CONFIG` with `env` set (and no inherited
/// `PEGBOARD_TOKEN` unless `env` sets it), once it says it is serving: the child and its
/// `http://ADDR/mcp` URL. Its stderr keeps being drained so it never blocks on it.
pub async fn serve_http(
    config: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<(tokio::process::Child, String)> {
    let command = serve_http_command(config, extra, env);
    spawn_serving(command, std::time::Duration::from_secs(30), serving_url).await
}

/// The command line of [`serve_http`].
fn serve_http_command(
    config: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(pegboard());
    command
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .env_remove("PEGBOARD_TOKEN")
        .envs(env.iter().copied());
    command
}

/// Start `command` with no stdin or stdout and its stderr piped, killed when dropped.
fn spawn_stderr_piped(
    command: &mut tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
}

/// [`serve_http`], keeping what the gateway logs: the child, its `http://ADDR/mcp` URL and its
/// stderr lines as they come (for [`wait_for_line`]).
pub async fn serve_http_logged(
    config: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<(
    tokio::process::Child,
    String,
    tokio::sync::watch::Receiver<Vec<String>>,
)> {
    use anyhow::Context;
    let mut child = spawn_stderr_piped(&mut serve_http_command(config, extra, env))?;
    let lines = collect_lines(child.stderr.take().context("stderr")?);
    let mut watching = lines.clone();
    let url = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        watching.wait_for(|lines| lines.iter().any(|l| serving_url(l).is_some())),
    )
    .await
    .context("no `serving at URL` line")??
    .iter()
    .find_map(|l| serving_url(l))
    .context("a URL")?;
    Ok((child, url, lines))
}

/// Start `command` (no stdin or stdout, killed when dropped) and wait up to `within` for the
/// stderr line in which `url_of` finds the URL it serves at: the child and that URL. Its stderr
/// keeps being drained so it never blocks on it.
pub async fn spawn_serving(
    command: tokio::process::Command,
    within: std::time::Duration,
    url_of: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<(tokio::process::Child, String)> {
    let (child, url, mut stderr) = until_serving(command, within, url_of).await?;
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    Ok((child, url))
}

/// The rest of a child's stderr, unread.
pub type StderrLines = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>;

/// [`serve_http`], its stderr handed back unread from the serving line on: dropped, nobody
/// reads it any more.
pub async fn serve_http_unread(
    config: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> anyhow::Result<(tokio::process::Child, String, StderrLines)> {
    let command = serve_http_command(config, extra, env);
    until_serving(command, std::time::Duration::from_secs(30), serving_url).await
}

/// Start `command` as [`spawn_serving`] does and read its stderr up to the serving line: the
/// child, its URL and the rest of its stderr.
async fn until_serving(
    mut command: tokio::process::Command,
    within: std::time::Duration,
    url_of: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<(tokio::process::Child, String, StderrLines)> {
    use anyhow::Context;
    use tokio::io::AsyncBufReadExt;
    let mut child = spawn_stderr_piped(&mut command)?;
    let stderr = child.stderr.take().context("stderr")?;
    let mut stderr = tokio::io::BufReader::new(stderr).lines();
    let url = tokio::time::timeout(within, async {
        while let Some(line) = stderr.next_line().await? {
            if let Some(url) = url_of(&line) {
                return Ok(url);
            }
        }
        anyhow::bail!("exited before serving")
    })
    .await
    .context("no line saying where it serves")??;
    Ok((child, url, stderr))
}

/// server-everything over streamable HTTP on a free port (it takes `PORT` and says when it
/// listens): the child and its URL.
pub async fn everything_http() -> anyhow::Result<(tokio::process::Child, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut command = tokio::process::Command::new(everything());
    command.arg("streamableHttp").env("PORT", port.to_string());
    spawn_serving(command, std::time::Duration::from_secs(60), move |line| {
        line.contains("listening on port")
            .then(|| format!("http://127.0.0.1:{port}/mcp"))
    })
    .await
}

/// A config in `dir` with server-everything (stdio) as namespace `namespace`: its path.
pub fn everything_config(dir: &Path, namespace: &str) -> std::io::Result<PathBuf> {
    let config = serde_json::json!({"mcpServers": {namespace: {"command": everything(), "args": ["stdio"]}}});
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The params of the `notifications/progress` among `messages`, in their order.
pub fn progress_params(messages: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .collect()
}

/// `HOST:PORT` of a `http://HOST:PORT/mcp` URL.
pub fn host_port(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// A config entry for `@modelcontextprotocol/server-everything` (installed by the test deps).
pub fn everything_entry() -> serde_json::Value {
    serde_json::json!({ "command": everything() })
}

/// `@modelcontextprotocol/server-everything`'s launcher (installed by the test deps).
pub fn everything() -> PathBuf {
    installed(test_deps().join("node/node_modules/.bin/mcp-server-everything"))
}

/// `value` with every number as an f64, so `1` (a server's own JSON) and `1.0` (re-encoded by
/// rmcp) compare equal.
pub fn numbers_as_f64(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => n.as_f64().map_or(Value::Null, Value::from),
        Value::Array(items) => items.iter().map(numbers_as_f64).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
            .collect(),
        other => other.clone(),
    }
}

/// Collect `reader`'s lines (a process's stderr) as they come, for [`wait_for_line`].
pub fn collect_lines(
    reader: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> tokio::sync::watch::Receiver<Vec<String>> {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(reader).lines();
    let (seen, collected) = tokio::sync::watch::channel(Vec::new());
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            seen.send_modify(|all| all.push(line));
        }
    });
    collected
}

/// Wait (30 s at most) until a line containing `needle` is among `lines` (a process's stderr,
/// collected as it comes).
pub async fn wait_for_line(
    lines: &mut tokio::sync::watch::Receiver<Vec<String>>,
    needle: &str,
) -> anyhow::Result<()> {
    wait_for_lines(lines, needle, 1).await
}

/// Wait (30 s at most) until `n` lines containing `needle` are among `lines`.
pub async fn wait_for_lines(
    lines: &mut tokio::sync::watch::Receiver<Vec<String>>,
    needle: &str,
    n: usize,
) -> anyhow::Result<()> {
    use anyhow::Context;
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        lines.wait_for(|lines| count_lines(lines, needle) >= n),
    )
    .await
    .with_context(|| format!("never logged {needle:?} {n} times"))??;
    Ok(())
}

/// Whether the first line containing all of `first` comes before the first line containing
/// all of `then` (false when either is missing): the order one process wrote them in, when both
/// come from its stderr.
pub fn comes_before(lines: &[String], first: &[&str], then: &[&str]) -> bool {
    let at = |needles: &[&str]| {
        lines
            .iter()
            .position(|l| needles.iter().all(|n| l.contains(n)))
    };
    matches!((at(first), at(then)), (Some(a), Some(b)) if a < b)
}

/// The audit lines (JSON objects with a `method` and an `outcome`) among a gateway's stderr
/// `lines` (`--audit-log -`).
pub fn audit_lines(lines: &[String]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("method").is_some() && v.get("outcome").is_some())
        .collect()
}

/// Whether, in the test server's stderr `lines`, its 60 s sleep started before the first sleep
/// (`first_ms`) finished: the window the id-reuse tests need was really open. (The fields end
/// with a space: `ms=1 ` of a plain call is not `ms=1500 `.)
pub fn second_sleep_overlapped(lines: &[String], first_ms: u64) -> bool {
    let first_done = format!("ms={first_ms} ");
    comes_before(
        lines,
        &["sleep started", "ms=60000 "],
        &["sleep finished", &first_done],
    )
}

/// When the window was closed: the next first sleep, four times as long, or an error once that
/// passes 24 s.
pub fn longer_first_sleep(first_ms: u64, lines: &[String]) -> anyhow::Result<u64> {
    eprintln!("the first call ended before the second started; again with a longer one");
    let longer = first_ms * 4;
    anyhow::ensure!(
        longer <= 24_000,
        "the second call never reached the server while the first ran:\n{}",
        lines.join("\n")
    );
    Ok(longer)
}

/// How many of `lines` contain `needle`.
pub fn count_lines(lines: &[String], needle: &str) -> usize {
    lines.iter().filter(|l| l.contains(needle)).count()
}

/// Assert that two JSON-RPC answers carry the same `result` and `error`, numbers compared as
/// numbers (the express lane passes a server's `1` as written; rmcp's way re-encodes it `1.0`).
pub fn assert_same_answer(full: &serde_json::Value, lane: &serde_json::Value, what: &str) {
    assert_eq!(
        numbers_as_f64(&full["result"]),
        numbers_as_f64(&lane["result"]),
        "{what}"
    );
    assert_eq!(
        numbers_as_f64(&full["error"]),
        numbers_as_f64(&lane["error"]),
        "{what}"
    );
}

/// Assert that the lane's `tools/list` answer is rmcp's, `execution` (MCP 2025-11-25) included:
/// rmcp's typed list has no room for it, and the gateway puts it back on its way out
/// (`pegboard_gateway`'s `definitions`); and that it is listed (the servers these tests use,
/// server-everything, send it on every tool).
pub fn assert_lists_match(rmcp: &serde_json::Value, lane: &serde_json::Value) {
    for (way, list) in [("rmcp", rmcp), ("the lane", lane)] {
        let tools = list["result"]["tools"].as_array();
        assert!(
            tools.is_some_and(|tools| tools.iter().any(|t| t.get("execution").is_some())),
            "no `execution` on {way}'s way: {list}"
        );
    }
    // Not assert_eq!: a difference would print two lists of 17 tools twice.
    assert!(
        rmcp["result"] == lane["result"],
        "the lane's list differs from rmcp's:\n{rmcp}\n{lane}"
    );
}
