//! **Every form of a multi-form tool.** A parameter named for the operation
//! a tool performs (`operation`, `action`, `command`, `mode`, `op`,
//! `method`) whose schema lists its values (`enum`, or `const`s of a
//! `oneOf`/`anyOf`) gets each value in turn, each its own planned call:
//! the forms that make things first, then those that read, then those that
//! change, and those that remove last, so that a delete meets something to
//! delete. Each form is given the fields its operation needs: an optional
//! property whose description names the operation (`Required for
//! 'insert'`, `the data to add (for create)`), and, for a form that makes
//! something, a fresh name.
//!
//! Answers the failure where an `operation` enum got only its first value
//! (`read`) and the tool's destructive form never ran, so its claim to
//! destroy nothing passed on a read.
//!
//! Example: `manage_note {"operation": "create" | "read" | "delete",
//! "path": string, "content"?: string ("for create")}` is called three
//! times: `{"operation": "create", "path": "<root>/witness-manage_note.txt",
//! "content": "witness"}`, `{"operation": "read", "path": <a store file>}`,
//! `{"operation": "delete", "path": <a store file>}`; the last is a
//! `change` form, the first a `create`.

use serde_json::Value;
use witness_model::audit::CallForm;

use crate::plan::cues::flat;
use crate::plan::{ArgSpec, PlanStep};

/// Names (flattened) of parameters that choose the operation.
const OPERATION_NAMES: [&str; 8] = [
    "operation",
    "action",
    "command",
    "mode",
    "op",
    "method",
    "operationtype",
    "actiontype",
];

const CREATE_WORDS: [&str; 10] = [
    "create", "add", "insert", "new", "write", "save", "put", "append", "make", "init",
];
const CHANGE_WORDS: [&str; 9] = [
    "update",
    "edit",
    "modify",
    "rename",
    "move",
    "replace",
    "set",
    "patch",
    "overwrite",
];
const REMOVE_WORDS: [&str; 9] = [
    "delete", "remove", "drop", "clear", "purge", "destroy", "erase", "reset", "truncate",
];

/// What an operation's value asks: `create_note` makes, `delete` removes.
pub fn form_of_value(value: &str) -> CallForm {
    let words = crate::plan::cues::words(value);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    if has(&REMOVE_WORDS) || has(&CHANGE_WORDS) {
        CallForm::Change
    } else if has(&CREATE_WORDS) {
        CallForm::Create
    } else {
        CallForm::Read
    }
}

/// Whether parameter `name` chooses the operation.
pub fn is_operation_param(name: &str) -> bool {
    OPERATION_NAMES.contains(&flat(name).as_str())
}

/// The order a value's form runs in: makers, readers, changers, removers.
pub fn rank(value: &str) -> u8 {
    let words = crate::plan::cues::words(value);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    if has(&REMOVE_WORDS) {
        3
    } else if has(&CHANGE_WORDS) {
        2
    } else if has(&CREATE_WORDS) {
        0
    } else {
        1
    }
}

/// One operation's value, and the parameters its description says it takes.
pub type Operation = (String, Vec<String>);

/// The operation parameter of `schema` and its values, each with the
/// parameters the description says it takes, when it has one: from the
/// schema (`enum`, `const`s), else from a list in the tool's description
/// (an `Actions:` block of `name: what it does` lines, `params: a, b`
/// beneath each).
pub fn operation_values(
    schema: Option<&Value>,
    description: Option<&str>,
) -> Option<(String, Vec<Operation>)> {
    let properties = schema?.get("properties")?.as_object()?;
    properties.iter().find_map(|(name, sub)| {
        if !OPERATION_NAMES.contains(&flat(name).as_str()) {
            return None;
        }
        let mut values: Vec<Operation> = values_of(sub)
            .into_iter()
            .map(|v| (v, Vec::new()))
            .collect();
        if values.is_empty() {
            values = described(description.unwrap_or(""), properties);
        }
        (values.len() >= 2).then(|| (name.clone(), values))
    })
}

/// Header words of a description's list of operations.
const LIST_HEADERS: [&str; 6] = [
    "actions",
    "operations",
    "commands",
    "modes",
    "available actions",
    "available operations",
];

/// The operations a description lists under a header line (`Actions:`),
/// one a line at the block's first indentation (`search: Search notes.`),
/// each with the schema's properties a deeper `params:` line names.
fn described(description: &str, properties: &serde_json::Map<String, Value>) -> Vec<Operation> {
    let lines: Vec<&str> = description.lines().collect();
    let Some(header) = lines.iter().position(|l| {
        let t = l.trim().trim_end_matches(':').to_ascii_lowercase();
        LIST_HEADERS.contains(&t.as_str()) && l.trim().ends_with(':')
    }) else {
        return Vec::new();
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out: Vec<Operation> = Vec::new();
    let mut level = None;
    for line in &lines[header + 1..] {
        if line.trim().is_empty() {
            continue;
        }
        let at = indent(line);
        let level = *level.get_or_insert(at);
        if at < level {
            break;
        }
        let trimmed = line.trim();
        if at == level {
            let Some((name, _)) = trimmed.split_once(':') else {
                break;
            };
            let name = name.trim().trim_matches(|c| "`'\"-*".contains(c));
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                break;
            }
            out.push((name.to_owned(), Vec::new()));
        } else if let Some(params) = trimmed.to_ascii_lowercase().strip_prefix("params:")
            && let Some((_, needed)) = out.last_mut()
        {
            for word in super::text_words(params) {
                if properties.contains_key(&word) && !needed.contains(&word) {
                    needed.push(word);
                }
            }
        }
    }
    out
}

