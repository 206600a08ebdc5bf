//! What `classify` makes of each kind of line the lane may meet.

use super::*;

fn call(line: &str) -> Call<'_> {
    match classify(line.as_bytes()) {
        Incoming::Call(call) => call,
        other => panic!("not a call: {other:?}"),
    }
}

#[test]
fn a_call_gets_the_upstream_id_and_original_name_and_keeps_the_rest() {
    let line = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"units-convert","arguments":{"value":10,"x":[1,{"name":"n"}]}}}"#;
    let c = call(line);
    assert_eq!(c.name, "units-convert");
    assert_eq!(c.id(), b"42");
    let up = c.upstream_line("pbx-3", "convert", None);
    assert_eq!(
        String::from_utf8(up).expect("utf-8"),
        r#"{"jsonrpc":"2.0","id":"pbx-3","method":"tools/call","params":{"name":"convert","arguments":{"value":10,"x":[1,{"name":"n"}]}}}"#.to_string() + "\n"
    );
    // Members in another order, a string id with an escape.
    let line = r#"{"params":{"arguments":{},"name":"a-b"},"method":"tools/call","id":"x\"y","jsonrpc":"2.0"}"#;
    let c = call(line);
    assert_eq!(c.name, "a-b");
    assert_eq!(c.id(), br#""x\"y""#);
    let up: serde_json::Value =
        serde_json::from_slice(&c.upstream_line("pbx-4", "b\"q", None)).expect("JSON");
    assert_eq!(up["id"], "pbx-4");
    assert_eq!(up["params"]["name"], "b\"q");
}

#[test]
fn the_clients_own_meta_goes_upstream_verbatim() {
    let line = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"n-t","arguments":null,"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","progressToken":"p"}}}"#;
    let c = call(line);
    let up: serde_json::Value =
        serde_json::from_slice(&c.upstream_line("pbx-2", "t", None)).expect("JSON");
    assert_eq!(
        up["params"]["_meta"],
        serde_json::json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "progressToken": "pbx-2"
        })
    );
}

#[test]
fn the_trace_context_replaces_the_clients_or_is_added() {
    let trace = crate::telemetry::TraceContext::parse(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        Some("k=v"),
        None,
    )
    .expect("a trace context");
    let child = trace.child();
    let replaced = call(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n-t","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"k=v"}}}"#,
    );
    assert!(replaced.trace_parts().is_some());
    let up: serde_json::Value =
        serde_json::from_slice(&replaced.upstream_line("pbx-1", "t", Some(&child))).expect("JSON");
    assert_eq!(up["params"]["_meta"]["traceparent"], child.traceparent());
    assert_eq!(up["params"]["_meta"]["tracestate"], "k=v");
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n-t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n-t","_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n-t","_meta":{"x":1}}}"#,
    ] {
        let added = call(line);
        assert!(added.trace_parts().is_none());
        let up: serde_json::Value =
            serde_json::from_slice(&added.upstream_line("pbx-1", "t", Some(&child)))
                .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(
            up["params"]["_meta"]["traceparent"],
            child.traceparent(),
            "{line}"
        );
        assert_eq!(up["params"]["name"], "t");
    }
}

#[test]
fn null_members_read_as_absent_and_escaped_names_as_themselves() {
    let c = call(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"a-b","arguments":null,"_meta":null}}"#,
    );
    assert_eq!(c.name, "a-b");
    assert_eq!(c.arguments(), b"{}");
    assert_eq!(c.progress_token(), None);
    let up: serde_json::Value =
        serde_json::from_slice(&c.upstream_line("pbx-1", "b", None)).expect("JSON");
    assert_eq!(up["params"]["name"], "b");
}

#[test]
fn a_response_with_a_string_id_is_read_as_one() {
    let line = br#"{"jsonrpc":"2.0","id":"pbs-3","result":{"action":"accept"}}"#;
    assert!(matches!(
        classify(line),
        Incoming::Response {
            id: "pbs-3",
            result: Some(_),
            error: None
        }
    ));
    let numbered = br#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    assert!(matches!(classify(numbered), Incoming::Other));
}

#[test]
fn a_progress_token_is_mapped_to_the_upstream_id() {
    let line = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":"tok"},"name":"n-t","arguments":{}}}"#;
    let c = call(line);
    assert_eq!(c.progress_token(), Some(&br#""tok""#[..]));
    assert_eq!(
        String::from_utf8(c.upstream_line("pbx-1", "t", None)).expect("utf-8"),
        r#"{"jsonrpc":"2.0","id":"pbx-1","method":"tools/call","params":{"_meta":{"progressToken":"pbx-1"},"name":"t","arguments":{}}}"#.to_string() + "\n"
    );
    let plain =
        call(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{}}}"#);
    assert_eq!(plain.progress_token(), None);
}

#[test]
fn calls_rmcp_must_judge_and_other_messages_go_the_full_way() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","extra":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
        // A name with escapes has no bytes to splice.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a-\u0062"}}"#,
        // A member twice, written plainly or with escapes: rmcp refuses those.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"\u0061rguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","cursor":"c"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
        "not json",
    ] {
        assert!(
            matches!(classify(line.as_bytes()), Incoming::Other),
            "{line}"
        );
    }
    for line in [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":null,"_meta":null}}"#,
    ] {
        assert!(
            matches!(classify(line.as_bytes()), Incoming::ListTools(b"7")),
            "{line}"
        );
    }
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"x"}}"#;
    assert!(matches!(classify(cancel), Incoming::Cancelled(id) if id == br#""r-1""#));
}

#[test]
fn initialize_says_whether_it_asks_for_a_legacy_generation() {
    let legacy = |version: &str| {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}}}}}}"#
        );
        match classify(line.as_bytes()) {
            Incoming::Initialize { legacy } => legacy,
            _ => panic!("not an initialize: {line}"),
        }
    };
    assert!(legacy("2024-11-05"));
    assert!(legacy("2025-11-25"));
    assert!(!legacy("2026-07-28"));
    assert!(!legacy("2027-01-01"));
    let no_version = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    assert!(matches!(
        classify(no_version),
        Incoming::Initialize { legacy: false }
    ));
}

#[test]
fn strings_are_written_as_serde_json_writes_them() {
    for text in [
        "convert",
        "",
        "pbx-12",
        "é ünïcode ☃",
        "a\"b",
        "back\\slash",
        "tab\there",
        "\u{1}",
        "\u{7f}",
        "/slash",
    ] {
        let mut out = b"x".to_vec();
        write_json_string(&mut out, text);
        let want = serde_json::to_vec(text).expect("a string");
        assert_eq!(&out[1..], &want[..], "{text:?}");
    }
}

#[test]
fn a_line_that_is_not_utf8_goes_rmcps_way() {
    let mut line =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a-b","arguments":{"x":"?"}}}"#
            .to_vec();
    let at = line.len() - 5;
    line[at] = 0xff;
    assert!(matches!(classify(&line), Incoming::Other));
    line[at] = b'y';
    assert!(matches!(classify(&line), Incoming::Call(_)));
}
