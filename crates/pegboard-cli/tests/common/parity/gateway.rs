//! One `pegboard serve` of the parity suites ([`Gateway`]): the process, its log, and a client
//! session on its front.

use std::process::Stdio;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{BOARD_TOOLS, Exchange, Front, LOG, WAIT, Way, http, stdio};

/// A `pegboard serve` on one front and one way, with a client session on it.
pub struct Gateway {
    /// Whether it may take the express lane.
    pub way: Way,
    /// How the client reaches it.
    pub front: Front,
    client: Client,
    /// Every line it has logged so far.
    log: watch::Receiver<Vec<String>>,
    /// Over HTTP: where it serves (for more sessions).
    url: Option<String>,
    /// For request ids unique in the session.
    ids: u64,
    _child: Child,
    /// Over HTTP: the stdin of the `sh` in front of it (see [`Gateway::start`]).
    _keep: Option<ChildStdin>,
    _dir: tempfile::TempDir,
}

enum Client {
    Stdio(stdio::Client),
    Http(http::Client),
}

/// A call running while the test does something else.
pub enum Pending {
    /// Over stdio: its id (the answer comes on the session's output).
    Stdio(Value),
    /// Over HTTP: the task reading its response.
    Http(JoinHandle<Result<Exchange>>),
}

impl Gateway {
    /// Start `pegboard serve` on the parity board (see [`super::write_board`]) and open a
    /// session on it; fails unless every server's tools are on the board.
    pub async fn start(front: Front, way: Way) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = super::write_board(dir.path())?;
        let mut command = match front {
            // A stdio gateway ends when its stdin does: with the test process at the latest.
            Front::Stdio => {
                let mut command = tokio::process::Command::new(super::super::pegboard());
                command.args(["serve", "-q"]);
                command
            }
            // An HTTP gateway would outlive the test process that started it (the suite's
            // gateways are never dropped: they serve every test of the binary), so a shell in
            // front of it stops it (SIGTERM: a clean exit that ends its servers) once its stdin
            // closes: when the test process exits, or when this `Gateway` is dropped (then the
            // shell must live to do it: no kill on drop).
            Front::Http => {
                let mut command = tokio::process::Command::new("sh");
                command
                    .arg("-c")
                    .arg(r#""$@" & gateway=$!; cat >/dev/null; kill $gateway; wait $gateway"#)
                    .arg("parity-gateway")
                    .arg(super::super::pegboard())
                    .args(["serve", "--http", "127.0.0.1:0"]);
                command
            }
        };
        command
            .args(way.flags())
            .arg("--config")
            .arg(&config)
            .env("RUST_LOG", LOG)
            .env_remove("PEGBOARD_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(front == Front::Stdio);
        let mut child = command.spawn().context("spawn pegboard serve")?;
        let log = super::super::collect_lines(child.stderr.take().context("stderr")?);
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let (client, url, keep) = match front {
            Front::Stdio => {
                let mut client = stdio::Client::new(stdin, stdout);
                client.handshake().await?;
                (Client::Stdio(client), None, None)
            }
            Front::Http => {
                let mut watching = log.clone();
                let url = tokio::time::timeout(
                    WAIT,
                    watching.wait_for(|lines| {
                        lines.iter().any(|l| super::super::serving_url(l).is_some())
                    }),
                )
                .await
                .context("no `serving at URL` line")??
                .iter()
                .find_map(|l| super::super::serving_url(l))
                .context("a URL")?;
                let client = http::Client::open(&url).await?;
                (Client::Http(client), Some(url), Some(stdin))
            }
        };
        let mut gateway = Self {
            way,
            front,
            client,
            log,
            url,
            ids: 0,
            _child: child,
            _keep: keep,
            _dir: dir,
        };
        let listed = gateway.request("tools/list", json!({})).await?;
        let names: Vec<&str> = listed.result()["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        for tool in BOARD_TOOLS {
            if !names.contains(&tool) {
                bail!("{way:?} over {front:?}: {tool} is not on the board: {names:?}");
            }
        }
        Ok(gateway)
    }

    /// A fresh request id (`what-N`).
    pub fn id(&mut self, what: &str) -> Value {
        self.ids += 1;
        json!(format!("{what}-{}", self.ids))
    }

    /// A request of `method` with `params`, and what the client saw of it.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Exchange> {
        let id = self.id(method);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match &mut self.client {
            Client::Stdio(client) => client.call(&request).await,
            Client::Http(client) => client.call(&request).await,
        }
    }

