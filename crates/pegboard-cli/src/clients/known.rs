//! The clients pegboard knows: where each keeps its MCP servers on Linux, macOS and Windows,
//! in which format and under which key. Data only; the shapes of their entries are in
//! [`super::convert`].

use std::path::{Path, PathBuf};

use super::format::{Container, Format};

/// One of the known clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientId {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code (the `claude` CLI).
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// VS Code (Copilot chat).
    VsCode,
    /// Windsurf.
    Windsurf,
    /// Zed.
    Zed,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// Block's Goose.
    Goose,
    /// LM Studio.
    LmStudio,
    /// Continue.
    Continue,
    /// opencode.
    OpenCode,
}

/// Every known client, in the order `pegboard clients` lists them.
pub const ALL: [ClientId; 12] = [
    ClientId::ClaudeDesktop,
    ClientId::ClaudeCode,
    ClientId::Cursor,
    ClientId::VsCode,
    ClientId::Windsurf,
    ClientId::Zed,
    ClientId::Codex,
    ClientId::Gemini,
    ClientId::Goose,
    ClientId::LmStudio,
    ClientId::Continue,
    ClientId::OpenCode,
];

/// The operating systems whose paths differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unixes.
    Linux,
    /// macOS.
    Mac,
    /// Windows.
    Windows,
}

impl Os {
    /// The one this binary was built for.
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The environment the paths depend on (read once, so tests can give their own).
#[derive(Debug, Clone)]
pub struct Env {
    /// The OS.
    pub os: Os,
    /// `$HOME` (`%USERPROFILE%` on Windows).
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, when absolute.
    pub xdg_config: Option<PathBuf>,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR` (Claude Code).
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME` (Codex).
    pub codex_home: Option<PathBuf>,
}

impl Env {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let os = Os::current();
        let home = if os == Os::Windows {
            var("USERPROFILE").or_else(|| var("HOME"))
        } else {
            var("HOME")
        };
        Self {
            os,
            home,
            xdg_config: var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
            appdata: var("APPDATA"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
        }
    }

    fn home(&self, rel: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|h| join(h, rel))
    }

    /// `$XDG_CONFIG_HOME/rel`, else `~/.config/rel` (Linux; the tools that follow XDG on macOS too).
    fn xdg(&self, rel: &str) -> Option<PathBuf> {
        match &self.xdg_config {
            Some(x) => Some(join(x, rel)),
            None => self.home(&format!(".config/{rel}")),
        }
    }

    fn appdata(&self, rel: &str) -> Option<PathBuf> {
        match &self.appdata {
            Some(a) => Some(join(a, rel)),
            None => self.home(&format!("AppData/Roaming/{rel}")),
        }
    }
}

fn join(base: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(base.to_path_buf(), |p, part| p.join(part))
}

