//! Canonical JSON for hashing arguments: object keys sorted by their UTF-16 code units (as RFC
//! 8785, JCS, sorts them), no whitespace, strings and numbers as `serde_json` writes them (the
//! same as JCS for strings and integers). Two argument objects that differ only in key order
//! or spacing hash the same.
//!
//! Hand-written rather than a JCS crate: the crates for it switch on `serde_json`'s
//! `float_roundtrip` feature, which would change float parsing for the whole gateway.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Append the canonical form of `value` to `out`.
pub(crate) fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                scalar(&Value::String(k.clone()), out);
                out.push(b':');
                write(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(v, out);
            }
            out.push(b']');
        }
        other => scalar(other, out),
    }
}

fn scalar(value: &Value, out: &mut Vec<u8>) {
    // Writing a scalar into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// The SHA-256, in hex, of `value`'s canonical form.
pub(crate) fn sha256_hex(value: &Value) -> String {
    let mut bytes = Vec::new();
    write(value, &mut bytes);
    hex::encode(Sha256::digest(&bytes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(v: &Value) -> String {
        let mut out = Vec::new();
        write(v, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn keys_are_sorted_at_every_depth_and_spacing_is_gone() {
        let v: Value =
            serde_json::from_str(r#"{ "b": [ {"z": 1, "a": "x"} ], "a": null }"#).unwrap();
        assert_eq!(text(&v), r#"{"a":null,"b":[{"a":"x","z":1}]}"#);
    }

    #[test]
    fn key_order_and_spacing_do_not_change_the_hash_but_values_do() {
        let a: Value = serde_json::from_str(r#"{"x": 1, "y": "two"}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"y":"two","x":1}"#).unwrap();
        assert_eq!(sha256_hex(&a), sha256_hex(&b));
        assert_ne!(sha256_hex(&a), sha256_hex(&json!({"x": 2, "y": "two"})));
        assert_eq!(sha256_hex(&json!({})), hex::encode(Sha256::digest(b"{}")));
    }

    #[test]
    fn utf16_order_puts_astral_characters_before_high_bmp_ones() {
        // U+1F600 is D83D DE00 in UTF-16, before U+FF21; by bytes (F0.. vs EF..) it is after.
        let v = json!({"\u{FF21}": 1, "\u{1F600}": 2});
        assert_eq!(text(&v), "{\"\u{1F600}\":2,\"\u{FF21}\":1}");
    }
}
