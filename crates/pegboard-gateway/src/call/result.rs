//! The last step of every call: the server's result as the board shows it (resource URIs
//! namespaced, PASSTHROUGH.md §3) and within its server's `maxResultTokens`, whichever path
//! carried it.

use pegboard::ToolTarget;
use rmcp::model::{CallToolResult, ContentBlock};

use super::route::Route;
use crate::guards::caps::{self, Capped};

/// `result` as the client gets it from `route`'s server: URIs namespaced, cut to the server's
/// cap. Whether anything was changed.
pub(crate) fn finish(result: &mut CallToolResult, route: &Route) -> bool {
    let renamed = namespace_uris(result, &route.target);
    let capped = match route.result_cap() {
        Some(max) => caps::cap(result, max) != Capped::Within,
        None => false,
    };
    renamed || capped
}

/// Whether a result has a URI to namespace: most have none, and pay only this look.
pub(crate) fn carries_uris(result: &CallToolResult) -> bool {
    result.content.iter().any(|block| {
        matches!(
            block,
            ContentBlock::Resource(_) | ContentBlock::ResourceLink(_)
        )
    }) || result.meta.as_ref().is_some_and(|m| m.contains_key("ui"))
}

/// `result`'s resource URIs as the board shows them (a server added without a namespace keeps
/// its URIs verbatim). Whether anything was changed.
pub(crate) fn namespace_uris(result: &mut CallToolResult, target: &ToolTarget) -> bool {
    match &target.namespace {
        Some(ns) if carries_uris(result) => {
            pegboard::uri::encode_call_result(result, &pegboard::uri::alias(ns));
            true
        }
        _ => false,
    }
}
