//! A real nginx for the tests of replicas behind a load balancer: started with an `http`-context
//! site config on a free loopback port, its pid, logs and temp files in a temp dir (so it runs as
//! any user), waited for by its own "listening" notice. nginx comes from PATH or /usr/sbin/nginx.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

/// Until nginx says it is listening.
const NGINX_START: Duration = Duration::from_secs(10);

/// nginx from PATH, else Debian's /usr/sbin (not on a non-root user's PATH).
pub fn nginx_binary() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("nginx"))
        .find(|p| p.is_file());
    let found = on_path.or_else(|| Some(PathBuf::from("/usr/sbin/nginx")).filter(|p| p.is_file()));
    match found {
        Some(path) => path,
        None => panic!(
            "nginx is missing (not on PATH, not /usr/sbin/nginx): this test needs a real nginx; \
             install it (Debian: apt-get install nginx-light)"
        ),
    }
}

/// A running nginx, its files in a temp dir; killed on drop.
pub struct Nginx {
    _child: tokio::process::Child,
    _dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Nginx {
    /// What nginx logged (warnings and errors: an upstream refused, timed out, answered 503).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("error.log")).unwrap_or_default()
    }

    /// nginx serving `site` (an `http`-context config) on a free loopback port, once it listens.
    pub async fn start(site: &str) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        let temp = root.join("temp");
        std::fs::create_dir(&temp)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let listen = format!("127.0.0.1:{port}");
        std::fs::write(root.join("site.conf"), site.replace("{LISTEN}", &listen))?;
        let (r, t) = (root.display(), temp.display());
        // Notices go to stderr too: nginx prints its version there once it has read the config
        // and is listening (the listening socket is opened before), which is the event waited for.
        let main = format!(
            "daemon off;\nmaster_process off;\npid {r}/nginx.pid;\nerror_log {r}/error.log warn;\n\
             error_log stderr notice;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {t}/body;\n  proxy_temp_path {t}/proxy;\n  \
             fastcgi_temp_path {t}/fastcgi;\n  uwsgi_temp_path {t}/uwsgi;\n  scgi_temp_path {t}/scgi;\n  \
             include {r}/site.conf;\n}}\n"
        );
        std::fs::write(root.join("nginx.conf"), main)?;
        let mut command = tokio::process::Command::new(nginx_binary());
        command
            .arg("-p")
            .arg(root)
            .arg("-e")
            .arg(root.join("error.log"))
            .arg("-c")
            .arg(root.join("nginx.conf"));
        let url = format!("http://{listen}/mcp");
        let listening = |line: &str| {
            (line.contains("[notice]") && line.contains(": nginx/")).then(|| url.clone())
        };
        let child = match super::spawn_serving(command, NGINX_START, listening).await {
            Ok((child, _)) => child,
            Err(e) => {
                let log = std::fs::read_to_string(root.join("error.log")).unwrap_or_default();
                bail!("nginx did not start listening on {listen}: {e:#}\n{log}");
            }
        };
        Ok(Self {
            _child: child,
            _dir: dir,
            url,
        })
    }
}
