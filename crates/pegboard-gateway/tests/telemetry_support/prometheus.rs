//! A real Prometheus (Debian's `prometheus`), started by a test with a scrape config pointing at
//! `--metrics` listeners (1 s interval), and its HTTP API.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::{PATIENCE, debian_program};

/// Label values → count, from a Prometheus vector answer.
pub type Counts = BTreeMap<Vec<String>, u64>;

/// A Prometheus process scraping the targets it was started with; killed when dropped.
///
/// Prometheus scrapes each target through a [`ScrapeCounter`] of ours, so a test waits for
/// the next scrapes (events) instead of for time to pass.
pub struct Prometheus {
    _child: tokio::process::Child,
    base: String,
    scrapes: Vec<watch::Receiver<u64>>,
    _dir: tempfile::TempDir,
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// `text` percent-encoded for a URL's query (everything but RFC 3986's unreserved characters).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What Prometheus logs (at `info`) once its API answers.
const READY: &str = "Server is ready to receive web requests.";

impl Prometheus {
    /// Start it scraping each of `targets` (`HOST:PORT` of a `/metrics`) every second, each its
    /// own `instance` (the target's address); wait until it says it is ready.
    pub async fn start(targets: &[SocketAddr]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("prometheus.yml");
        let mut scrapes = Vec::new();
        let mut jobs = String::new();
        for target in targets {
            let (through, counted) = ScrapeCounter::start(*target).await;
            scrapes.push(counted);
            jobs.push_str(&format!(
                "      - targets: ['{through}']\n        labels:\n          instance: '{target}'\n"
            ));
        }
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: pegboard\n    scrape_interval: 1s\n    \
                 static_configs:\n{jobs}"
            ),
        )
        .expect("write config");
        // The port is chosen here and bound by Prometheus: another process could take it in
        // between, which would fail the test with Prometheus's own error (never a wrong pass).
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        };
        let mut child = tokio::process::Command::new(debian_program("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start prometheus");
        // Its log goes on to the test's stderr; the line saying it is ready ends the wait.
        let mut log = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let (ready_tx, ready) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            while let Ok(Some(line)) = log.next_line().await {
                if line.contains(READY)
                    && let Some(tx) = ready_tx.take()
                {
                    let _ = tx.send(());
                } else if !line.to_ascii_lowercase().contains("level=info") {
                    eprintln!("prometheus: {line}");
                }
            }
        });
        tokio::time::timeout(PATIENCE, ready)
            .await
            .expect("prometheus never said it was ready")
            .expect("prometheus ended before it was ready");
        Self {
            _child: child,
            base: format!("http://127.0.0.1:{port}"),
            scrapes,
            _dir: dir,
        }
    }

    /// Wait until every target has been scraped whole since this was called: two scrapes
    /// begun, the first of which began after the call, and Prometheus stores a scrape before
    /// it begins the next of that target. False after [`PATIENCE`].
    pub async fn next_scrapes(&self) -> bool {
        let waits = self.scrapes.iter().cloned().map(|mut scrapes| async move {
            let now = *scrapes.borrow_and_update();
            scrapes.wait_for(|n| *n >= now + 2).await.is_ok()
        });
        tokio::time::timeout(PATIENCE, futures::future::join_all(waits))
            .await
            .is_ok_and(|all| all.into_iter().all(|ok| ok))
    }

    /// Prometheus's whole answer to the instant query `promql` (`status` is `success` or
    /// `error`, with `errorType` and `error`).
    pub async fn answer(&self, promql: &str) -> serde_json::Value {
        let url = format!("{}/api/v1/query?query={}", self.base, encode(promql));
        let text = client()
            .get(url)
            .send()
            .await
            .expect("query")
            .text()
            .await
            .expect("body");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// The result of `promql`, which must be a valid query.
    pub async fn query(&self, promql: &str) -> serde_json::Value {
        let answer = self.answer(promql).await;
        assert_eq!(answer["status"], "success", "{promql}: {answer}");
        answer["data"]["result"].clone()
    }

    /// The samples of `promql` as `labels` values → value, once they equal `want` (asked again
    /// after each round of scrapes, for at most [`PATIENCE`]); the last answer when they
    /// never do.
    pub async fn counts_when(&self, promql: &str, labels: &[&str], want: &Counts) -> Counts {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let got = counts_of(&self.query(promql).await, labels);
            if &got == want || tokio::time::Instant::now() >= deadline || !self.next_scrapes().await
            {
                return got;
            }
        }
    }
}

/// A target's stand-in on a port of its own: it passes every connection through to the target
/// and counts the scrape requests that go by.
struct ScrapeCounter;

impl ScrapeCounter {
    /// Its address, and the count of scrapes begun so far.
    async fn start(target: SocketAddr) -> (SocketAddr, watch::Receiver<u64>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let through = listener.local_addr().expect("addr");
        let (count, counted) = watch::channel(0u64);
        let count = std::sync::Arc::new(count);
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let count = std::sync::Arc::clone(&count);
                tokio::spawn(async move {
                    let Ok(outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (mut from_prometheus, mut to_prometheus) = inbound.into_split();
                    let (mut from_target, mut to_target) = outbound.into_split();
                    let requests = async {
                        let mut buf = vec![0u8; 8192];
                        while let Ok(n) = from_prometheus.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            // A scrape is one small GET: its request line arrives in one read.
                            let began = buf[..n].windows(4).filter(|w| w == b"GET ").count() as u64;
                            if to_target.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                            if began > 0 {
                                count.send_modify(|c| *c += began);
                            }
                        }
                        let _ = to_target.shutdown().await;
                    };
                    let answers = async {
                        let _ = tokio::io::copy(&mut from_target, &mut to_prometheus).await;
                        let _ = to_prometheus.shutdown().await;
                    };
                    tokio::join!(requests, answers);
                });
            }
        });
        (through, counted)
    }
}

/// A vector answer as `labels` values → value.
pub fn counts_of(result: &serde_json::Value, labels: &[&str]) -> Counts {
    result
        .as_array()
        .expect("a vector")
        .iter()
        .map(|sample| {
            let key = labels
                .iter()
                .map(|k| sample["metric"][*k].as_str().unwrap_or("").to_string())
                .collect();
            let value: f64 = sample["value"][1]
                .as_str()
                .and_then(|v| v.parse().ok())
                .expect("a number");
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let value = value.round() as u64;
            (key, value)
        })
        .collect()
}

/// [`Counts`] from `(label values, count)` pairs.
pub fn counts(entries: &[(&[&str], u64)]) -> Counts {
    entries
        .iter()
        .map(|(labels, n)| (labels.iter().map(|l| (*l).to_string()).collect(), *n))
        .collect()
}
