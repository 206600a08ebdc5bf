//! TypeScript declarations of tools, for `describe_tools`: a function per tool returning a
//! `Promise` of its result, its argument type from `inputSchema`, its result type from
//! `outputSchema` where there is one, the description as a doc comment. A pure function of each
//! tool's JSON definition (`name`, `description`, `inputSchema`, `outputSchema`) and where the
//! tool sits in `tools` ([`crate::names`]).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::names::{ToolEntry, js_identifier, tool_paths};

/// How deep a schema is followed; deeper parts are `unknown`.
const MAX_DEPTH: usize = 8;

/// The header every declaration text starts with: how names map and what calls return.
pub const HEADER: &str = "\
// Call a tool as `await tools.<namespace>.<name>(args)` or `await call(\"<board name>\", args)`.
// In `tools.*` paths every character outside [A-Za-z0-9_$] is written `_`, and a name starting
// with a digit gets a `_` in front (`resolve-library-id` -> `resolve_library_id`).
// A call returns the tool's structuredContent when it gives one, else the text of its text
// blocks (a string); it throws a ToolError { message, tool } when the tool fails.
declare class ToolError extends Error { tool: string }
declare function call(name: string, args?: object): Promise<unknown>;
";

/// Declarations of `tools` (each its entry and its JSON definition), grouped by namespace in the
/// order given.
pub fn render(tools: &[(ToolEntry, Value)]) -> String {
    let entries: Vec<ToolEntry> = tools.iter().map(|(entry, _)| entry.clone()).collect();
    let paths = tool_paths(&entries);
    let mut out = String::from(HEADER);
    out.push_str("declare const tools: {\n");
    let mut groups: Vec<(Option<String>, Vec<String>)> = Vec::new();
    let mut unreachable = Vec::new();
    for ((entry, path), (_, definition)) in paths.iter().zip(tools) {
        let Some(path) = path else {
            unreachable.push(entry.name.clone());
            continue;
        };
        let text = function(&path.key, &entry.name, definition, 2);
        match groups.iter_mut().find(|(g, _)| *g == path.group) {
            Some((_, items)) => items.push(text),
            None => groups.push((path.group.clone(), vec![text])),
        }
    }
    for (group, items) in &groups {
        match group {
            None => items.iter().for_each(|item| out.push_str(item)),
            Some(group) => {
                let _ = writeln!(out, "  {group}: {{");
                for item in items {
                    for line in item.lines() {
                        let _ = writeln!(out, "  {line}");
                    }
                }
                out.push_str("  };\n");
            }
        }
    }
    out.push_str("};\n");
    for name in unreachable {
        let _ = writeln!(
            out,
            "// `{name}`'s path collides with another tool's: reach it as call({})",
            Value::String(name.clone())
        );
    }
    out
}

/// One tool's function, indented by `indent` spaces.
fn function(key: &str, board_name: &str, definition: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    let description = definition.get("description").and_then(Value::as_str);
    let _ = writeln!(out, "{pad}/**");
    if let Some(description) = description {
        for line in description.lines() {
            let _ = writeln!(out, "{pad} * {}", comment(line));
        }
    }
    let _ = writeln!(out, "{pad} * @tool {}", comment(board_name));
    let _ = writeln!(out, "{pad} */");
    let input = definition
        .get("inputSchema")
        .map_or_else(|| "{}".to_string(), |s| ts_type(s, 1, indent));
    let output = match definition.get("outputSchema") {
        Some(schema) => ts_type(schema, 1, indent),
        None => "unknown".to_string(),
    };
    let optional = if has_required(definition.get("inputSchema")) {
        ""
    } else {
        "?"
    };
    let _ = writeln!(
        out,
        "{pad}{key}(args{optional}: {input}): Promise<{output}>;"
    );
    out
}

fn has_required(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty())
}

/// Text safe inside a `/** */` comment.
fn comment(text: &str) -> String {
    text.replace("*/", "*\\/")
}

