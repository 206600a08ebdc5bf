//! A temporary HOME holding the twelve clients' config files (tests/client_files/), and the real
//! `pegboard` binary run against it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every client `pegboard clients` knows, with its fixture and its file under HOME on Linux
/// (`xdg`: under `$XDG_CONFIG_HOME`, which these tests set apart from `~/.config`).
pub const CLIENTS: [(&str, &str, &str); 12] = [
    (
        "claude-desktop",
        "claude-desktop.json",
        "xdg:Claude/claude_desktop_config.json",
    ),
    ("claude-code", "claude-code.json", ".claude.json"),
    ("cursor", "cursor.json", ".cursor/mcp.json"),
    ("vscode", "vscode.jsonc", "xdg:Code/User/mcp.json"),
    (
        "windsurf",
        "windsurf.json",
        ".codeium/windsurf/mcp_config.json",
    ),
    ("zed", "zed.jsonc", "xdg:zed/settings.json"),
    ("codex", "codex.toml", ".codex/config.toml"),
    ("gemini", "gemini.json", ".gemini/settings.json"),
    ("goose", "goose.yaml", "xdg:goose/config.yaml"),
    ("lmstudio", "lmstudio.json", ".lmstudio/mcp.json"),
    ("continue", "continue.yaml", ".continue/config.yaml"),
    ("opencode", "opencode.json", "xdg:opencode/opencode.json"),
];

/// A temporary HOME, XDG_CONFIG_HOME and project folder.
pub struct ClientHome {
    _dir: tempfile::TempDir,
    /// `$HOME`.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`.
    pub xdg: PathBuf,
    /// The current folder of the commands (for `--scope project`).
    pub project: PathBuf,
}

impl ClientHome {
    /// An empty one.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let xdg = dir.path().join("xdg");
        let project = dir.path().join("project");
        for d in [&home, &xdg, &project] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        Self {
            _dir: dir,
            home,
            xdg,
            project,
        }
    }

    /// One with every client's fixture in place.
    pub fn with_fixtures() -> Self {
        let home = Self::new();
        for (client, _, _) in CLIENTS {
            home.install(client);
        }
        home
    }

    /// Where `client`'s user file is.
    pub fn path_of(&self, client: &str) -> PathBuf {
        let (_, _, rel) = entry(client);
        match rel.strip_prefix("xdg:") {
            Some(rel) => self.xdg.join(rel),
            None => self.home.join(rel),
        }
    }

    /// Copy `client`'s fixture to its path.
    pub fn install(&self, client: &str) -> PathBuf {
        let path = self.path_of(client);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::copy(fixture(client), &path).expect("copy fixture");
        path
    }

    /// pegboard's default config here (`$XDG_CONFIG_HOME/pegboard/config.json`).
    pub fn config(&self) -> PathBuf {
        self.xdg.join("pegboard").join("config.json")
    }

    /// The command `pegboard ARGS` with this HOME, nothing else of the caller's config.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(super::pegboard());
        cmd.args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.xdg)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("PEGBOARD_CONFIG")
            .env_remove("APPDATA");
        cmd
    }

    /// Run `pegboard ARGS` to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run pegboard")
    }

    /// Run `pegboard ARGS`, which must exit 0; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "pegboard {args:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn entry(client: &str) -> (&'static str, &'static str, &'static str) {
    *CLIENTS
        .iter()
        .find(|(c, _, _)| *c == client)
        .unwrap_or_else(|| panic!("no client {client}"))
}

/// The fixture file of `client`.
pub fn fixture(client: &str) -> PathBuf {
    let (_, file, _) = entry(client);
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/client_files")
        .join(file)
}

/// The text of `path`.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
