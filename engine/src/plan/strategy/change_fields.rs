//! **An update says what it changes.** A tool named to change a thing in
//! place (`update_project`, `edit_task`, `set_status`, `move_task`) whose
//! required parameters only say *which* thing (`project_id`) changes
//! nothing when called with them alone: servers write "only provided
//! fields are changed" and answer `{"status": "ok"}`. So such a call is
//! also given one optional field that carries a new value — the thing's
//! name, title, text or notes before any other field — and a tool named to
//! move or assign is also given the optional ids that say where to, when
//! the store or an answer offers a real one.
//!
//! Answers the failure where `update_project {"project_id": 3}` passed a
//! read-only lie and a non-destructive lie: the call "did its job" and the
//! store never moved, because it was asked to change nothing.
//!
//! Example: `update_task {"task_id": integer, "name"?: string, "notes"?:
//! string, "due_date"?: string}` is planned `update_task {"task_id": <a
//! real id>, "name": "witness-update_task"}`.

use serde_json::{Map, Value};

use crate::plan::cues::{ToolCues, flat};
use crate::plan::strategy::scope::chooses_scope;
use crate::plan::{ArgSpec, synth};

/// Optional fields that carry a thing's own content, in the order one is
/// chosen (flattened names).
const CONTENT_FIELDS: [&str; 20] = [
    "name",
    "title",
    "text",
    "content",
    "body",
    "notes",
    "note",
    "description",
    "summary",
    "comment",
    "message",
    "label",
    "statusnote",
    "details",
    "plan",
    "value",
    "newname",
    "newtitle",
    "newcontent",
    "newtext",
];

/// Words of a name that say the tool changes a thing in place (rather than
/// removing it, which needs nothing more than the thing).
const IN_PLACE_WORDS: [&str; 10] = [
    "update", "edit", "modify", "set", "patch", "change", "rename", "move", "assign", "upsert",
];

/// Words of a name that say the tool puts a thing somewhere else: its
/// optional ids say where.
const PLACE_WORDS: [&str; 3] = ["move", "assign", "reassign"];

/// The optional parameters to add to a change tool's step, each with how its
/// value is had; empty when the tool is no in-place change, or a required
/// parameter already carries a value.
pub fn change_fields(
    cues: &ToolCues,
    schema: Option<&Value>,
    planned: &[(String, ArgSpec)],
) -> Vec<(String, ArgSpec)> {
    let words = crate::plan::cues::words(&cues.tool);
    let in_place = words.iter().any(|w| IN_PLACE_WORDS.contains(&w.as_str()));
    let Some(schema) = schema else {
        return Vec::new();
    };
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    if !in_place || planned.iter().any(|(name, _)| carries_value(cues, name)) {
        return Vec::new();
    }
    let optional = |name: &&String| !planned.iter().any(|(n, _)| n == *name);
    let mut out = Vec::new();
    let content = CONTENT_FIELDS.iter().find_map(|wanted| {
        properties
            .iter()
            .filter(|(name, _)| optional(name))
            .find(|(name, sub)| flat(name) == *wanted && plain_value(sub))
    });
    if let Some((name, sub)) = content
        && let Some(value) = value_of(schema, name, sub, &cues.tool)
    {
        out.push((name.clone(), ArgSpec::Synthesized(value)));
    }
    if words.iter().any(|w| PLACE_WORDS.contains(&w.as_str())) {
        for (name, _) in properties
            .iter()
            .filter(|(name, _)| optional(name) && is_identifier(cues, name))
        {
            out.push((
                name.clone(),
                ArgSpec::IfReal(Value::String("witness".into())),
            ));
        }
    }
    out
}

/// Whether parameter `name` says which thing a call acts on (an id, a key,
/// a path, where it works) rather than what the thing becomes.
fn is_identifier(cues: &ToolCues, name: &str) -> bool {
    let flat = flat(name);
    cues.path_kind(name).is_some()
        || chooses_scope(name)
        || ["id", "ids", "key", "uuid", "uri", "ref"]
            .iter()
            .any(|suffix| flat.ends_with(suffix))
}

/// Whether a required parameter carries what a thing becomes.
fn carries_value(cues: &ToolCues, name: &str) -> bool {
    !is_identifier(cues, name)
}

