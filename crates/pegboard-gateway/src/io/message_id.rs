//! Find the JSON-RPC `id` of a message without holding the message: [`IdScan`] is fed the
//! message's bytes piece by piece and keeps only a few bytes of state, so an oversized message
//! can be answered with an error for its request while its bytes are thrown away.
//!
//! It is a tokenizer, not a parser: it tracks string and nesting state to tell the top-level
//! `"id"` and `"method"` members from the same words deeper in the message (or inside strings),
//! wherever they are in the object (SDKs put `id` first, or last after a huge `result`).

/// Longest raw `id` kept (a string id longer than this is not an id anyone waits for).
const MAX_ID_BYTES: usize = 256;
/// Longest top-level key kept for comparison (`"method"` is the longest one looked for).
const MAX_KEY_BYTES: usize = 8;

/// What the scan found in a whole message.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The top-level `id` (a number or a string), if there is one.
    pub id: Option<serde_json::Value>,
    /// Whether the message has a top-level `method`: a request or notification from the server,
    /// not a response to one of ours.
    pub has_method: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Method,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between tokens.
    Outside,
    /// Inside a string that is not kept.
    Skipping,
    /// Inside a top-level string: maybe a key, kept in `key` (up to [`MAX_KEY_BYTES`]).
    Key,
    /// Inside a string value of `id`, kept in `value`.
    IdString,
    /// Inside a number value of `id`, kept in `value`.
    IdNumber,
}

/// The incremental scanner; see the module docs.
#[derive(Debug)]
pub struct IdScan {
    depth: usize,
    state: State,
    escaped: bool,
    key: Vec<u8>,
    key_overflow: bool,
    /// The last top-level string closed, while it may still be followed by its `:`.
    pending: Option<Key>,
    /// A `"id":` was just seen: the next token is its value.
    id_value_next: bool,
    value: Vec<u8>,
    id: Option<Vec<u8>>,
    has_method: bool,
}

impl Default for IdScan {
    fn default() -> Self {
        Self::new()
    }
}

impl IdScan {
    /// A scan at the start of a message.
    pub fn new() -> Self {
        Self {
            depth: 0,
            state: State::Outside,
            escaped: false,
            key: Vec::with_capacity(MAX_KEY_BYTES),
            key_overflow: false,
            pending: None,
            id_value_next: false,
            value: Vec::new(),
            id: None,
            has_method: false,
        }
    }

    /// Feed the next bytes of the message.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Skipping && !self.escaped {
                // The bulk of a big message is string content: jump to the next byte that matters.
                match bytes[i..].iter().position(|b| matches!(b, b'"' | b'\\')) {
                    Some(skip) => i += skip,
                    None => return,
                }
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// What was found, once the whole message was fed.
    pub fn finish(mut self) -> Found {
        if self.state == State::IdNumber {
            self.close_id();
        }
        let id = self
            .id
            .and_then(|raw| serde_json::from_slice::<serde_json::Value>(&raw).ok())
            .filter(|v| v.is_number() || v.is_string());
        Found {
            id,
            has_method: self.has_method,
        }
    }

    fn byte(&mut self, b: u8) {
        match self.state {
            State::Outside => self.outside(b),
            State::IdNumber => {
                if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    self.keep_value(b);
                } else {
                    self.close_id();
                    self.outside(b);
                }
            }
            State::Skipping | State::Key | State::IdString => self.in_string(b),
        }
    }

    fn outside(&mut self, b: u8) {
        if b.is_ascii_whitespace() {
            return;
        }
        if self.id_value_next {
            self.id_value_next = false;
            match b {
                b'"' => {
                    self.value.clear();
                    self.value.push(b);
                    self.state = State::IdString;
                    return;
                }
                b'-' | b'0'..=b'9' => {
                    self.value.clear();
                    self.value.push(b);
                    self.state = State::IdNumber;
                    return;
                }
                _ => {}
            }
        }
        let pending = self.pending.take();
        match b {
            b'"' if self.depth == 1 => {
                self.key.clear();
                self.key_overflow = false;
                self.state = State::Key;
            }
            b'"' => self.state = State::Skipping,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => match pending {
                Some(Key::Id) if self.id.is_none() => self.id_value_next = true,
                Some(Key::Method) => self.has_method = true,
                _ => {}
            },
            _ => {}
        }
    }

    fn in_string(&mut self, b: u8) {
        let closing = b == b'"' && !self.escaped;
        self.escaped = !self.escaped && b == b'\\';
        match self.state {
            State::Key if closing => {
                self.pending = Some(match (self.key_overflow, self.key.as_slice()) {
                    (false, b"id") => Key::Id,
                    (false, b"method") => Key::Method,
                    _ => Key::Other,
                });
                self.state = State::Outside;
            }
            State::Key => {
                if self.key.len() < MAX_KEY_BYTES {
                    self.key.push(b);
                } else {
                    self.key_overflow = true;
                }
            }
            State::IdString => {
                self.keep_value(b);
                if closing {
                    self.close_id();
                }
            }
            _ if closing => self.state = State::Outside,
            _ => {}
        }
    }

    fn keep_value(&mut self, b: u8) {
        if self.value.len() <= MAX_ID_BYTES {
            self.value.push(b);
        }
    }

    fn close_id(&mut self) {
        self.state = State::Outside;
        if self.value.len() <= MAX_ID_BYTES {
            self.id = Some(std::mem::take(&mut self.value));
        }
        self.value = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scan(text: &str) -> Found {
        let mut s = IdScan::new();
        s.feed(text.as_bytes());
        s.finish()
    }

    /// The same text fed one byte at a time (pieces split anywhere, as reads do).
    fn scan_bytewise(text: &str) -> Found {
        let mut s = IdScan::new();
        for b in text.as_bytes() {
            s.feed(std::slice::from_ref(b));
        }
        s.finish()
    }

    #[test]
    fn a_number_id_first_or_last() {
        let first = r#"{"jsonrpc":"2.0","id":42,"result":{"tools":[{"id":7}]}}"#;
        let last = r#"{"result":{"content":[{"type":"text","text":"\"id\":9"}]},"jsonrpc":"2.0","id": 42 }"#;
        for text in [first, last] {
            assert_eq!(scan(text).id, Some(json!(42)), "{text}");
            assert_eq!(scan_bytewise(text).id, Some(json!(42)), "{text}");
            assert!(!scan(text).has_method);
        }
    }

    #[test]
    fn a_string_id_with_escapes() {
        let text = r#"{"id":"req-\"7\"","result":{}}"#;
        assert_eq!(scan(text).id, Some(json!("req-\"7\"")));
        assert_eq!(scan_bytewise(text).id, Some(json!("req-\"7\"")));
    }

    #[test]
    fn no_id_when_only_nested_or_in_strings() {
        let nested = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"id":3,"data":"{\"id\":4}"}}"#;
        let found = scan(nested);
        assert_eq!(found.id, None);
        assert!(found.has_method);
        // "id" as a value, not a key.
        assert_eq!(scan(r#"{"name":"id","x":1}"#).id, None);
        assert_eq!(scan(r#"{"id":null,"error":{}}"#).id, None);
    }

    #[test]
    fn a_request_from_the_server_is_told_apart() {
        let found =
            scan(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#);
        assert_eq!(found.id, Some(json!(1)));
        assert!(found.has_method);
    }

    #[test]
    fn a_cut_message_still_gives_its_id() {
        // Only the start of a message is seen when it is cut off.
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"text":"xxxx"#).id,
            Some(json!(5))
        );
        assert_eq!(scan(r#"{"id":12"#).id, Some(json!(12)));
    }
}
