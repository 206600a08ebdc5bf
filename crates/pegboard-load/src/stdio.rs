//! The stdio client: one child process, newline-delimited JSON-RPC on its pipes, N requests in
//! flight by pipelining ids on the one pipe.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::cpu::Probe;
use crate::rpc::{self, Budget, INITIALIZED, Incoming, Samples, Template};

/// How long one handshake or one-off request may take (servers spawning their own children included).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// A server on the other end of a pair of pipes.
pub struct StdioPeer {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl StdioPeer {
    /// Start `argv` with `env` added (its stderr discarded) and complete the MCP handshake.
    pub async fn start(argv: &[String], env: &[(String, String)]) -> Result<Self> {
        let (program, args) = argv.split_first().context("empty command")?;
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let mut peer = Self {
            child,
            stdin: BufWriter::with_capacity(64 * 1024, stdin),
            stdout: BufReader::with_capacity(64 * 1024, stdout),
            line: Vec::with_capacity(64 * 1024),
            next_id: 0,
        };
        let init = Template::new("initialize", &rpc::initialize_params());
        tokio::time::timeout(ANSWER_TIMEOUT, peer.one(&init))
            .await
            .with_context(|| format!("{program}: no answer to initialize"))??;
        peer.send_raw(INITIALIZED).await?;
        peer.stdin.flush().await?;
        Ok(peer)
    }

    async fn send_raw(&mut self, message: &[u8]) -> Result<()> {
        self.stdin.write_all(message).await?;
        self.stdin.write_all(b"\n").await?;
        Ok(())
    }

    /// Read the next message into `self.line`: when its last byte arrived, and what it is.
    async fn read(&mut self) -> Result<(Instant, Incoming)> {
        self.line.clear();
        if self.stdout.read_until(b'\n', &mut self.line).await? == 0 {
            bail!("the server closed its stdout");
        }
        let arrived = Instant::now();
        Ok((arrived, rpc::probe(&self.line)?))
    }

    /// One request, its answer awaited; returns the raw answer.
    pub async fn one(&mut self, request: &Template) -> Result<Vec<u8>> {
        self.next_id += 1;
        let id = self.next_id;
        self.send_raw(&request.build(id)).await?;
        self.stdin.flush().await?;
        loop {
            if let (_, Incoming::Answer(got, outcome)) = self.read().await?
                && got == id
            {
                outcome.map_err(|e| anyhow::anyhow!("request failed: {e}"))?;
                return Ok(self.line.clone());
            }
        }
    }

    /// Warm up, then measure `request` with `concurrency` requests in flight.
    pub async fn load(
        &mut self,
        request: &Template,
        concurrency: usize,
        budget: Budget,
        probe: Probe,
    ) -> Result<Samples> {
        let warm = Instant::now() + budget.time / 4;
        self.phase(request, concurrency, budget.warmup, Some(warm))
            .await?;
        let cpu = probe.read();
        let mut samples = self
            .phase(
                request,
                concurrency,
                budget.calls,
                Some(Instant::now() + budget.time),
            )
            .await?;
        samples.cpu_ns = probe.since(cpu);
        Ok(samples)
    }

    async fn phase(
        &mut self,
        request: &Template,
        concurrency: usize,
        count: u64,
        deadline: Option<Instant>,
    ) -> Result<Samples> {
        let mut samples = Samples {
            latencies_ns: Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1 << 20)),
            ..Samples::default()
        };
        let mut in_flight: HashMap<u64, Instant> = HashMap::with_capacity(concurrency * 2);
        let mut issued = 0u64;
        let mut out = Vec::with_capacity(4096);
        let start = Instant::now();
        let more = |issued: u64| issued < count && deadline.is_none_or(|d| Instant::now() < d);
        while in_flight.len() < concurrency && more(issued) {
            self.next_id += 1;
            out.clear();
            request.write(self.next_id, &mut out);
            self.send_raw(&out).await?;
            in_flight.insert(self.next_id, Instant::now());
            issued += 1;
        }
        self.stdin.flush().await?;
        while !in_flight.is_empty() {
            let (arrived, Incoming::Answer(id, outcome)) = self.read().await? else {
                continue;
            };
            let Some(sent) = in_flight.remove(&id) else {
                continue;
            };
            samples.record(sent, arrived, outcome);
            if more(issued) {
                self.next_id += 1;
                out.clear();
                request.write(self.next_id, &mut out);
                self.send_raw(&out).await?;
                in_flight.insert(self.next_id, Instant::now());
                issued += 1;
            }
            // While whole answers are already buffered, handle them first and send their
            // successors in one write.
            if !self.stdout.buffer().contains(&b'\n') {
                self.stdin.flush().await?;
            }
        }
        samples.elapsed = start.elapsed();
        Ok(samples)
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Close stdin and wait (briefly) for the child to exit, else kill it.
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}
