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
    for combinator in ["oneOf", "anyOf", "allOf"] {
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
            Value::Array((0..min.clamp(1, 4)).map(|_| item.clone()).collect())
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
        Some("hostname") => Some("example.invalid"),
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
}
