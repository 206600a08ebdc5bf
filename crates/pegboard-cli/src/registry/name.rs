//! The config entry's name for a registry server: `io.github.x/server-memory` -> `memory`.

/// The part after the `/`, without a `mcp-server-`/`server-`/`mcp-` prefix or a
/// `-mcp-server`/`-server`/`-mcp` suffix, lowercased, characters other than letters, digits,
/// `-` and `_` made `-`. A name that would end up empty keeps the part after the `/`.
pub fn entry_name(registry_name: &str) -> String {
    let tail = registry_name
        .rsplit_once('/')
        .map_or(registry_name, |(_, t)| t)
        .to_ascii_lowercase();
    let mut name = tail.as_str();
    for prefix in ["mcp-server-", "server-", "mcp-"] {
        if let Some(rest) = name.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            name = rest;
            break;
        }
    }
    for suffix in ["-mcp-server", "-server", "-mcp"] {
        if let Some(rest) = name.strip_suffix(suffix).filter(|r| !r.is_empty()) {
            name = rest;
            break;
        }
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::entry_name;

    #[test]
    fn prefixes_and_suffixes_go() {
        for (full, name) in [
            ("io.github.x/server-memory", "memory"),
            (
                "io.github.modelcontextprotocol/server-everything",
                "everything",
            ),
            ("io.github.brave/brave-search-mcp-server", "brave-search"),
            ("io.github.github/github-mcp-server", "github"),
            ("io.github.upstash/context7", "context7"),
            ("io.github.x/mcp-server-time", "time"),
            ("io.github.x/weather-mcp", "weather"),
            ("io.github.x/notes-server", "notes"),
            ("io.github.x/server", "server"),
            ("io.github.x/My.Tool", "my-tool"),
        ] {
            assert_eq!(entry_name(full), name, "{full}");
        }
    }
}