/// The TypeScript type of a JSON Schema (a subset: types, enums, const, objects, arrays, unions;
/// anything else is `unknown`).
fn ts_type(schema: &Value, depth: usize, indent: usize) -> String {
    if depth > MAX_DEPTH {
        return "unknown".to_string();
    }
    let Some(schema) = schema.as_object() else {
        // `true` accepts anything, `false` nothing.
        return if schema == &Value::Bool(false) {
            "never".to_string()
        } else {
            "unknown".to_string()
        };
    };
    if let Some(value) = schema.get("const") {
        return literal(value);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
    {
        return values.iter().map(literal).collect::<Vec<_>>().join(" | ");
    }
    for (key, join) in [("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array)
            && !parts.is_empty()
        {
            let types: Vec<String> = parts
                .iter()
                .map(|p| ts_type(p, depth + 1, indent))
                .collect();
            return format!("({})", types.join(join));
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => of_type(t, schema, depth, indent),
        Some(Value::Array(types)) => {
            let types: Vec<String> = types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| of_type(t, schema, depth, indent))
                .collect();
            if types.is_empty() {
                "unknown".to_string()
            } else {
                types.join(" | ")
            }
        }
        _ if schema.contains_key("properties") => object(schema, depth, indent),
        _ => "unknown".to_string(),
    }
}

fn of_type(name: &str, schema: &Map<String, Value>, depth: usize, indent: usize) -> String {
    match name {
        "string" => "string".to_string(),
        "number" | "integer" => "number".to_string(),
        "boolean" => "boolean".to_string(),
        "null" => "null".to_string(),
        "array" => match schema.get("items") {
            Some(items) => format!("Array<{}>", ts_type(items, depth + 1, indent)),
            None => "unknown[]".to_string(),
        },
        "object" => object(schema, depth, indent),
        _ => "unknown".to_string(),
    }
}

fn object(schema: &Map<String, Value>, depth: usize, indent: usize) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let extra = match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => None,
        Some(other @ Value::Object(_)) => Some(ts_type(other, depth + 1, indent)),
        _ if properties.is_none_or(Map::is_empty) => Some("unknown".to_string()),
        _ => None,
    };
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return match extra {
            Some(t) => format!("Record<string, {t}>"),
            None => "{}".to_string(),
        };
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let pad = " ".repeat(indent + 2 * depth);
    let close = " ".repeat(indent + 2 * (depth - 1));
    let mut out = String::from("{\n");
    for (name, property) in properties {
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            let one_line = description.lines().collect::<Vec<_>>().join(" ");
            let _ = writeln!(out, "{pad}/** {} */", comment(&one_line));
        }
        let key = if js_identifier(name) == *name {
            name.clone()
        } else {
            Value::String(name.clone()).to_string()
        };
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = writeln!(
            out,
            "{pad}{key}{optional}: {};",
            ts_type(property, depth + 1, indent)
        );
    }
    if let Some(extra) = extra {
        let _ = writeln!(out, "{pad}[key: string]: {extra};");
    }
    out.push_str(&close);
    out.push('}');
    out
}

/// A JSON value as a TypeScript literal type.
fn literal(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        _ => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(name: &str, namespace: &str, original: &str) -> ToolEntry {
        ToolEntry {
            name: name.into(),
            namespace: Some(namespace.into()),
            original: original.into(),
        }
    }

    #[test]
    fn a_tool_becomes_a_typed_function_in_its_namespace() {
        let tool = json!({
            "name": "units-convert",
            "description": "Convert a value.\nBetween units */ safely.",
            "inputSchema": {"type": "object", "properties": {
                "value": {"type": "number", "description": "The value"},
                "from": {"type": "string", "enum": ["m", "ft"]},
                "to-unit": {"type": ["string", "null"]}
            }, "required": ["value", "from"]},
            "outputSchema": {"type": "object", "properties": {"value": {"type": "number"}}, "required": ["value"]}
        });
        let text = render(&[(entry("units-convert", "units", "convert"), tool)]);
        assert!(text.starts_with(HEADER));
        assert!(text.contains("  units: {\n"), "{text}");
        assert!(text.contains("   * Convert a value.\n"), "{text}");
        assert!(text.contains("Between units *\\/ safely."), "{text}");
        assert!(text.contains("   * @tool units-convert\n"), "{text}");
        assert!(text.contains("convert(args: {"), "{text}");
        assert!(text.contains("/** The value */"), "{text}");
        assert!(text.contains("value: number;"), "{text}");
        assert!(text.contains("from: \"m\" | \"ft\";"), "{text}");
        assert!(text.contains("\"to-unit\"?: string | null;"), "{text}");
        assert!(text.contains("}): Promise<{"), "{text}");
    }

    #[test]
    fn no_output_schema_is_unknown_and_no_required_argument_is_optional() {
        let tool = json!({"name": "docs-list", "inputSchema": {"type": "object"}});
        let text = render(&[(entry("docs-list", "docs", "list"), tool)]);
        assert!(
            text.contains("list(args?: Record<string, unknown>): Promise<unknown>;"),
            "{text}"
        );
    }

    #[test]
    fn odd_names_are_mapped_and_collisions_named() {
        let a = json!({"name": "x", "inputSchema": {"type": "object"}});
        let text = render(&[
            (entry("my-ns-get-item", "my-ns", "get-item"), a.clone()),
            (entry("my-ns-get_item", "my-ns", "get_item"), a),
        ]);
        assert!(text.contains("  my_ns: {\n"), "{text}");
        assert!(text.contains("get_item(args?"), "{text}");
        assert!(
            text.contains("reach it as call(\"my-ns-get_item\")"),
            "{text}"
        );
    }

    #[test]
    fn deep_or_odd_schemas_stay_bounded() {
        let mut schema = json!({"type": "string"});
        for _ in 0..50 {
            schema = json!({"type": "array", "items": schema});
        }
        let tool = json!({"inputSchema": {"type": "object", "properties": {"a": schema, "b": true, "c": {"anyOf": [{"type": "string"}, {"const": 3}]}}}});
        let text = render(&[(entry("n-t", "n", "t"), tool)]);
        assert!(text.contains("unknown"), "{text}");
        assert!(text.contains("b?: unknown;"), "{text}");
        assert!(text.contains("c?: (string | 3);"), "{text}");
    }
}