fn values_of(sub: &Value) -> Vec<String> {
    if let Some(values) = sub.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| sub.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(|alt| alt.get("const").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// One step per operation value of `step`'s tool, in the order that leaves
/// something to act on, each with the fields its operation needs; empty
/// when the tool has no operation parameter.
pub fn operation_forms(
    step: &PlanStep,
    schema: Option<&Value>,
    description: Option<&str>,
) -> Vec<PlanStep> {
    let Some((param, mut values)) = operation_values(schema, description) else {
        return Vec::new();
    };
    values.sort_by_key(|(v, _)| rank(v));
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    values
        .into_iter()
        .map(|(value, needed)| {
            let mut form = step.clone();
            form.set(&param, ArgSpec::Pinned(Value::String(value.clone())));
            // Fields the description says this operation needs.
            for (name, sub) in properties.into_iter().flatten() {
                if form.args.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let description = sub.get("description").and_then(Value::as_str).unwrap_or("");
                if (needed.contains(name) || super::names_param(description, &value))
                    && let Some(v) = super::read_error::one_property(
                        schema.unwrap_or(&Value::Null),
                        name,
                        sub,
                        &step.tool,
                    )
                {
                    form.args.push((name.clone(), ArgSpec::Auto(v)));
                }
            }
            let making = form_of_value(&value) == CallForm::Create;
            form.cues.creator = making;
            for (name, spec) in &mut form.args {
                match spec {
                    ArgSpec::Auto(v) | ArgSpec::Fresh(v)
                        if making && v.is_string() && form.cues.new_name(name) =>
                    {
                        let fresh = if *v == "witness" {
                            Value::String(crate::plan::synth::fresh_name(&step.tool))
                        } else {
                            v.clone()
                        };
                        *spec = ArgSpec::Fresh(fresh);
                    }
                    ArgSpec::Fresh(v) if !making && !form.cues.new_place(name) => {
                        *spec = ArgSpec::Auto(v.clone());
                    }
                    _ => {}
                }
            }
            form
        })
        .collect()
}

/// The form a step's operation value asks, when it has one.
pub fn form_of_step(step: &PlanStep) -> Option<CallForm> {
    step.args.iter().find_map(|(name, spec)| match spec {
        ArgSpec::Pinned(Value::String(v)) if OPERATION_NAMES.contains(&flat(name).as_str()) => {
            Some(form_of_value(v))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::cues::ToolCues;

    #[test]
    fn each_operation_is_its_own_form_makers_first_removers_last_with_its_fields() {
        let schema = json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["delete", "read", "create"]},
                "path": {"type": "string"},
                "content": {"type": "string", "description": "The text (for create)"}
            },
            "required": ["operation", "path"]
        });
        let step = PlanStep {
            tool: "manage_note".into(),
            args: vec![
                ("operation".into(), ArgSpec::Pinned(json!("delete"))),
                ("path".into(), ArgSpec::Auto(json!("witness"))),
            ],
            cues: ToolCues {
                tool: "manage_note".into(),
                ..Default::default()
            },
        };
        let forms = operation_forms(&step, Some(&schema), None);
        let ops: Vec<&ArgSpec> = forms.iter().map(|f| &f.args[0].1).collect();
        assert_eq!(
            ops,
            [
                &ArgSpec::Pinned(json!("create")),
                &ArgSpec::Pinned(json!("read")),
                &ArgSpec::Pinned(json!("delete"))
            ]
        );
        assert!(
            matches!(forms[0].args[1].1, ArgSpec::Fresh(_)),
            "a fresh path to make"
        );
        assert!(
            forms[0].args.iter().any(|(n, _)| n == "content"),
            "create's field"
        );
        assert!(forms[2].args.iter().all(|(n, _)| n != "content"));
        assert!(
            matches!(forms[2].args[1].1, ArgSpec::Auto(_)),
            "a real path to delete"
        );
        let kinds: Vec<Option<CallForm>> = forms.iter().map(form_of_step).collect();
        assert_eq!(
            kinds,
            [
                Some(CallForm::Create),
                Some(CallForm::Read),
                Some(CallForm::Change)
            ]
        );
        // No operation parameter: no forms of this strategy's.
        assert!(
            operation_forms(&step, Some(&json!({"properties": {"path": {}}})), None).is_empty()
        );
    }

    #[test]
    fn a_description_that_lists_the_operations_gives_them_and_their_params() {
        let schema = json!({"properties": {
            "action": {"type": "string"}, "path": {"type": "string", "default": ""},
            "query": {"type": "string", "default": ""}, "limit": {"type": "integer"}}});
        let description = "Read and search the vault.\n\n    Actions:\n      search: Search notes.\n        \
            params: query, tags\n      get: Read one file.\n        params: path\n      \
            remove_all: Clear it.\n\n    Returns JSON.";
        let (param, values) = operation_values(Some(&schema), Some(description)).unwrap();
        assert_eq!(param, "action");
        assert_eq!(
            values,
            [
                ("search".to_owned(), vec!["query".to_owned()]),
                ("get".to_owned(), vec!["path".to_owned()]),
                ("remove_all".to_owned(), Vec::new()),
            ]
        );
        // No list: no operations read from prose that merely mentions one.
        assert!(operation_values(Some(&schema), Some("Do an action: carefully.")).is_none());
    }
}
