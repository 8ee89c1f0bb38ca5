//! JSON Schema comparison: which differences between two input schemas can
//! break a call, which only add, and which are prose.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use witness_model::manifest::diff::{Change, ChangeClass};

use super::words::description_change;
use super::{pointer_segment, show_json, string_set};

/// Schema keywords that are prose, not shape.
const PROSE_KEYWORDS: [&str; 4] = ["description", "title", "examples", "$comment"];
/// Keywords whose value is a map of names to subschemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a subschema (or, for `items`, possibly a list of them).
const SCHEMA_VALUES: [&str; 11] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// A schema without its prose, walking only schema positions: a property
/// *named* `description` stays, the keyword `description` goes.
pub(super) fn shape(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let key_str = key.as_str();
        if PROSE_KEYWORDS.contains(&key_str) {
            continue;
        }
        let shaped = match value {
            Value::Object(sub) if SCHEMA_MAPS.contains(&key_str) => Value::Object(
                sub.iter()
                    .map(|(name, s)| (name.clone(), shape(s)))
                    .collect(),
            ),
            Value::Array(items) if SCHEMA_LISTS.contains(&key_str) || key_str == "items" => {
                Value::Array(items.iter().map(shape).collect())
            }
            _ if SCHEMA_VALUES.contains(&key_str) => shape(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), shaped);
    }
    Value::Object(out)
}

/// Keywords [`compare_schema`] classifies itself; any other differing keyword
/// is an `input-schema-changed`.
const CLASSIFIED: [&str; 7] = [
    "type",
    "format",
    "enum",
    "description",
    "properties",
    "required",
    "items",
];

/// Compares two schema nodes. `parameter` is the dotted path of the
/// parameter the node describes (empty at the root).
pub(super) fn compare_schema(
    tool: &str,
    old: &Value,
    new: &Value,
    location: &str,
    parameter: &str,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let (Value::Object(a), Value::Object(b)) = (old, new) else {
        out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                location.to_owned(),
                "schema changed".into(),
            )
            .values(Some(old), Some(new))
            .parameter(parameter),
        );
        return;
    };
    let subject = if parameter.is_empty() {
        "input".to_owned()
    } else {
        format!("parameter {parameter}")
    };
    for keyword in ["type", "format"] {
        let (x, y) = (a.get(keyword), b.get(keyword));
        if x != y {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::TypeChanged,
                    format!("{location}/{keyword}"),
                    format!("{subject}: {keyword} {} -> {}", show_json(x), show_json(y)),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
    compare_enum(
        tool,
        a.get("enum"),
        b.get("enum"),
        location,
        parameter,
        &subject,
        out,
    );
    let (da, db) = (a.get("description"), b.get("description"));
    if da != db {
        let text = |v: Option<&Value>| {
            v.map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        };
        out.push(description_change(
            tool,
            parameter,
            format!("{location}/description"),
            text(da).as_deref(),
            text(db).as_deref(),
        ));
    }
    compare_properties(tool, a, b, location, parameter, out);
    match (a.get("items"), b.get("items")) {
        (Some(x), Some(y)) => compare_schema(
            tool,
            x,
            y,
            &format!("{location}/items"),
            &format!("{parameter}[]"),
            out,
        ),
        (x, y) if x != y => out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                format!("{location}/items"),
                format!("{subject}: items changed"),
            )
            .values(x, y)
            .parameter(parameter),
        ),
        _ => {}
    }
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if CLASSIFIED.contains(&key.as_str()) {
            continue;
        }
        let (x, y) = (a.get(key), b.get(key));
        if x != y {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::InputSchemaChanged,
                    format!("{location}/{}", pointer_segment(key)),
                    format!("{subject}: {key} {} -> {}", show_json(x), show_json(y)),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
}

