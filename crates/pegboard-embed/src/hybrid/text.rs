//! What a tool is embedded as: its text (name words, description, parameters, its server's
//! description, per [`Expansion`]), the vector, and the hash that keeps an unchanged tool's vector.

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::fast::FixedState;
use pegboard::search::ToolDoc;
use serde_json::Value;

use super::Expansion;
use crate::StaticModel;

/// Bytes of a tool's text embedded at most (the tokenizer reads at most [`crate::MAX_TOKENS`]).
const MAX_TEXT_BYTES: usize = 8192;
/// How deep parameter schemas are read for names and descriptions.
const MAX_SCHEMA_DEPTH: usize = 4;

/// The text a tool is embedded as: its name split into words, title, description, then, per
/// `expansion`, its namespace, its server's description (`server`), its parameters' names and
/// descriptions. Public so that a tool's text can be inspected or fed to another model (the
/// `hybrid_dump` example does, to compare with the teacher transformer).
pub fn tool_text(doc: &ToolDoc, server: Option<&str>, expansion: &Expansion) -> String {
    let mut text = name_words(&doc.original);
    let mut add = |part: &str| {
        if !part.trim().is_empty() && text.len() < MAX_TEXT_BYTES {
            text.push_str(". ");
            text.push_str(part);
        }
    };
    if let Some(title) = doc.tool.title() {
        add(title);
    }
    if let Some(description) = doc.tool.description() {
        add(description);
    }
    if expansion.namespace
        && let Some(ns) = &doc.namespace
    {
        add(&name_words(ns));
    }
    if expansion.server
        && let Some(server) = server
    {
        add(server);
    }
    if expansion.parameters || expansion.parameter_descriptions {
        let mut names = Vec::new();
        let mut descriptions = Vec::new();
        walk_schema(&doc.tool.input_schema, 0, &mut names, &mut descriptions);
        if expansion.parameters {
            add(&names.join(", "));
        }
        if expansion.parameter_descriptions {
            add(&descriptions.join(". "));
        }
    }
    cut(&text, MAX_TEXT_BYTES).to_string()
}

/// Parameter names (split into words) and descriptions, nested properties included.
fn walk_schema(
    schema: &serde_json::Map<String, Value>,
    depth: usize,
    names: &mut Vec<String>,
    descriptions: &mut Vec<String>,
) {
    if depth >= MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        names.push(name_words(name));
        let Value::Object(property) = property else {
            continue;
        };
        if let Some(Value::String(d)) = property.get("description") {
            descriptions.push(d.clone());
        }
        walk_schema(property, depth + 1, names, descriptions);
        if let Some(Value::Object(items)) = property.get("items") {
            walk_schema(items, depth + 1, names, descriptions);
        }
    }
}

/// A name as words: `getWeather_forecast.v2` becomes `get weather forecast v2`.
pub(super) fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if c.is_alphanumeric() {
            if let Some(p) = prev
                && ((p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() != c.is_alphabetic()))
                && !out.ends_with(' ')
            {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
        prev = Some(c);
    }
    out.trim_end().to_string()
}

/// A name reduced to its lowercase letters and digits: what near-exact names share.
pub(super) fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

pub(super) fn embed_tool(
    model: &StaticModel,
    text: &str,
    name: &str,
    name_weight: f32,
) -> Vec<f32> {
    let mut v = model.embed(text);
    if name_weight > 0.0 && name_weight.is_finite() {
        let n = model.embed(name);
        v.iter_mut()
            .zip(&n)
            .for_each(|(a, b)| *a += name_weight * b);
        crate::model::normalize(&mut v);
    }
    v
}

pub(super) fn text_hash(text: &str, name: &str, name_weight: f32) -> u64 {
    // Fixed seed: the same text hashes the same across rebuilds (a random seed would too,
    // within one process, but a fixed one keeps the cache's behaviour reproducible).
    let mut h = FixedState::with_seed(0x7065_6762_6f61_7264).build_hasher();
    text.hash(&mut h);
    name.hash(&mut h);
    name_weight.to_bits().hash(&mut h);
    h.finish()
}

/// `text` cut to at most `max` bytes at a character boundary.
pub(super) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
