//! Argument synthesis from a tool's input schema.
//!
//! Synthesized values are the weakest evidence there is: a call that fails on
//! them proves nothing about the server (its checks become `untestable`). They
//! are deterministic, so reruns send the same bytes, and plain, so a reader
//! recognises them (`"witness"`, `1`, `true`).

use serde_json::{Map, Value, json};

/// Depth beyond which nested schemas are not followed (cyclic `$ref`s end here).
const MAX_DEPTH: usize = 8;

/// Values for the required properties of an object schema, in property order.
pub fn arguments(schema: Option<&Value>) -> Vec<(String, Value)> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    let Value::Object(object) = value_for(schema, schema, "", 0) else {
        return Vec::new();
    };
    object.into_iter().collect()
}

/// The required properties whose value the schema itself fixes (`const`, an
/// `enum`, a `default`): choosing them invents nothing.
pub fn pinned(schema: Option<&Value>) -> Vec<String> {
    let Some(root) = schema else {
        return Vec::new();
    };
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, sub)| {
            let sub = match sub.get("$ref").and_then(Value::as_str) {
                Some(r) => resolve_ref(root, r).unwrap_or(sub),
                None => sub,
            };
            ["const", "enum", "default"]
                .iter()
                .any(|k| sub.get(*k).is_some())
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// A value satisfying `schema` as far as a plain generator can.
pub fn value_for(schema: &Value, root: &Value, name: &str, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(object) = schema.as_object() else {
        return Value::String("witness".into());
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return match resolve_ref(root, reference) {
            Some(target) => value_for(target, root, name, depth + 1),
            None => Value::Null,
        };
    }
    if let Some(constant) = object.get("const") {
        return constant.clone();
    }
    if let Some(first) = object
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(default) = object.get("default") {
        return default.clone();
    }
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        // Every part must hold at once: merge them into one schema.
        let mut merged = object.clone();
        merged.remove("allOf");
        for part in parts {
            let part = match part.get("$ref").and_then(Value::as_str) {
                Some(r) => resolve_ref(root, r).unwrap_or(part),
                None => part,
            };
            let Some(part) = part.as_object() else {
                continue;
            };
            for (key, value) in part {
                match (key.as_str(), merged.get_mut(key)) {
                    ("properties", Some(Value::Object(mine))) => {
                        if let Some(theirs) = value.as_object() {
                            for (k, v) in theirs {
                                mine.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                    }
                    ("required", Some(Value::Array(mine))) => {
                        if let Some(theirs) = value.as_array() {
                            mine.extend(theirs.iter().cloned());
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        return value_for(&Value::Object(merged), root, name, depth + 1);
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(first) = object
            .get(combinator)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return value_for(first, root, name, depth + 1);
        }
    }
    let ty = match object.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // A list of types: the first one that is not null.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if object.contains_key("properties") => "object",
        _ => "string",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = object.get("properties").and_then(Value::as_object) {
                for (key, sub) in properties {
                    if required.contains(&key.as_str()) {
                        out.insert(key.clone(), value_for(sub, root, key, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
        "array" => {
            let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            let item = object
                .get("items")
                .map(|items| value_for(items, root, name, depth + 1))
                .unwrap_or(Value::String("witness".into()));
            let unique = object.get("uniqueItems").and_then(Value::as_bool) == Some(true);
            Value::Array(
                (0..min.clamp(1, 4))
                    .map(|i| {
                        if unique {
                            varied(&item, i)
                        } else {
                            item.clone()
                        }
                    })
                    .collect(),
            )
        }
        "integer" => json!(number_in_range(object).round() as i64),
        "number" => json!(number_in_range(object)),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => Value::String(string_for(object, name)),
    }
}

fn number_in_range(object: &Map<String, Value>) -> f64 {
    let min = object.get("minimum").and_then(Value::as_f64).or_else(|| {
        object
            .get("exclusiveMinimum")
            .and_then(Value::as_f64)
            .map(|m| m + 1.0)
    });
    let max = object.get("maximum").and_then(Value::as_f64);
    match (min, max) {
        (Some(min), _) => min.max(1.0).min(max.unwrap_or(f64::MAX)),
        (None, Some(max)) => max.min(1.0),
        (None, None) => 1.0,
    }
}

fn string_for(object: &Map<String, Value>, name: &str) -> String {
    let by_format = match object.get("format").and_then(Value::as_str) {
        Some("uri" | "url" | "iri") => Some("https://example.invalid/witness"),
        Some("email") => Some("witness@example.invalid"),
        Some("date-time") => Some("2026-01-01T00:00:00Z"),
        Some("date") => Some("2026-01-01"),
        Some("time") => Some("00:00:00Z"),
        Some("uuid") => Some("00000000-0000-4000-8000-000000000000"),
        Some("ipv4") => Some("192.0.2.1"),
        Some("ipv6") => Some("2001:db8::1"),
        Some("hostname" | "idn-hostname") => Some("example.invalid"),
        Some("idn-email") => Some("witness@example.invalid"),
        Some("uri-reference" | "iri-reference" | "json-pointer") => Some("/witness"),
        Some("uri-template") => Some("https://example.invalid/{witness}"),
        Some("relative-json-pointer") => Some("0"),
        Some("duration") => Some("PT1S"),
        Some("byte") => Some("d2l0bmVzcw=="),
        Some("regex") => Some("witness"),
        _ => None,
    };
    if let Some(value) = by_format {
        return value.into();
    }
    let lowered = name.to_ascii_lowercase();
    let mut value = if lowered.contains("url") || lowered.contains("uri") {
        "https://example.invalid/witness".to_string()
    } else {
        "witness".to_string()
    };
    let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while value.len() < min {
        value.push('x');
    }
    if let Some(max) = object.get("maxLength").and_then(Value::as_u64) {
        value.truncate(max as usize);
    }
    value
}

/// The `i`-th of several items that must differ (`uniqueItems`).
fn varied(item: &Value, i: u64) -> Value {
    if i == 0 {
        return item.clone();
    }
    match item {
        Value::String(s) => Value::String(format!("{s}-{}", i + 1)),
        Value::Number(n) => match n.as_i64() {
            Some(v) => json!(v + i as i64),
            None => json!(n.as_f64().unwrap_or(0.0) + i as f64),
        },
        Value::Bool(b) => Value::Bool(if i == 1 { !b } else { *b }),
        other => other.clone(),
    }
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_only_in_declared_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri"},
                "note": {"type": "string"},
                "ttl": {"type": "integer", "minimum": 5},
                "optional": {"type": "string"},
                "kind": {"enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "nested": {"$ref": "#/$defs/n"}
            },
            "required": ["note", "url", "ttl", "kind", "tags", "nested"],
            "$defs": {"n": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}
        });
        let args = arguments(Some(&schema));
        let names: Vec<&str> = args.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["url", "note", "ttl", "kind", "tags", "nested"]);
        assert_eq!(args[0].1, json!("https://example.invalid/witness"));
        assert_eq!(args[2].1, json!(5));
        assert_eq!(args[3].1, json!("a"));
        assert_eq!(args[4].1, json!(["witness"]));
        assert_eq!(args[5].1, json!({"on": true}));
    }

    #[test]
    fn cyclic_refs_terminate() {
        let schema =
            json!({"type": "object", "properties": {"x": {"$ref": "#"}}, "required": ["x"]});
        let args = arguments(Some(&schema));
        assert_eq!(args.len(), 1);
    }

    #[test]
    fn every_type_format_and_combinator_gets_a_plain_valid_value() {
        let schema = json!({
            "type": "object",
            "definitions": {"id": {"type": "string", "format": "uuid"}},
            "properties": {
                "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
                "i": {"type": ["null", "integer"], "maximum": 0},
                "b": {"type": "boolean"},
                "z": {"type": "null"},
                "v6": {"type": "string", "format": "ipv6"},
                "when": {"type": "string", "format": "date-time"},
                "short": {"type": "string", "minLength": 12, "maxLength": 12},
                "ids": {"type": "array", "items": {"$ref": "#/definitions/id"}},
                "set": {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": true},
                "mode": {"const": "fast"},
                "sort": {"type": "string", "default": "name"},
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
                ]},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "deep": {"type": "object", "properties": {"inner": {"type": "object",
                    "properties": {"leaf": {"enum": [3, 4]}}, "required": ["leaf"]}}, "required": ["inner"]}
            },
            "required": ["n", "i", "b", "z", "v6", "when", "short", "ids", "set", "mode", "sort", "both", "either", "deep"]
        });
        let args: Map<String, Value> = arguments(Some(&schema)).into_iter().collect();
        assert_eq!(args["n"], json!(0.5));
        assert_eq!(args["i"], json!(0));
        assert_eq!(args["b"], json!(true));
        assert_eq!(args["z"], Value::Null);
        assert_eq!(args["v6"], json!("2001:db8::1"));
        assert_eq!(args["when"], json!("2026-01-01T00:00:00Z"));
        assert_eq!(args["short"], json!("witnessxxxxx"));
        assert_eq!(args["ids"], json!(["00000000-0000-4000-8000-000000000000"]));
        assert_eq!(args["set"], json!([1, 2, 3]));
        assert_eq!(args["mode"], json!("fast"));
        assert_eq!(args["sort"], json!("name"));
        assert_eq!(args["both"], json!({"a": "witness", "b": 1}));
        assert_eq!(args["either"], json!(1));
        assert_eq!(args["deep"], json!({"inner": {"leaf": 3}}));
        let pinned = pinned(Some(&schema));
        assert_eq!(pinned, ["mode", "sort"]);
    }
}