    /// `tools/call` with `params`.
    pub async fn call(&mut self, params: Value) -> Result<Exchange> {
        self.request("tools/call", params).await
    }

    /// `tools/call` with `params` that must take the express lane on [`Way::Express`] (its log
    /// says so) and cannot on [`Way::NoExpress`] (its log never does).
    pub async fn call_on_lane(&mut self, params: Value) -> Result<Exchange> {
        let before = self.lane_calls();
        let exchange = self.call(params.clone()).await?;
        self.took_the_lane(before, &params).await?;
        Ok(exchange)
    }

    /// Check that a call made after the lane had carried `before` calls took the lane on
    /// [`Way::Express`]; that the lane never carried any on [`Way::NoExpress`].
    pub async fn took_the_lane(&mut self, before: usize, what: &Value) -> Result<()> {
        match self.way {
            Way::Express => self
                .wait_logged("express call", before + 1)
                .await
                .with_context(|| format!("over {:?}, not on the lane: {what}", self.front)),
            Way::NoExpress => match self.lane_calls() {
                0 => Ok(()),
                n => bail!("--no-express over {:?}: {n} calls on the lane", self.front),
            },
        }
    }

    /// Send `params` as a `tools/call` and go on while it runs: its id and the call.
    pub async fn start_call(&mut self, params: Value) -> Result<(Value, Pending)> {
        let id = self.id("tools/call");
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": params});
        let pending = match &self.client {
            Client::Stdio(client) => {
                client.send(&request).await?;
                Pending::Stdio(id.clone())
            }
            Client::Http(client) => {
                let client = client.clone();
                Pending::Http(tokio::spawn(async move { client.call(&request).await }))
            }
        };
        Ok((id, pending))
    }

    /// Send a notification; over HTTP, the response's status.
    pub async fn notify(&mut self, message: &Value) -> Result<Option<u16>> {
        match &self.client {
            Client::Stdio(client) => client.send(message).await.map(|()| None),
            Client::Http(client) => Ok(Some(client.post(message).await?.status().as_u16())),
        }
    }

    /// What the client saw of `pending`, once its answer came (or, over HTTP, its response
    /// ended).
    pub async fn finish(&mut self, pending: Pending) -> Result<Exchange> {
        match (pending, &mut self.client) {
            (Pending::Stdio(id), Client::Stdio(client)) => client.until_answer(&id).await,
            (Pending::Http(task), _) => tokio::time::timeout(WAIT, task)
                .await
                .context("the call's response did not end")??,
            (Pending::Stdio(_), Client::Http(_)) => bail!("a stdio call on an HTTP session"),
        }
    }

    /// What the client saw of `pending`, a call that must get no answer (see
    /// [`stdio::Client::ended_without_answer`]; over HTTP its response must end).
    pub async fn ended_without_answer(&mut self, pending: Pending) -> Result<Exchange> {
        match (pending, &mut self.client) {
            (Pending::Stdio(id), Client::Stdio(client)) => {
                let sync = json!({"jsonrpc": "2.0", "id": format!("sync-after-{}", id),
                    "method": "tools/call",
                    "params": {"name": "t-echo", "arguments": {"text": "sync"}}});
                client.ended_without_answer(&id, &sync).await
            }
            (pending, _) => self.finish(pending).await,
        }
    }

    /// A new session on this gateway (HTTP only).
    pub async fn new_session(&self) -> Result<http::Client> {
        let url = self
            .url
            .as_deref()
            .context("a new session needs the HTTP front")?;
        http::Client::open(url).await
    }

    /// How many lines the gateway has logged with `needle` in them.
    pub fn logged(&self, needle: &str) -> usize {
        super::super::count_lines(&self.log.borrow(), needle)
    }

    /// Wait until the gateway has logged `n` lines with `needle` in them.
    pub async fn wait_logged(&mut self, needle: &str, n: usize) -> Result<()> {
        super::super::wait_for_lines(&mut self.log, needle, n).await
    }

    /// How many calls the express lane has carried.
    pub fn lane_calls(&self) -> usize {
        self.logged("express call")
    }
}