impl ClientId {
    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            ClientId::ClaudeDesktop => "claude-desktop",
            ClientId::ClaudeCode => "claude-code",
            ClientId::Cursor => "cursor",
            ClientId::VsCode => "vscode",
            ClientId::Windsurf => "windsurf",
            ClientId::Zed => "zed",
            ClientId::Codex => "codex",
            ClientId::Gemini => "gemini",
            ClientId::Goose => "goose",
            ClientId::LmStudio => "lmstudio",
            ClientId::Continue => "continue",
            ClientId::OpenCode => "opencode",
        }
    }

    /// The client called `name`.
    pub fn parse(name: &str) -> Option<Self> {
        ALL.into_iter().find(|c| c.name() == name)
    }

    /// The format of its file.
    pub fn format(self) -> Format {
        match self {
            ClientId::Codex => Format::Toml,
            ClientId::Goose | ClientId::Continue => Format::Yaml,
            _ => Format::Json,
        }
    }

    /// Where in its file the servers are.
    pub fn container(self) -> Container {
        match self {
            ClientId::VsCode => Container::Map("servers"),
            ClientId::Zed => Container::Map("context_servers"),
            ClientId::Codex => Container::Map("mcp_servers"),
            ClientId::Goose => Container::Map("extensions"),
            ClientId::Continue => Container::List("mcpServers"),
            ClientId::OpenCode => Container::Map("mcp"),
            _ => Container::Map("mcpServers"),
        }
    }

    /// The user-scope file on `env.os`; `None` without a home folder.
    pub fn user_path(self, env: &Env) -> Option<PathBuf> {
        let os = env.os;
        match self {
            ClientId::ClaudeDesktop => match os {
                // No official Linux build: the community builds keep it here.
                Os::Linux => env.xdg("Claude/claude_desktop_config.json"),
                Os::Mac => {
                    env.home("Library/Application Support/Claude/claude_desktop_config.json")
                }
                Os::Windows => env.appdata("Claude/claude_desktop_config.json"),
            },
            ClientId::ClaudeCode => match &env.claude_config_dir {
                Some(dir) => Some(dir.join(".claude.json")),
                None => env.home(".claude.json"),
            },
            ClientId::Cursor => env.home(".cursor/mcp.json"),
            ClientId::VsCode => match os {
                Os::Linux => env.xdg("Code/User/mcp.json"),
                Os::Mac => env.home("Library/Application Support/Code/User/mcp.json"),
                Os::Windows => env.appdata("Code/User/mcp.json"),
            },
            ClientId::Windsurf => env.home(".codeium/windsurf/mcp_config.json"),
            ClientId::Zed => match os {
                Os::Linux => env.xdg("zed/settings.json"),
                Os::Mac => env.home(".config/zed/settings.json"),
                Os::Windows => env.appdata("Zed/settings.json"),
            },
            ClientId::Codex => match &env.codex_home {
                Some(dir) => Some(dir.join("config.toml")),
                None => env.home(".codex/config.toml"),
            },
            ClientId::Gemini => env.home(".gemini/settings.json"),
            ClientId::Goose => match os {
                Os::Windows => env.appdata("Block/goose/config/config.yaml"),
                _ => env.xdg("goose/config.yaml"),
            },
            ClientId::LmStudio => env.home(".lmstudio/mcp.json"),
            ClientId::Continue => env.home(".continue/config.yaml"),
            ClientId::OpenCode => match os {
                Os::Windows => env.home(".config/opencode/opencode.json"),
                _ => env.xdg("opencode/opencode.json"),
            },
        }
    }

    /// The project-scope file, relative to the project's folder, for the clients that have one.
    pub fn project_file(self) -> Option<&'static str> {
        match self {
            ClientId::ClaudeCode => Some(".mcp.json"),
            ClientId::Cursor => Some(".cursor/mcp.json"),
            ClientId::VsCode => Some(".vscode/mcp.json"),
            ClientId::Codex => Some(".codex/config.toml"),
            ClientId::Gemini => Some(".gemini/settings.json"),
            ClientId::Zed => Some(".zed/settings.json"),
            ClientId::OpenCode => Some("opencode.json"),
            _ => None,
        }
    }
}

/// The known clients' names, for messages.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|c| c.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(os: Os) -> Env {
        Env {
            os,
            home: Some(PathBuf::from("/h")),
            xdg_config: None,
            appdata: Some(PathBuf::from("/h/AppData/Roaming")),
            claude_config_dir: None,
            codex_home: None,
        }
    }

    #[test]
    fn paths_follow_the_os_and_the_variables() {
        let linux = env(Os::Linux);
        let path = |c: ClientId, e: &Env| c.user_path(e).expect("path");
        assert_eq!(
            path(ClientId::ClaudeDesktop, &linux),
            Path::new("/h/.config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClientId::ClaudeDesktop, &env(Os::Mac)),
            Path::new("/h/Library/Application Support/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClientId::VsCode, &env(Os::Windows)),
            Path::new("/h/AppData/Roaming/Code/User/mcp.json")
        );
        assert_eq!(
            path(ClientId::Goose, &env(Os::Mac)),
            Path::new("/h/.config/goose/config.yaml")
        );
        let mut custom = env(Os::Linux);
        custom.xdg_config = Some(PathBuf::from("/x"));
        custom.claude_config_dir = Some(PathBuf::from("/cc"));
        custom.codex_home = Some(PathBuf::from("/cx"));
        assert_eq!(
            path(ClientId::Zed, &custom),
            Path::new("/x/zed/settings.json")
        );
        assert_eq!(
            path(ClientId::ClaudeCode, &custom),
            Path::new("/cc/.claude.json")
        );
        assert_eq!(path(ClientId::Codex, &custom), Path::new("/cx/config.toml"));
        assert_eq!(
            path(ClientId::Cursor, &custom),
            Path::new("/h/.cursor/mcp.json")
        );
    }

    #[test]
    fn every_name_parses_back() {
        for c in ALL {
            assert_eq!(ClientId::parse(c.name()), Some(c));
        }
        assert_eq!(ClientId::parse("emacs"), None);
    }
}
