//! Fronts put before a backend: `pegboard serve` over stdio or HTTP (with a one-server config
//! written to a temporary folder), or a peer gateway given as a command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::Telemetry;

/// How long a gateway may take to print the address it listens at.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(60);

/// The namespace the backend gets on the board: its tools are `b-<tool>`.
pub const NAMESPACE: &str = "b";

/// Write a pegboard config serving `backend` (an argv, with `env` added) under [`NAMESPACE`];
/// returns its path.
pub fn write_config(
    dir: &Path,
    label: &str,
    backend: &[String],
    env: &[(String, String)],
) -> Result<PathBuf> {
    let (command, args) = backend.split_first().context("empty backend command")?;
    let env: serde_json::Map<String, serde_json::Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    let config = serde_json::json!({
        "mcpServers": { NAMESPACE: { "command": command, "args": args, "env": env } }
    });
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{label}.json"));
    std::fs::write(&path, config.to_string())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The bearer token of the client with a fleet-wide limit (`--telemetry store-limit`), and
/// the variable its config reads it from.
pub const LIMITED_TOKEN: &str = "pegboard-load-limited-client-token";
const LIMITED_TOKEN_VAR: &str = "PB_LOAD_LIMITED_TOKEN";

/// `config` with one client, `load`, whose `callsPerMinute` (60,000,000: never reached in a
/// run) is counted in the store: every request of the `store-limit` front is that client's.
pub fn with_limited_client(config: &Path) -> Result<PathBuf> {
    let text = std::fs::read_to_string(config)?;
    let mut value: serde_json::Value = serde_json::from_str(&text)?;
    value["clients"] = serde_json::json!({
        "load": { "token": format!("${{{LIMITED_TOKEN_VAR}}}"), "callsPerMinute": 60_000_000 }
    });
    let path = config.with_extension("limited.json");
    std::fs::write(&path, value.to_string())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `pegboard serve` over stdio, as an argv.
pub fn stdio_argv(pegboard: &Path, config: &Path) -> Vec<String> {
    vec![
        pegboard.display().to_string(),
        "serve".into(),
        "-q".into(),
        "--config".into(),
        config.display().to_string(),
    ]
}

/// More arguments and more environment for a process.
pub type Extra = (Vec<String>, Vec<(String, String)>);

/// What `pegboard serve` gets for `telemetry`: more arguments, more environment.
pub fn telemetry_setup(
    telemetry: Telemetry,
    otlp_endpoint: Option<&str>,
    store: Option<&str>,
) -> Result<Extra> {
    Ok(match telemetry {
        Telemetry::Off => (Vec::new(), Vec::new()),
        Telemetry::Metrics => (vec!["--metrics".into(), "127.0.0.1:0".into()], Vec::new()),
        Telemetry::Store => {
            let url = store.context("--telemetry store: give the store's URL with --store")?;
            (vec!["--store".into(), url.into()], Vec::new())
        }
        Telemetry::StoreLimit => {
            let url =
                store.context("--telemetry store-limit: give the store's URL with --store")?;
            let env = vec![(LIMITED_TOKEN_VAR.into(), LIMITED_TOKEN.into())];
            (vec!["--store".into(), url.into()], env)
        }
        Telemetry::Traces => {
            let endpoint = otlp_endpoint.context("--telemetry traces: no OTLP endpoint")?;
            let env = [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "1.0"),
            ];
            let env = env
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect();
            (Vec::new(), env)
        }
    })
}

/// A gateway process serving HTTP at `addr`; killed when dropped.
pub struct HttpGateway {
    /// Where it listens.
    pub addr: SocketAddr,
    child: Child,
}

impl HttpGateway {
    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Ask it to stop (SIGTERM, so profilers wrapping it get to write their data), then kill it
    /// if it has not exited within a few seconds.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Start `pegboard serve --http 127.0.0.1:0 EXTRA..` (with `env` added) and read the port it took from its stderr.
pub async fn start_http(
    pegboard: &Path,
    config: &Path,
    extra: &[String],
    env: &[(String, String)],
) -> Result<HttpGateway> {
    let mut command = Command::new(pegboard);
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["serve", "--config"])
        .arg(config)
        .args(["--http", "127.0.0.1:0"])
        .args(extra);
    listening(command, &pegboard.display().to_string()).await
}

/// Start `command` (a process that prints `...: serving at http://ADDR/...` on stderr, as
/// `pegboard serve --http` and `pegboard-load relay-http` do) and read ADDR.
pub async fn listening(mut command: Command, what: &str) -> Result<HttpGateway> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {what}"))?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let mut lines = BufReader::new(stderr).lines();
    let found = tokio::time::timeout(LISTEN_TIMEOUT, async {
        while let Some(line) = lines.next_line().await? {
            // "pegboard: serving at http://127.0.0.1:PORT/mcp (starting 1 server)" (calls made before
            // it is up wait for it: `--wait`)
            if line.contains(": serving at http://")
                && let Some(rest) = line.split(" at http://").nth(1)
                && let Some(addr) = rest.split('/').next()
            {
                return addr
                    .parse::<SocketAddr>()
                    .with_context(|| format!("unexpected address in {line:?}"));
            }
        }
        bail!("{what} exited before listening")
    })
    .await
    .with_context(|| format!("{what} did not start listening in time"))??;
    // Keep draining its stderr so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(HttpGateway { addr: found, child })
}

/// A free loopback port (taken and released: a peer that only reads its port from a config
/// file gets it next; on loopback the race with other programs is negligible).
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Start the `mcp-proxy` crate's binary (tower-mcp) on a config serving `backend` under
/// [`NAMESPACE`] with `-` as separator (same tool names as PegBoard's), at `/` on a free port.
pub async fn start_mcp_proxy(
    binary: &Path,
    dir: &Path,
    label: &str,
    backend: &[String],
) -> Result<HttpGateway> {
    let (command, args) = backend.split_first().context("empty backend command")?;
    let port = free_port()?;
    let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
    let config = format!(
        "[proxy]\nname = \"load\"\nseparator = \"-\"\n\n[proxy.listen]\nhost = \"127.0.0.1\"\nport = {port}\n\n\
         [[backends]]\nname = \"{NAMESPACE}\"\ntransport = \"stdio\"\ncommand = {}\nargs = [{}]\n",
        quote(command),
        args.join(", ")
    );
    let path = dir.join(format!("{label}.mcp-proxy.toml"));
    std::fs::write(&path, config).with_context(|| format!("cannot write {}", path.display()))?;
    let child = Command::new(binary)
        .arg("--config")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = tokio::time::Instant::now() + LISTEN_TIMEOUT;
    // It prints nothing we can rely on: wait until the port accepts connections.
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        if tokio::time::Instant::now() > deadline {
            bail!("mcp-proxy did not listen on {addr} in time");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(HttpGateway { addr, child })
}
