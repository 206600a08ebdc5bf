//! A real `redis-server` for the store's tests (Debian's package; `apt-get install redis-server`),
//! on a free loopback port, with nothing written to disk (`--save '' --appendonly no`).
//!
//! Started, it is waited for by events, never by a sleep: its "Ready to accept connections" line,
//! then a `PING` answered `+PONG`. [`RedisServer::kill`] ends it at once (SIGKILL: the store
//! failing under load) and [`RedisServer::restart`] starts it again on the same port, empty.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// How long a redis-server may take to say it is ready.
const START: Duration = Duration::from_secs(20);

/// A running `redis-server`; killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
}

/// `redis-server` from PATH, else Debian's `/usr/bin/redis-server`.
fn binary() -> Result<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file());
    on_path
        .or_else(|| Some(PathBuf::from("/usr/bin/redis-server")).filter(|p| p.is_file()))
        .context(
            "redis-server is missing (not on PATH, not /usr/bin/redis-server): the store's tests need a real \
             Redis; install it (Debian: apt-get install redis-server)",
        )
}

impl RedisServer {
    /// A fresh, empty redis-server on a free loopback port, once it answers `PING`.
    ///
    /// # Errors
    /// No redis-server installed, or it did not become ready within 20 s.
    pub async fn start() -> Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut server = Self { child: None, port };
        server.spawn().await?;
        Ok(server)
    }

    /// The URL of database `db`: `redis://127.0.0.1:PORT/DB`.
    pub fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// End it at once (SIGKILL) and wait until it is gone: every connection to it breaks.
    ///
    /// # Errors
    /// The process could not be killed or waited for.
    pub async fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill().await.context("kill redis-server")?;
        }
        Ok(())
    }

    /// Start it again on the same port, empty (after [`kill`](Self::kill)), once it answers.
    ///
    /// # Errors
    /// As [`start`](Self::start); or it is still running.
    pub async fn restart(&mut self) -> Result<()> {
        if self.child.is_some() {
            bail!("redis-server on port {} is still running", self.port);
        }
        self.spawn().await
    }

    async fn spawn(&mut self) -> Result<()> {
        let mut child = Command::new(binary()?)
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--loglevel", "notice", "--logfile", ""])
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawn redis-server")?;
        let stdout = child.stdout.take().context("redis-server's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = String::new();
        let ready = async {
            while let Some(line) = lines.next_line().await? {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains("Ready to accept connections") {
                    return Ok::<bool, std::io::Error>(true);
                }
            }
            Ok(false)
        };
        match tokio::time::timeout(START, ready).await {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => bail!(
                "redis-server on port {} exited before it was ready:\n{seen}",
                self.port
            ),
            Ok(Err(e)) => bail!("reading redis-server's output: {e}"),
            Err(_) => bail!(
                "redis-server on port {} was not ready within {START:?}:\n{seen}",
                self.port
            ),
        }
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child = Some(child);
        self.ping().await
    }

    /// One `PING` over a fresh connection, answered `+PONG`.
    ///
    /// # Errors
    /// It does not answer, or answers something else.
    pub async fn ping(&self) -> Result<()> {
        let exchange = async {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await?;
            stream.write_all(b"PING\r\n").await?;
            let mut answer = [0u8; 7];
            stream.read_exact(&mut answer).await?;
            Ok::<_, std::io::Error>(answer)
        };
        let answer = tokio::time::timeout(START, exchange)
            .await
            .context("redis-server did not answer PING")?
            .context("PING redis-server")?;
        if &answer != b"+PONG\r\n" {
            bail!(
                "redis-server answered PING with {:?}",
                String::from_utf8_lossy(&answer)
            );
        }
        Ok(())
    }
}
