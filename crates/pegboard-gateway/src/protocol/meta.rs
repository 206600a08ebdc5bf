//! A request's `_meta` on its way upstream: the client's own members (a `traceparent`, a
//! `tracestate`, `baggage`, a vendor's key) go with the request to the server, as they would
//! without the gateway; what belongs to the client's session with the gateway does not (its
//! progress token, mapped to the upstream's own; its 2026-07-28 lifecycle members, which rmcp
//! sets for the gateway's session with the server).

use rmcp::model::RequestMetaObject;

/// The progress token's key.
pub(crate) const PROGRESS_TOKEN: &str = "progressToken";

/// Whether a `_meta` member describes the client's session with the gateway, so it is not
/// passed upstream (the upstream request gets the gateway's own).
pub(crate) fn is_session_key(key: &str) -> bool {
    key == PROGRESS_TOKEN
        || matches!(
            key,
            "io.modelcontextprotocol/protocolVersion"
                | "io.modelcontextprotocol/clientInfo"
                | "io.modelcontextprotocol/clientCapabilities"
                | "io.modelcontextprotocol/logLevel"
        )
}

/// The client's `_meta` as the upstream request carries it (see the module docs); `None` when
/// nothing of it goes on.
pub(crate) fn for_upstream(meta: Option<RequestMetaObject>) -> Option<RequestMetaObject> {
    let mut meta = meta?;
    meta.retain(|key, _| !is_session_key(key));
    (!meta.is_empty()).then_some(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_own_members_go_on_and_its_session_members_do_not() {
        let meta: RequestMetaObject = serde_json::from_value(serde_json::json!({
            "progressToken": 3,
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "com.example/tenant": "a",
        }))
        .expect("meta");
        let up = for_upstream(Some(meta)).expect("members left");
        let mut keys: Vec<&str> = up.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["com.example/tenant", "traceparent"]);
        let only_token: RequestMetaObject =
            serde_json::from_value(serde_json::json!({"progressToken": 1})).expect("meta");
        assert!(for_upstream(Some(only_token)).is_none());
        assert!(for_upstream(None).is_none());
    }
}
