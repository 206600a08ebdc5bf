//! A real Prometheus (Debian's `prometheus`), started by a test with a scrape config pointing at
//! `--metrics` listeners (1 s interval), and its HTTP API.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use super::{PATIENCE, debian_program};

/// Label values → count, from a Prometheus vector answer.
pub type Counts = BTreeMap<Vec<String>, u64>;

/// A Prometheus process scraping the targets it was started with; killed when dropped.
pub struct Prometheus {
    _child: tokio::process::Child,
    base: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
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

impl Prometheus {
    /// Start it scraping each of `targets` (`HOST:PORT` of a `/metrics`) every second, each its
    /// own `instance`; wait until it is ready.
    pub async fn start(targets: &[std::net::SocketAddr]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("prometheus.yml");
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: pegboard\n    scrape_interval: 1s\n    \
                 static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ),
        )
        .expect("write config");
        let port = free_port();
        let child = tokio::process::Command::new(debian_program("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start prometheus");
        let base = format!("http://127.0.0.1:{port}");
        let ready = format!("{base}/-/ready");
        // Polled until it answers (bounded): Prometheus says nothing we could wait on.
        tokio::time::timeout(PATIENCE, async {
            loop {
                if let Ok(r) = client().get(&ready).send().await
                    && r.status().is_success()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .expect("prometheus became ready");
        Self {
            _child: child,
            base,
            _dir: dir,
        }
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

    /// The samples of `promql` as `labels` values → value, once they equal `want` (polled at
    /// most [`PATIENCE`]: the next scrapes bring the values in); the last answer when they
    /// never do.
    pub async fn counts_when(&self, promql: &str, labels: &[&str], want: &Counts) -> Counts {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let got = counts_of(&self.query(promql).await, labels);
            if &got == want || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
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