fn compare_enum(
    tool: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    location: &str,
    parameter: &str,
    subject: &str,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let location = format!("{location}/enum");
    match (old.and_then(Value::as_array), new.and_then(Value::as_array)) {
        (Some(x), Some(y)) => {
            let gone: Vec<&Value> = x.iter().filter(|v| !y.contains(v)).collect();
            let came: Vec<&Value> = y.iter().filter(|v| !x.contains(v)).collect();
            let list = |vs: &[&Value]| {
                vs.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if !gone.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::EnumValueRemoved,
                        location.clone(),
                        format!("{subject}: value(s) removed: {}", list(&gone)),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
            if !came.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::EnumValueAdded,
                        location.clone(),
                        format!("{subject}: value(s) added: {}", list(&came)),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
            if gone.is_empty() && came.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::InputSchemaChanged,
                        location,
                        format!("{subject}: enum reordered"),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
        }
        _ => {
            let summary = match (old, new) {
                (None, _) => format!("{subject}: now restricted to an enum"),
                (_, None) => format!("{subject}: no longer restricted to an enum"),
                _ => format!("{subject}: enum changed"),
            };
            out.push(
                Change::new(tool, ChangeClass::InputSchemaChanged, location, summary)
                    .values(old, new)
                    .parameter(parameter),
            );
        }
    }
}

fn compare_properties(
    tool: &str,
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    location: &str,
    parameter: &str,
    out: &mut Vec<Change>,
) {
    let empty = Map::new();
    let pa = a
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let pb = b
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (ra, rb) = (string_set(a.get("required")), string_set(b.get("required")));
    let child = |name: &str| {
        if parameter.is_empty() {
            name.to_owned()
        } else {
            format!("{parameter}.{name}")
        }
    };
    let names: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for name in &names {
        let here = format!("{location}/properties/{}", pointer_segment(name));
        let param = child(name);
        match (pa.get(*name), pb.get(*name)) {
            (Some(x), None) => out.push(
                Change::new(
                    tool,
                    ChangeClass::ParameterRemoved,
                    here,
                    format!(
                        "parameter {param} removed{}",
                        if ra.contains(name.as_str()) {
                            " (it was required)"
                        } else {
                            ""
                        }
                    ),
                )
                .values(Some(x), None)
                .parameter(&param),
            ),
            (None, Some(y)) => {
                let (class, summary) = if rb.contains(name.as_str()) {
                    (
                        ChangeClass::RequiredParameterAdded,
                        format!("required parameter {param} added"),
                    )
                } else {
                    (
                        ChangeClass::OptionalParameterAdded,
                        format!("optional parameter {param} added"),
                    )
                };
                out.push(
                    Change::new(tool, class, here, summary)
                        .values(None, Some(y))
                        .parameter(&param),
                );
            }
            (Some(x), Some(y)) => {
                let (was, now) = (ra.contains(name.as_str()), rb.contains(name.as_str()));
                if was && !now {
                    out.push(
                        Change::new(
                            tool,
                            ChangeClass::RequiredParameterRelaxed,
                            format!("{location}/required"),
                            format!("parameter {param} is no longer required"),
                        )
                        .parameter(&param),
                    );
                } else if !was && now {
                    out.push(
                        Change::new(
                            tool,
                            ChangeClass::RequiredParameterAdded,
                            format!("{location}/required"),
                            format!("parameter {param} was optional and is now required"),
                        )
                        .parameter(&param),
                    );
                }
                compare_schema(tool, x, y, &here, &param, out);
            }
            (None, None) => {}
        }
    }
    // `required` naming something that is in neither `properties`.
    let stray_a: BTreeSet<&str> = ra
        .iter()
        .copied()
        .filter(|n| !names.iter().any(|m| m.as_str() == *n))
        .collect();
    let stray_b: BTreeSet<&str> = rb
        .iter()
        .copied()
        .filter(|n| !names.iter().any(|m| m.as_str() == *n))
        .collect();
    if stray_a != stray_b {
        out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                format!("{location}/required"),
                "required names outside properties changed".into(),
            )
            .values(a.get("required"), b.get("required"))
            .parameter(parameter),
        );
    }
    // A `properties` or `required` that is not the expected type, changed.
    for keyword in ["properties", "required"] {
        let (x, y) = (a.get(keyword), b.get(keyword));
        let malformed = |v: Option<&Value>| match (keyword, v) {
            (_, None) => false,
            ("properties", Some(v)) => !v.is_object(),
            (_, Some(v)) => !v.is_array(),
        };
        if x != y && (malformed(x) || malformed(y)) {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::InputSchemaChanged,
                    format!("{location}/{keyword}"),
                    format!("{keyword} changed (malformed on one side)"),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
}
