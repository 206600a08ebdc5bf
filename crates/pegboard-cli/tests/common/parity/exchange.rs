//! What a client sees of one call: [`Exchange`].

use serde_json::Value;

/// What the client saw of one call, on whichever front.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// Every message on the call's stream before its answer, in order: over HTTP the events of
    /// the call's own response; over stdio everything the gateway wrote between the request
    /// and its answer (the suites make one call at a time).
    pub before: Vec<Value>,
    /// The answer (a JSON-RPC response with the call's id), if one came.
    pub answer: Option<Value>,
    /// Over HTTP: the response's status.
    pub status: Option<u16>,
    /// Over HTTP: the response's content type, without parameters (`application/json` or
    /// `text/event-stream`).
    pub kind: Option<String>,
}

impl Exchange {
    /// The params of the progress notifications before the answer, in order.
    pub fn progress(&self) -> Vec<&Value> {
        self.before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| &m["params"])
            .collect()
    }

    /// The server's requests before the answer (messages with a method and an id), in order.
    pub fn requests(&self) -> Vec<&Value> {
        self.before
            .iter()
            .filter(|m| m.get("method").is_some() && m.get("id").is_some())
            .collect()
    }

    /// The answer's `result` (`Null` if it has none).
    pub fn result(&self) -> &Value {
        self.answer
            .as_ref()
            .and_then(|a| a.get("result"))
            .unwrap_or(&Value::Null)
    }

    /// The answer's `error` (`Null` if it has none).
    pub fn error(&self) -> &Value {
        self.answer
            .as_ref()
            .and_then(|a| a.get("error"))
            .unwrap_or(&Value::Null)
    }

    /// The text of the result's first content block ("" if there is none).
    pub fn text(&self) -> &str {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
    }

    /// The answer as the client reads it: its `result` and `error`, numbers as numbers (the
    /// lane passes a server's `1` as written; rmcp's way re-encodes it `1.0`).
    pub fn outcome(&self) -> Value {
        serde_json::json!({
            "result": super::super::numbers_as_f64(self.result()),
            "error": super::super::numbers_as_f64(self.error()),
        })
    }

    /// [`Exchange::outcome`] without the result's `resultType` (for the comparisons that are
    /// not about it; `checks::legacy_results` is).
    pub fn outcome_but_result_type(&self) -> Value {
        let mut outcome = self.outcome();
        if let Some(result) = outcome["result"].as_object_mut() {
            result.remove("resultType");
        }
        outcome
    }
}
