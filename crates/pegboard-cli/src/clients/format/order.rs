//! The order pegboard writes an entry's keys in, whatever order the map holds them: what starts
//! the server first, then how to reach it, then the rest by name.

use serde_json::{Map, Value};

const FIRST: &[&str] = &[
    "name",
    "source",
    "type",
    "command",
    "cmd",
    "args",
    "env",
    "envs",
    "environment",
    "cwd",
    "url",
    "httpUrl",
    "serverUrl",
    "uri",
    "headers",
];

/// `map`'s pairs, the well-known keys first in [`FIRST`]'s order, the others by name.
pub fn ordered(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let rank = |k: &str| FIRST.iter().position(|f| *f == k).unwrap_or(FIRST.len());
    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
    pairs.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    pairs
}
