//! Resource URIs on a board: one reversible namespacing scheme (PASSTHROUGH.md §3).
//!
//! A server's URI `u`, on a board where the server's namespace has the alias `ns`, is shown as
//! `ns+u` (`file:///x` → `docs+file:///x`): `+` is legal in a URI scheme (RFC 3986 §3.1), so the
//! result is still an absolute URI, and a URI library that checks schemes accepts it. `ui://`
//! URIs keep their scheme, which MCP Apps hosts require: `ui://widget/a.html` →
//! `ui://ns+widget/a.html`. One split at the first `+` undoes either form, whatever the original
//! scheme holds (`git+https://…` survives), because aliases never contain `+`.
//!
//! ```
//! use pegboard::uri;
//! assert_eq!(uri::alias("my_repo"), "my-repo");
//! assert_eq!(uri::encode("docs", "file:///x"), "docs+file:///x");
//! assert_eq!(uri::encode("app", "ui://widget/a.html"), "ui://app+widget/a.html");
//! assert_eq!(uri::split("docs+git+https://h/r.git"), Some(("docs", "git+https://h/r.git".to_string())));
//! assert_eq!(uri::split("ui://app+widget/a.html"), Some(("app", "ui://widget/a.html".to_string())));
//! assert_eq!(uri::split("file:///x"), None);
//! ```

use rmcp::model::{CallToolResult, ContentBlock, MetaObject, PromptMessage, ResourceContents};

const UI: &str = "ui://";

/// The alias a namespace's URIs carry: the namespace itself when it is a valid URI scheme
/// without `+` (`^[A-Za-z][A-Za-z0-9.-]*$`), else a derived one: lower case, other characters
/// as `-`, `x-` before a leading non-letter (`my_repo` → `my-repo`, `1password` → `x-1password`).
///
/// Schemes are case-insensitive, and some URI libraries (pydantic's `AnyUrl`) refuse a scheme
/// with `_`: both are why an alias is not just the namespace.
pub fn alias(namespace: &str) -> String {
    if is_scheme(namespace) {
        return namespace.to_string();
    }
    let mut out = String::with_capacity(namespace.len() + 2);
    if !namespace.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.push_str("x-");
    }
    out.extend(namespace.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            c.to_ascii_lowercase()
        } else {
            '-'
        }
    }));
    out
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
}

/// The URI a board shows for a server's `uri`, under `alias` (see [`alias`]).
pub fn encode(alias: &str, uri: &str) -> String {
    match uri.strip_prefix(UI) {
        Some(rest) => format!("{UI}{alias}+{rest}"),
        None => format!("{alias}+{uri}"),
    }
}

/// Undo [`encode`]: the alias and the server's own URI, or `None` when `uri` carries no alias.
pub fn split(uri: &str) -> Option<(&str, String)> {
    if let Some(rest) = uri.strip_prefix(UI) {
        let (alias, rest) = rest.split_once('+')?;
        return (!alias.is_empty()).then(|| (alias, format!("{UI}{rest}")));
    }
    let (alias, rest) = uri.split_once('+')?;
    // `ns+` before a scheme: the alias part is a scheme itself, and something follows.
    (is_scheme(alias) && !rest.is_empty()).then(|| (alias, rest.to_string()))
}

/// Encode every URI a tool result carries: resource links, embedded resources and the MCP
/// Apps `_meta.ui.resourceUri`. Text and `structuredContent` are the server's words and stay.
pub fn encode_call_result(result: &mut CallToolResult, alias: &str) {
    for block in &mut result.content {
        encode_content(block, alias);
    }
    encode_ui_meta(result.meta.as_mut(), alias);
}

/// Encode the URIs of prompt messages (embedded resources, resource links).
pub fn encode_prompt_messages(messages: &mut [PromptMessage], alias: &str) {
    for message in messages {
        encode_content(&mut message.content, alias);
    }
}

/// Encode the URI of one content block, if it carries one.
pub fn encode_content(block: &mut ContentBlock, alias: &str) {
    match block {
        ContentBlock::ResourceLink(link) => link.uri = encode(alias, &link.uri),
        ContentBlock::Resource(embedded) => encode_contents(&mut embedded.resource, alias),
        _ => {}
    }
}

/// Encode the URI of read resource contents.
pub fn encode_contents(contents: &mut ResourceContents, alias: &str) {
    match contents {
        ResourceContents::TextResourceContents { uri, .. }
        | ResourceContents::BlobResourceContents { uri, .. } => *uri = encode(alias, uri),
        _ => {}
    }
}

/// Encode `_meta.ui.resourceUri` (MCP Apps: the UI a tool or result shows), if present.
pub fn encode_ui_meta(meta: Option<&mut MetaObject>, alias: &str) {
    let Some(ui) = meta.and_then(|m| m.get_mut("ui")) else {
        return;
    };
    if let Some(serde_json::Value::String(uri)) = ui.get_mut("resourceUri") {
        *uri = encode(alias, uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_and_split_are_inverse() {
        for (ns, uri) in [
            (
                "everything",
                "demo://resource/static/document/architecture.md",
            ),
            ("everything", "test://static/resource/{id}"),
            ("a", "file:///x+y"),
            ("my-repo", "git+https://h/r.git"),
            ("app", "ui://widget/a.html"),
            ("app", "urn:isbn:0451450523"),
        ] {
            let shown = encode(&alias(ns), uri);
            assert_eq!(
                split(&shown),
                Some((alias(ns).as_str(), uri.to_string())),
                "{shown}"
            );
        }
    }

    #[test]
    fn aliases_are_schemes() {
        assert_eq!(alias("everything"), "everything");
        assert_eq!(alias("github.com"), "github.com");
        assert_eq!(alias("my_repo"), "my-repo");
        assert_eq!(alias("1password"), "x-1password");
        assert_eq!(alias("Web Search"), "web-search");
        assert_eq!(alias(""), "x-");
        for ns in ["my_repo", "1password", "Web Search", "ü"] {
            assert!(is_scheme(&alias(ns)), "{ns}");
        }
    }

    #[test]
    fn plain_uris_carry_no_alias() {
        assert_eq!(split("file:///x"), None);
        assert_eq!(split("ui://widget/a.html"), None);
        assert_eq!(split("ui://+x"), None);
        assert_eq!(split("a+"), None);
        assert_eq!(split("not a scheme+file:///x"), None);
    }

    #[test]
    fn results_are_rewritten_but_text_is_not() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("see demo://x"),
            ContentBlock::ResourceLink(rmcp::model::Resource::new("demo://x", "x")),
            ContentBlock::embedded_text("ui://w/a.html", "<html>"),
        ]);
        let mut meta = MetaObject::new();
        meta.insert(
            "ui".into(),
            serde_json::json!({ "resourceUri": "ui://w/a.html" }),
        );
        result.meta = Some(meta);
        encode_call_result(&mut result, "ns");
        let json = serde_json::to_value(&result).expect("serialises");
        assert_eq!(json["content"][0]["text"], "see demo://x");
        assert_eq!(json["content"][1]["uri"], "ns+demo://x");
        assert_eq!(json["content"][2]["resource"]["uri"], "ui://ns+w/a.html");
        assert_eq!(json["_meta"]["ui"]["resourceUri"], "ui://ns+w/a.html");
    }
}
