//! A real OpenID provider for the identity tests: `oidc_provider.mjs` (panva's `oidc-provider`)
//! run by Node on a loopback port, and the client_credentials grant against it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Upper bound for the provider to print a line (it starts in well under a second).
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

/// `$PEGBOARD_TEST_DEPS`, else `<workspace>/target/test-deps` (scripts/setup-test-deps.sh).
fn node_modules() -> PathBuf {
    let deps = std::env::var_os("PEGBOARD_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"));
    let modules = deps.join("node/node_modules");
    assert!(
        modules.join("oidc-provider/package.json").is_file(),
        "oidc-provider is not installed in {}: run scripts/setup-test-deps.sh",
        modules.display()
    );
    modules
}

/// One signing key as the provider printed it.
#[derive(Debug, Clone)]
pub struct Key {
    pub kid: String,
    pub pem: String,
    pub public_pem: String,
}

/// The running provider.
pub struct Idp {
    pub issuer: String,
    pub resource: String,
    pub key: Key,
    /// A key the provider never publishes.
    pub stranger_pem: String,
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    /// The provider's last lines on stderr, for a test that fails waiting on it.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Idp {
    /// Start the provider for `resource` and wait for its `listening` line.
    pub async fn start(resource: &str) -> Idp {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc_support/oidc_provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(node_modules())
            .arg(resource)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("run node (is Node.js installed?)");
        let stdin = child.stdin.take().unwrap();
        let stderr = keep_stderr(&mut child);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = next_event(&mut lines, "listening", &stderr).await;
        Idp {
            issuer: first["issuer"].as_str().unwrap().to_string(),
            resource: resource.to_string(),
            key: key_of(&first),
            stranger_pem: first["stranger_pem"].as_str().unwrap().to_string(),
            child,
            stdin,
            lines,
            stderr,
        }
    }

    /// Rotate the signing key; from now on the provider signs with and publishes only the new one.
    pub async fn rotate(&mut self) -> Key {
        self.stdin.write_all(b"rotate\n").await.unwrap();
        self.stdin.flush().await.unwrap();
        let event = next_event(&mut self.lines, "rotated", &self.stderr).await;
        self.key = key_of(&event);
        self.key.clone()
    }

    /// An access token for the resource by the client_credentials grant (`scope` may be empty).
    pub async fn token(&self, client: &str, secret: &str, scope: &str) -> String {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials");
        form.append_pair("resource", &self.resource);
        if !scope.is_empty() {
            form.append_pair("scope", scope);
        }
        // reqwest is built without a TLS provider of its own (see src/http_client.rs).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(secret))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.finish())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert!(
            status.is_success(),
            "token request refused: {status} {body}"
        );
        assert_eq!(body["token_type"], "Bearer", "{body}");
        body["access_token"].as_str().unwrap().to_string()
    }
}

fn key_of(event: &Value) -> Key {
    Key {
        kid: event["kid"].as_str().unwrap().to_string(),
        pem: event["pem"].as_str().unwrap().to_string(),
        public_pem: event["public_pem"].as_str().unwrap().to_string(),
    }
}

/// Keep the provider's last 50 lines of stderr (it is read as it comes, so it never blocks).
fn keep_stderr(child: &mut Child) -> Arc<Mutex<Vec<String>>> {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let sink = Arc::clone(&kept);
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let mut kept = sink.lock().unwrap();
            if kept.len() == 50 {
                kept.remove(0);
            }
            kept.push(line);
        }
    });
    kept
}

async fn next_event(
    lines: &mut Lines<BufReader<ChildStdout>>,
    event: &str,
    stderr: &Mutex<Vec<String>>,
) -> Value {
    let said = || stderr.lock().unwrap().join("\n");
    loop {
        let line = tokio::time::timeout(LINE_TIMEOUT, lines.next_line())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "no `{event}` line from the provider within {LINE_TIMEOUT:?}; its stderr:\n{}",
                    said()
                )
            })
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "the provider exited before `{event}`; its stderr:\n{}",
                    said()
                )
            });
        if let Ok(v) = serde_json::from_str::<Value>(&line)
            && v["event"] == event
        {
            return v;
        }
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