/// Whether a property takes a plain string with no fixed set or format: a
/// value of the audit's own is valid there.
fn plain_value(sub: &Value) -> bool {
    let string = |v: &Value| {
        let typed = match v.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
            _ => false,
        };
        typed && v.get("enum").is_none() && v.get("format").is_none() && v.get("pattern").is_none()
    };
    string(sub)
        || ["anyOf", "oneOf"].iter().any(|k| {
            sub.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(string))
        })
}

/// The value the synthesizer gives property `name` when it is required.
fn value_of(schema: &Value, name: &str, sub: &Value, tool: &str) -> Option<Value> {
    // The string branch alone, without the `null` default an optional
    // field declares: the default is what "change nothing" sends.
    let branch = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| sub.get(*k).and_then(Value::as_array))
        .flatten()
        .find(|alt| plain_value(alt))
        .unwrap_or(sub);
    let mut branch = branch.clone();
    if let Some(object) = branch.as_object_mut() {
        object.remove("default");
        if let Some(description) = sub.get("description") {
            object
                .entry("description")
                .or_insert_with(|| description.clone());
        }
    }
    let mut properties = Map::new();
    properties.insert(name.to_owned(), branch);
    let mut alone = Map::new();
    alone.insert("type".into(), Value::String("object".into()));
    alone.insert("properties".into(), Value::Object(properties));
    alone.insert(
        "required".into(),
        Value::Array(vec![Value::String(name.into())]),
    );
    // Definitions stay reachable for a property that refers to them.
    for key in ["$defs", "definitions"] {
        if let Some(defs) = schema.get(key) {
            alone.insert(key.into(), defs.clone());
        }
    }
    synth::arguments_for(Some(&Value::Object(alone)), tool)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| match value {
            // The plain invention is the tool's own, so the change is
            // visible as the audit's in the store.
            Value::String(s) if s == "witness" => Value::String(synth::fresh_name(tool)),
            other => other,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::ToolEntry;

    use super::*;

    fn cues(name: &str, schema: &Value) -> ToolCues {
        let tool: ToolEntry = serde_json::from_value(json!({
            "name": name, "description": "", "hints": {}, "class": "unknown", "has_output_schema": false,
            "input_schema": schema,
        }))
        .expect("a tool entry");
        ToolCues::of(&tool)
    }

    fn planned(names: &[&str]) -> Vec<(String, ArgSpec)> {
        names
            .iter()
            .map(|n| ((*n).to_owned(), ArgSpec::Auto(json!(1))))
            .collect()
    }

    #[test]
    fn an_update_by_id_alone_is_given_a_field_to_change() {
        let schema = json!({"type": "object", "required": ["task_id"], "properties": {
            "task_id": {"type": "integer"},
            "due_date": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "notes": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "phase": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}
        }});
        let added = change_fields(
            &cues("update_task", &schema),
            Some(&schema),
            &planned(&["task_id"]),
        );
        assert_eq!(
            added,
            vec![(
                "name".to_owned(),
                ArgSpec::Synthesized(json!("witness-update_task"))
            )]
        );
    }

    #[test]
    fn a_move_is_also_given_where_to_and_nothing_is_added_where_a_value_is_required() {
        let schema = json!({"type": "object", "required": ["task_id"], "properties": {
            "task_id": {"type": "integer"},
            "project_id": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "section_id": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        }});
        let added = change_fields(
            &cues("move_task", &schema),
            Some(&schema),
            &planned(&["task_id"]),
        );
        let names: Vec<&str> = added.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["project_id", "section_id"]);
        assert!(added.iter().all(|(_, s)| matches!(s, ArgSpec::IfReal(_))));

        let schema = json!({"type": "object", "required": ["id", "status"], "properties": {
            "id": {"type": "string"}, "status": {"type": "string"}, "title": {"type": "string"}
        }});
        let c = cues("update_item", &schema);
        assert!(change_fields(&c, Some(&schema), &planned(&["id", "status"])).is_empty());
        // A delete or a reader is never given more than it asked for.
        let schema = json!({"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string"}, "title": {"type": "string"}
        }});
        for tool in ["delete_item", "get_item"] {
            assert!(
                change_fields(&cues(tool, &schema), Some(&schema), &planned(&["id"])).is_empty()
            );
        }
    }
}
