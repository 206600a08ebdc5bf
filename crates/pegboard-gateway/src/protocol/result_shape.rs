//! [`ResultShape`]: the common tool result, told apart without building it — text blocks only,
//! nothing the board changes — read in the same pass as the answer that carries it.
//!
//! Reading a result into rmcp's `CallToolResult` buffers every content block (its `type` tag is
//! read first); most results are a few text blocks that pass to the client as they are. A result
//! is [`ResultShape::Plain`] only when it is one that rmcp's reading accepts and that neither URI
//! namespacing nor anything else of the board touches: a `content` array of blocks holding
//! exactly a `type` of `"text"` and a string `text`, an `isError` that is a boolean if present, a
//! `structuredContent` of any value, other members (ignored by rmcp as here), and no `_meta` or
//! `resultType`. Everything else — another block type, a block with `annotations` or `_meta`, a
//! `null` where rmcp reads "absent", a member twice — is [`ResultShape::Other`], left to rmcp's
//! reading, which decides about it. Reading never fails on valid JSON: whatever is not plain is
//! skipped as `IgnoredAny` skips it.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A tool result, as far as the express lane must look at it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResultShape {
    /// Text blocks only: passed to the client as it is.
    Plain {
        /// Its `isError`.
        is_error: bool,
    },
    /// Anything else: read as rmcp reads it.
    Other,
}

impl<'de> Deserialize<'de> for ResultShape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Reader(Want::Result).deserialize(deserializer)? {
            Seen::Result(shape) => Ok(shape),
            _ => Ok(ResultShape::Other),
        }
    }
}

/// What a [`Reader`] reads.
#[derive(Clone, Copy)]
enum Want {
    Result,
    Blocks,
    Block,
    TextType,
    Text,
    Flag,
}

/// What a [`Reader`] saw.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// The value is what was wanted (a text block, the `"text"` type, a string, all text blocks).
    Yes,
    /// It is not.
    No,
    Flag(bool),
    Result(ResultShape),
}

/// Reads one value as `Want` says, accepting any JSON value (see the module docs).
struct Reader(Want);

