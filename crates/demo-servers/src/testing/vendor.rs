//! Tool definitions with members rmcp's [`rmcp::model::Tool`] does not model (with
//! [`super::TestServerOptions::vendor_tools`]): a vendor's own member, `execution` (MCP
//! 2025-11-25), beside `icons`, `_meta`, `annotations` and an `outputSchema`. rmcp's typed list
//! cannot carry them, so [`super::Faults`] appends them to the server's `tools/list` answer as
//! raw JSON (over stdio; the tools are listed only, a call of one is an unknown tool).

use serde_json::{Value, json};

/// The definitions appended to `tools/list`, as the server sends them.
pub fn vendor_tools() -> Vec<Value> {
    vec![
        json!({
            "name": "vendor_read",
            "title": "Read a record",
            "description": "Read one record of the vendor's store.",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "integer", "minimum": 1}},
                "required": ["id"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"record": {"type": "string"}, "version": {"type": "integer"}},
                "required": ["record"]
            },
            "annotations": {"title": "Read", "readOnlyHint": true, "openWorldHint": false},
            "icons": [{"src": "https://example.com/read.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            "_meta": {"example.com/owner": "team-a", "example.com/rank": 3},
            "execution": {"taskSupport": "forbidden"},
            "x-vendor": {"tier": 2, "tags": ["records", "read"], "rate": 0.5}
        }),
        json!({
            "name": "vendor_write",
            "description": "Write one record.",
            "inputSchema": {"type": "object", "properties": {"record": {"type": "string"}}},
            "execution": {"taskSupport": "forbidden", "x-queue": "fast"},
            "x-vendor": "plain string member",
            "x-vendor-null": null
        }),
        json!({
            "name": "vendor_bare",
            "inputSchema": {"type": "object"},
            "x-vendor": [1, 2, 3]
        }),
    ]
}