impl Reader {
    fn no(&self) -> Seen {
        match self.0 {
            Want::Result => Seen::Result(ResultShape::Other),
            _ => Seen::No,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Reader {
    type Value = Seen;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Seen, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reader {
    type Value = Seen;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Seen, E> {
        Ok(match self.0 {
            Want::Flag => Seen::Flag(v),
            _ => self.no(),
        })
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Seen, E> {
        Ok(self.no())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Seen, E> {
        Ok(self.no())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Seen, E> {
        Ok(self.no())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Seen, E> {
        Ok(self.no())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Seen, E> {
        Ok(match self.0 {
            Want::TextType if v == "text" => Seen::Yes,
            Want::Text => Seen::Yes,
            _ => self.no(),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seen, A::Error> {
        let Want::Blocks = self.0 else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(self.no());
        };
        let mut all_text = true;
        while let Some(block) = seq.next_element_seed(Reader(Want::Block))? {
            all_text &= block == Seen::Yes;
        }
        Ok(if all_text { Seen::Yes } else { Seen::No })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Seen, A::Error> {
        match self.0 {
            Want::Result => read_result(map),
            Want::Block => read_block(map),
            _ => {
                skip(map)?;
                Ok(self.no())
            }
        }
    }
}

fn skip<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A result object's members (see the module docs).
fn read_result<'de, A: MapAccess<'de>>(mut map: A) -> Result<Seen, A::Error> {
    let (mut content, mut is_error, mut structured) = (None, None, false);
    // A member rmcp reads otherwise, or twice (which rmcp refuses).
    let mut odd = false;
    while let Some(key) = map.next_key::<Key>()? {
        match key {
            Key::Content => {
                let seen = map.next_value_seed(Reader(Want::Blocks))?;
                odd |= content.replace(seen == Seen::Yes).is_some();
            }
            Key::IsError => match map.next_value_seed(Reader(Want::Flag))? {
                Seen::Flag(flag) => odd |= is_error.replace(flag).is_some(),
                _ => odd = true,
            },
            Key::StructuredContent => {
                map.next_value::<IgnoredAny>()?;
                odd |= std::mem::replace(&mut structured, true);
            }
            Key::ResultType | Key::Meta => {
                map.next_value::<IgnoredAny>()?;
                odd = true;
            }
            Key::Type | Key::Text | Key::Other => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(Seen::Result(match (content, odd) {
        (Some(true), false) => ResultShape::Plain {
            is_error: is_error == Some(true),
        },
        _ => ResultShape::Other,
    }))
}

/// A content block's members: exactly a `type` of `"text"` and a string `text`.
fn read_block<'de, A: MapAccess<'de>>(mut map: A) -> Result<Seen, A::Error> {
    let (mut kind, mut text, mut odd) = (None, None, false);
    while let Some(key) = map.next_key::<Key>()? {
        match key {
            Key::Type => {
                odd |= kind
                    .replace(map.next_value_seed(Reader(Want::TextType))?)
                    .is_some()
            }
            Key::Text => {
                odd |= text
                    .replace(map.next_value_seed(Reader(Want::Text))?)
                    .is_some()
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
                odd = true;
            }
        }
    }
    Ok(match (kind, text, odd) {
        (Some(Seen::Yes), Some(Seen::Yes), false) => Seen::Yes,
        _ => Seen::No,
    })
}

/// A member's name, escaped or not.
enum Key {
    Content,
    IsError,
    StructuredContent,
    ResultType,
    Meta,
    Type,
    Text,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "content" => Key::Content,
                    "isError" => Key::IsError,
                    "structuredContent" => Key::StructuredContent,
                    "resultType" => Key::ResultType,
                    "_meta" => Key::Meta,
                    "type" => Key::Type,
                    "text" => Key::Text,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CallToolResult;

    #[derive(Deserialize)]
    struct Answer {
        result: ResultShape,
    }

    fn shape(line: &str) -> ResultShape {
        serde_json::from_str::<Answer>(line)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .result
    }

    fn rmcp_reads(line: &str) -> bool {
        #[derive(Deserialize)]
        struct Whole {
            #[expect(dead_code, reason = "read to check it")]
            result: CallToolResult,
        }
        serde_json::from_str::<Whole>(line).is_ok()
    }

    #[test]
    fn plain_results_are_ones_rmcp_reads_and_the_rest_is_left_to_rmcp() {
        let plain = [
            (
                r#"{"jsonrpc":"2.0","id":"pbx-1","result":{"content":[{"type":"text","text":"1 km"}]}}"#,
                false,
            ),
            (
                r#"{"id":"pbx-1","result":{"content":[],"isError":true}}"#,
                true,
            ),
            (
                r#"{"id":"pbx-1","result":{"content":[{"type":"text","text":"a \"q\" \u00e9\n"}],"structuredContent":{"x":[1]}}}"#,
                false,
            ),
            (
                r#"{"id":"pbx-1","result":{"content":[{"text":"x","type":"text"},{"type":"text","text":"y"}],"isError":false,"extra":[{"type":1}]}}"#,
                false,
            ),
            // Member names written with escapes are the same names.
            (
                r#"{"id":"pbx-1","result":{"c\u006fntent":[{"type":"text","text":"x"}]}}"#,
                false,
            ),
        ];
        for (line, is_error) in plain {
            assert_eq!(shape(line), ResultShape::Plain { is_error }, "{line}");
            assert!(rmcp_reads(line), "{line}");
        }
        let other = [
            // Not text, or text with more than its text.
            r#"{"id":"pbx-1","result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"text","text":"x","_meta":{}}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"text","text":"x","annotations":{}}]}}"#,
            // Members the board or rmcp looks at.
            r#"{"id":"pbx-1","result":{"content":[],"_meta":{"ui":{}}}}"#,
            r#"{"id":"pbx-1","result":{"content":[],"resultType":"complete"}}"#,
            // Shapes rmcp refuses, or reads otherwise.
            r#"{"id":"pbx-1","result":{}}"#,
            r#"{"id":"pbx-1","result":[]}"#,
            r#"{"id":"pbx-1","result":"done"}"#,
            r#"{"id":"pbx-1","result":{"content":null,"isError":true}}"#,
            r#"{"id":"pbx-1","result":{"content":{"type":"text","text":"x"}}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"text"}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"text","text":7}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"text","text":"x","text":"y"}]}}"#,
            r#"{"id":"pbx-1","result":{"content":[{"type":"ui","text":"x"}]}}"#,
            r#"{"id":"pbx-1","result":{"content":["x"]}}"#,
            r#"{"id":"pbx-1","result":{"content":[],"isError":"yes"}}"#,
            r#"{"id":"pbx-1","result":{"content":[],"isError":null}}"#,
            r#"{"id":"pbx-1","result":{"content":[],"content":[]}}"#,
            r#"{"id":"pbx-1","result":{"content":[],"structuredContent":1,"structuredContent":2}}"#,
            r#"{"id":"pbx-1","result":{"structuredContent":{}}}"#,
        ];
        for line in other {
            assert_eq!(shape(line), ResultShape::Other, "{line}");
        }
    }
}
