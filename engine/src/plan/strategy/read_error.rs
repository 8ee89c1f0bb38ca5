//! **Read the error and try again.** Servers write their errors for a model
//! to act on; a failed call (a tool error, a JSON-RPC error or an error in
//! the answer) is tried again with what its text asks for, within the
//! tool's budget of calls.
//!
//! Answers the failure where a call failed on a value the server had just
//! said how to fix, and the tool counted as never exercised: `Deletion
//! cancelled for safety. Use force: true`, `Project 'witness' not found.
//! Available projects: main`, `Path must be a vault-relative path`,
//! `At least one tag is required`, `File already exists`. What is read, in
//! order (the first that changes the call wins):
//!
//! - a boolean parameter of the schema the text names (`force`, `confirm`,
//!   `overwrite`, `yes`) that the call did not set to `true`: set;
//! - a parameter of the schema written with its choices (`needs
//!   kind=fact|note|task`): the first choice not sent before;
//! - a form it asks for: a path *relative* to the store (the store's paths
//!   made relative to its root), an *absolute* one, only a `SELECT` (before
//!   a field it names: the value sent is mended before anything is added);
//! - a parameter of the schema the text says is required, missing, needed
//!   or to be provided (`requires exactly one of index or drift_id`), that
//!   the call left out: given, from the store or the answers where one
//!   fits;
//! - a place inside a parameter a validator says holds the wrong type or
//!   nothing (zod's `"path": ["edits", 0], "expected": "object"`,
//!   pydantic's `edits.0` / `Input should be a valid dictionary`): a value
//!   of that type there, so a server that lists no schema teaches its
//!   shape a level at a time;
//! - valid values the text lists (`Available projects: main`, `must be one
//!   of a, b`, `valid values: ...`, `Ambiguous name 'x': matches a-1,
//!   a-2`; a marker with no list after it, as in
//!   `not a valid note:`, gives way to the next): the first the call did
//!   not send, for the parameter the text names or whose value it quotes;
//!   roots listed for a refused path (`Allowed roots: ['/v']`) take the
//!   path's name under them;
//! - a path it quotes back as refused: relative to the store's root when
//!   it is the store's, under that root by its name when it is another
//!   machine's (a description's example);
//! - `already exists`: a fresh name instead of the existing one; `already`
//!   otherwise, after a retry that changed one value: the next real
//!   object of that parameter's kind ([`super::already_there`]);
//! - `not found`, `does not exist`, `no such`: for a file's name not
//!   found as a thing of another kind (`Project "a.json" not found`), the
//!   name without its extension;
//!   otherwise the next real object of the store (or of the answers) of the
//!   same kind, one not sent before;
//! - a value that must be an existing folder: a store's folder
//!   ([`super::existing_folder`]); a hidden name refused: one without a
//!   leading dot ([`super::no_dot`]); a value shown by example: one of
//!   its shape ([`super::example_shape`]);
//! - an error that says nothing (`Error executing tool x`): made-up names
//!   without hyphens, real things for invented ones
//!   ([`super::opaque_error`]);
//! - a store's root refused in words about roots, workspaces or stores
//!   (`store must not equal workspace root`): another store's root.
//!
//! A rule whose retry would send what the tool was sent before gives way
//! to the next ([`answer_anew`]).
//!
//! Example: `delete_note {"path": "a.md"}` answers `Refusing to delete
//! without confirmation. Use force: true`; the schema has `force:
//! boolean`, so `delete_note {"path": "a.md", "force": true}` is sent, its
//! ledger record carrying `answers: {call: 7, reading: "the flag force"}`.

use serde_json::{Map, Value};
use witness_model::audit::{Argument, Provenance};

use super::{names_param, text_words};
use crate::plan::cues::{PathKind, SqlKind};
use crate::plan::harvest::{Harvested, Pool, Source};
use crate::plan::{ArgSpec, PlanStep};

/// A step to try again, and what was read in the error to make it.
#[derive(Clone, Debug, PartialEq)]
pub struct Retry {
    pub step: PlanStep,
    pub reading: String,
    /// Further forms to ask after `step`, whatever it answers: every other
    /// operation an error listed for an operation parameter (`Valid: save,
    /// delete`), makers first and removers last, each within the budget.
    /// Each with what was read for it.
    pub then: Vec<(PlanStep, String)>,
}

/// The retry `error` asks for, of a call of `step` that sent `sent`, when
/// the text asks for something the call can be given. `schema` is the
/// tool's input schema; `tried` every argument object the tool was sent so
/// far (a value sent before is not offered again).
pub fn answer(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    schema: Option<&Value>,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    answer_anew(step, sent, error, schema, pool, tried, &|_| true)
}

/// Like [`answer`], but a rule whose retry `new` refuses (it would send
/// what was sent before) gives way to the next rule: the first rule that
/// reads the error is not always the one that can still change the call.
pub fn answer_anew(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    schema: Option<&Value>,
    pool: &Pool,
    tried: &[Value],
    new: &dyn Fn(&PlanStep) -> bool,
) -> Option<Retry> {
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let lowered = error.to_lowercase();
    let rules: [&dyn Fn() -> Option<Retry>; 23] = [
        &|| flag(step, sent, error, properties),
        &|| assigned_choice(step, sent, error, properties, tried),
        // The form of a value sent before a field to add: `path must be
        // relative. Provide a project or prefix the path with 'project/'`
        // is answered by the relative path, not by an invented project.
        &|| form(step, sent, &lowered, pool),
        &|| under_folder(step, sent, error, pool, tried),
        &|| required(step, sent, &lowered, schema, properties),
        &|| validator_missing(step, sent, error),
        &|| validator_shape(step, sent, error),
        &|| front_matter(step, sent, error, properties),
        &|| listed(step, sent, error, tried),
        &|| exists(step, sent, error, &lowered, pool),
        &|| super::already_there::retry(step, sent, &lowered, pool, tried),
        &|| extension(step, sent, error, pool, tried),
        &|| not_found(step, sent, error, &lowered, pool, tried),
        &|| super::existing_folder::retry(step, sent, error, &lowered, pool, tried),
        &|| super::no_dot::retry(step, sent, &lowered, pool),
        &|| super::example_shape::retry(step, sent, error, pool, tried),
        &|| path_refused(step, sent, error, &lowered, pool, tried),
        &|| no_fields(step, sent, &lowered, schema, properties),
        &|| refused_object(step, sent, error, pool, tried),
        &|| super::opaque_error::retry(step, sent, error, pool),
        &|| another_root(step, sent, &lowered, pool, tried),
        &|| nothing_sent(step, sent, schema, properties),
        &|| without_scope(step, sent, tried),
    ];
    rules
        .iter()
        .find_map(|rule| rule().filter(|retry| new(&retry.step)))
        .map(|mut retry| {
            // A writer the retry first gave a fresh file (a schema that
            // listed no parameters) is asked to overwrite too, as its
            // planned step would have been.
            if crate::plan::overwrite_form(step).is_none()
                && let Some(overwrite) = crate::plan::overwrite_form(&retry.step)
            {
                retry.then.push((
                    overwrite,
                    "its overwrite form, of a file that exists".into(),
                ));
            }
            retry
        })
}

/// The retry of a call that answered it changed nothing and was seen to
/// change nothing (`No changes were staged: the given paths had nothing
/// new to stage`), or of a change that answered ok and was seen to change
/// nothing (`said` false): the next real object of the kind its first real
/// argument named (a store's file, a harvested id), one not sent before.
/// Such a call did not fail, but it did not do its job either, and the
/// object it was given is what made it idle as often as not (a file with
/// nothing to stage, a project with no rows to update).
pub fn idle(
    step: &PlanStep,
    sent: &[Argument],
    pool: &Pool,
    tried: &[Value],
    said: bool,
) -> Option<Retry> {
    // Each real argument in turn, a one-item list by its item (`files:
    // ["a.txt"]`); a store's root is where the call acts, not what it
    // acts on.
    sent.iter()
        .filter(|a| a.source.is_real() || a.parts.iter().any(|p| p.object.is_some()))
        .filter(|a| step.cues.path_kind(&a.name) != Some(PathKind::Root))
        .find_map(|target| {
            let (item, listed) = match &target.value {
                Value::Array(items) if items.len() == 1 => (&items[0], true),
                value => (value, false),
            };
            if !(item.is_string() || item.is_number()) {
                return None;
            }
            let sent_as = |v: &Value| {
                let v = if listed {
                    Value::Array(vec![v.clone()])
                } else {
                    v.clone()
                };
                v == target.value || tried.iter().any(|t| t.get(&target.name) == Some(&v))
            };
            let sent_before = |v: &Value| {
                sent_as(v)
                    || v.as_str()
                        .and_then(|t| super::store_objects::relative_to_root(pool, t))
                        .is_some_and(|r| sent_as(&Value::String(r)))
            };
            let next = next_object(pool, step, &target.name, item, &sent_before)?;
            let value = in_form_of(pool, item, &next.value);
            let value = if listed {
                Value::Array(vec![value])
            } else {
                value
            };
            let mut retry = step.clone();
            retry.set(
                &target.name,
                ArgSpec::Chosen(Box::new(Harvested {
                    value,
                    ..next.clone()
                })),
            );
            Some(Retry {
                step: retry,
                reading: format!(
                    "the next real {}: the call {} on the one sent",
                    target.name,
                    if said {
                        "said it changed nothing"
                    } else {
                        "changed nothing observed"
                    }
                ),
                then: Vec::new(),
            })
        })
}

/// What a failed call's error says: the server's message, and the text
/// of its answer when it answered (an error in the answer, a tool error),
/// whole rather than clipped.
pub fn error_text(record: &witness_model::audit::CallRecord) -> String {
    let mut text = String::new();
    if let Some(response) = &record.response {
        for part in response
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                text.push_str(t);
                text.push('\n');
            }
        }
        if let Some(structured) = response.get("structuredContent") {
            text.push_str(&structured.to_string());
            text.push('\n');
        }
    }
    if let Some(detail) = &record.outcome.detail {
        text.push_str(detail);
    }
    text
}

/// Words that, beside a boolean parameter's name, say the call must set it.
const FLAG_PHRASES: [&str; 8] = [
    "true", "set ", "pass ", "use ", "confirm", "must", "required", "enable",
];

fn flag(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    properties: Option<&Map<String, Value>>,
) -> Option<Retry> {
    let lowered = error.to_lowercase();
    if !FLAG_PHRASES.iter().any(|p| lowered.contains(p)) {
        return None;
    }
    let (name, _) = properties?.iter().find(|(name, sub)| {
        takes_boolean(sub)
            && names_param(error, name)
            && !sent
                .iter()
                .any(|a| a.name == **name && a.value == Value::Bool(true))
    })?;
    let mut retry = step.clone();
    retry.set(name, ArgSpec::Pinned(Value::Bool(true)));
    Some(Retry {
        step: retry,
        reading: format!("the flag {name}"),
        then: Vec::new(),
    })
}

fn assigned_choice(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    properties: Option<&Map<String, Value>>,
    tried: &[Value],
) -> Option<Retry> {
    for (name, sub) in properties? {
        let choices = super::written_choices::assigned_choices(error, name);
        let was_sent = |v: &str| {
            sent.iter()
                .any(|a| a.name == *name && a.value.as_str() == Some(v))
                || tried
                    .iter()
                    .any(|t| t.get(name).and_then(Value::as_str) == Some(v))
        };
        let takes_text = sub.get("type").is_none_or(|t| t == "string")
            || sub.get("anyOf").is_some()
            || sub.get("enum").is_some();
        if !takes_text {
            continue;
        }
        if let Some(choice) = choices.into_iter().find(|c| !was_sent(c)) {
            let mut retry = step.clone();
            retry.set(name, ArgSpec::Pinned(Value::String(choice.clone())));
            return Some(Retry {
                step: retry,
                reading: format!("a choice it wrote for {name}: {choice}"),
                then: Vec::new(),
            });
        }
    }
    None
}

/// Whether a property takes a boolean (alone, or among alternatives).
pub(crate) fn takes_boolean(sub: &Value) -> bool {
    let ty = |v: &Value| v.get("type").and_then(Value::as_str) == Some("boolean");
    ty(sub)
        || ["anyOf", "oneOf"].iter().any(|k| {
            sub.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(ty))
        })
}

const REQUIRED_PHRASES: [&str; 23] = [
    "required",
    "requires",
    "needs ",
    "provide ",
    "specify ",
    "missing",
    "provide either",
    "provide one of",
    "must provide",
    "must specify",
    "must be provided",
    "must be specified",
    "please provide",
    // Spanish and Portuguese (`La operación 'extract' requiere
    // 'input_path'`), French and German.
    "requiere",
    "requerido",
    // `Debe especificarse dataset_csv o dataset_json`, `especifique`;
    // never `especificado`, which says a thing was given (`la hoja
    // especificada no existe`).
    "especificar",
    "especifique",
    "requer",
    "obligatorio",
    "obrigatório",
    "falta",
    "obligatoire",
    "erforderlich",
];

fn required(
    step: &PlanStep,
    sent: &[Argument],
    lowered: &str,
    schema: Option<&Value>,
    properties: Option<&Map<String, Value>>,
) -> Option<Retry> {
    if !REQUIRED_PHRASES.iter().any(|p| lowered.contains(p)) {
        return None;
    }
    let (name, sub) = properties?
        .iter()
        .find(|(name, _)| !sent.iter().any(|a| a.name == **name) && names_param(lowered, name))?;
    let schema = schema?;
    let mut value = one_property(schema, name, sub, &step.tool)?;
    if value.as_array().is_some_and(Vec::is_empty) {
        value = one_item(schema, sub, &step.tool);
    }
    let mut retry = step.clone();
    retry.set(name, given(step, name, value));
    Some(Retry {
        step: retry,
        reading: format!("the field {name} it said was required"),
        then: Vec::new(),
    })
}

/// The fields a schema validator's message says the call left out, with
/// the JSON type it expected: a zod issue list (`[{"expected": "string",
/// "code": "invalid_type", "path": ["path"], "message": "... received
/// undefined"}]`) or pydantic's lines (`path` then `Field required
/// [type=missing, ...]`). Servers whose listed schema says nothing of
/// their parameters still validate them, and say so.
pub fn missing_fields(error: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(start) = error.find('[') {
        let mut stream = serde_json::Deserializer::from_str(&error[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Array(issues))) = stream.next() {
            for issue in issues {
                let message = issue.get("message").and_then(Value::as_str).unwrap_or("");
                let name = issue
                    .get("path")
                    .and_then(Value::as_array)
                    .and_then(|p| p.first())
                    .and_then(Value::as_str);
                let expected = issue
                    .get("expected")
                    .and_then(Value::as_str)
                    .unwrap_or("string");
                if let Some(name) = name
                    && (message.contains("received undefined") || message.contains("Required"))
                    && !out.iter().any(|(n, _)| n == name)
                {
                    out.push((name.to_owned(), expected.to_owned()));
                }
            }
        }
    }
    let lines: Vec<&str> = error.lines().collect();
    for pair in lines.windows(2) {
        let name = pair[0].trim();
        if pair[1].trim_start().starts_with("Field required")
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && !out.iter().any(|(n, _)| n == name)
        {
            out.push((name.to_owned(), "string".to_owned()));
        }
    }
    out
}

/// The retry of a note refused for fields its front matter lacks (see
/// [`super::front_matter`]).
fn front_matter(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    properties: Option<&Map<String, Value>>,
) -> Option<Retry> {
    let is_param = |f: &str| properties.is_some_and(|p| p.contains_key(f));
    // A field the note's block holds, refused with its choices listed
    // (`status 'witness' is not one of: draft, active`): the first.
    let choices = listed_values(error);
    if let Some((name, value, field)) =
        super::front_matter::with_choice(sent, error, &choices, &is_param)
    {
        let mut retry = step.clone();
        retry.set(&name, ArgSpec::Pinned(value));
        return Some(Retry {
            step: retry,
            reading: format!("a value it listed for the front matter field {field}"),
            then: Vec::new(),
        });
    }
    let fields = super::front_matter::missing(error);
    let (name, value) = super::front_matter::with_fields(sent, &fields, &is_param)?;
    let mut retry = step.clone();
    retry.set(&name, ArgSpec::Pinned(value));
    Some(Retry {
        step: retry,
        reading: format!(
            "the front matter field(s) it asked for: {}",
            fields.join(", ")
        ),
        then: Vec::new(),
    })
}

/// One place a schema validator found a value of the wrong type: where in
/// the arguments (`["edits", 0]`), and the JSON type it expected there.
#[derive(Debug, PartialEq)]
pub struct WrongType {
    pub at: Vec<Value>,
    pub expected: String,
}

/// At most this many of a validator's issues are read, each at most this
/// deep: its text is the server's, and an argument an audit makes is
/// small.
const MAX_ISSUES: usize = 16;
const MAX_DEPTH: usize = 8;

/// The places inside the arguments a validator's message says hold a value
/// of the wrong type or none: zod's issues (`"path": ["edits", 0],
/// "expected": "object"`) and pydantic's lines (`edits.0` then `Input
/// should be a valid dictionary [type=dict_type, ...]`). Only places below
/// a parameter, or a parameter sent with the wrong type: a parameter left
/// out is [`missing_fields`]'s.
pub fn wrong_types(error: &str) -> Vec<WrongType> {
    let mut out: Vec<WrongType> = Vec::new();
    if let Some(start) = error.find('[') {
        let mut stream = serde_json::Deserializer::from_str(&error[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Array(issues))) = stream.next() {
            for issue in issues.into_iter().take(MAX_ISSUES) {
                let at = issue
                    .get("path")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let expected = issue.get("expected").and_then(Value::as_str);
                let typed = issue.get("code").and_then(Value::as_str) == Some("invalid_type");
                if let Some(expected) = expected
                    && typed
                    && at.len() <= MAX_DEPTH
                    && at.first().is_some_and(Value::is_string)
                {
                    out.push(WrongType {
                        at,
                        expected: expected.to_owned(),
                    });
                }
            }
        }
    }
    let lines: Vec<&str> = error.lines().collect();
    for pair in lines.windows(2) {
        if out.len() >= MAX_ISSUES {
            break;
        }
        let place = pair[0].trim();
        let said = pair[1].trim_start();
        let expected = [
            ("Field required", "string"),
            ("Input should be a valid dictionary", "object"),
            ("Input should be a valid list", "array"),
            ("Input should be a valid string", "string"),
            ("Input should be a valid integer", "integer"),
            ("Input should be a valid number", "number"),
            ("Input should be a valid boolean", "boolean"),
        ]
        .iter()
        .find(|(words, _)| said.starts_with(words))
        .map(|(_, t)| *t);
        let shaped = !place.is_empty()
            && place.len() <= 256
            && place.split('.').count() <= MAX_DEPTH
            && place
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let Some(expected) = expected.filter(|_| shaped) else {
            continue;
        };
        let at: Vec<Value> = place
            .split('.')
            .map(|part| match part.parse::<u64>() {
                Ok(i) => Value::from(i),
                Err(_) => Value::String(part.to_owned()),
            })
            .collect();
        if at.first().is_some_and(Value::is_string) {
            out.push(WrongType {
                at,
                expected: expected.to_owned(),
            });
        }
    }
    out
}

/// A value of JSON type `expected` for a place the call got wrong: a list
/// holds one word, so that what its items must be is the validator's next
/// answer.
/// A text under a key is the audit's word with the key's name
/// (`witness-newText`), so that two fields of one item never hold the same
/// text (an edit that replaced a text with itself would change nothing).
fn of_type(expected: &str, key: Option<&str>) -> Value {
    match expected {
        "array" | "list" | "tuple" => Value::Array(vec![Value::String("witness".into())]),
        "number" | "integer" | "int" | "float" => Value::from(1),
        "boolean" | "bool" => Value::Bool(true),
        "object" | "dict" | "record" | "map" => Value::Object(Map::new()),
        _ => Value::String(key.map_or_else(|| "witness".into(), |k| format!("witness-{k}"))),
    }
}

/// Puts `leaf` at `at` inside `value`, making the lists and objects on the
/// way where the value held something else.
fn put_at(value: &mut Value, at: &[Value], leaf: Value) {
    let Some((first, rest)) = at.split_first() else {
        *value = leaf;
        return;
    };
    match first {
        Value::Number(n) => {
            let Some(i) = n.as_u64().and_then(|i| usize::try_from(i).ok()) else {
                return;
            };
            // An index past a handful is no argument an audit makes.
            if i > 16 {
                return;
            }
            if !value.is_array() {
                *value = Value::Array(Vec::new());
            }
            if let Value::Array(items) = value {
                while items.len() <= i {
                    items.push(Value::Null);
                }
                put_at(&mut items[i], rest, leaf);
            }
        }
        Value::String(key) => {
            if !value.is_object() {
                *value = Value::Object(Map::new());
            }
            if let Value::Object(map) = value {
                put_at(map.entry(key.clone()).or_insert(Value::Null), rest, leaf);
            }
        }
        _ => {}
    }
}

/// The retry of a call whose validator said where inside its arguments a
/// value was of the wrong type or missing (`edits[0]`: expected object,
/// received string): the same arguments with a value of that type there.
/// A server that lists no schema is taught its shape a level at a time.
fn validator_shape(step: &PlanStep, sent: &[Argument], error: &str) -> Option<Retry> {
    let mut changed: Vec<(String, Value)> = Vec::new();
    let mut places: Vec<String> = Vec::new();
    for wrong in wrong_types(error) {
        let Some(name) = wrong.at.first().and_then(Value::as_str) else {
            continue;
        };
        let current = changed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| {
                sent.iter()
                    .find(|a| a.name == name)
                    .map(|a| a.value.clone())
            });
        // A parameter left out altogether is `validator_missing`'s.
        let Some(mut value) = current else {
            continue;
        };
        let before = value.clone();
        let key = wrong
            .at
            .last()
            .and_then(Value::as_str)
            .filter(|_| wrong.at.len() > 1);
        put_at(&mut value, &wrong.at[1..], of_type(&wrong.expected, key));
        if value == before {
            continue;
        }
        places.push(
            wrong
                .at
                .iter()
                .map(|p| match p {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("."),
        );
        match changed.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => changed.push((name.to_owned(), value)),
        }
    }
    if changed.is_empty() {
        return None;
    }
    let mut retry = step.clone();
    for (name, value) in changed {
        retry.set(&name, ArgSpec::Auto(value));
    }
    Some(Retry {
        step: retry,
        reading: format!("the type its validator expected at {}", places.join(", ")),
        then: Vec::new(),
    })
}

fn validator_missing(step: &PlanStep, sent: &[Argument], error: &str) -> Option<Retry> {
    let missing: Vec<(String, String)> = missing_fields(error)
        .into_iter()
        .filter(|(name, _)| !sent.iter().any(|a| a.name == *name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut retry = step.clone();
    for (name, expected) in &missing {
        let value = match expected.as_str() {
            "array" => Value::Array(vec![Value::String("witness".into())]),
            "number" | "integer" => Value::from(1),
            "boolean" => Value::Bool(true),
            "object" => Value::Object(Map::new()),
            _ => Value::String("witness".into()),
        };
        // A value the store or the answers offer where one fits.
        retry.set(name, given(step, name, value));
    }
    let names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
    Some(Retry {
        step: retry,
        reading: format!(
            "the field(s) its validator said were missing: {}",
            names.join(", ")
        ),
        then: Vec::new(),
    })
}

/// An absolute store path the error quotes back as no path it accepts
/// (`not a vault path: '<path>'`, `outside the vault`): the same object
/// relative to the store. A path of another machine quoted back (`Path
/// '/Users/you/a.md' is outside allowed directories`) is moved under the
/// store's root by its name.
fn path_refused(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    lowered: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    let refusal = lowered.contains("path")
        || lowered.contains("outside")
        || NOT_FOUND.iter().any(|p| lowered.contains(p));
    if !refusal {
        return None;
    }
    let mut retry = step.clone();
    let mut changed = false;
    for argument in sent {
        // A path, or a list of paths (each made relative when the error
        // quotes one of them).
        let now = match &argument.value {
            Value::String(text) if !text.is_empty() && error.contains(text.as_str()) => {
                super::store_objects::relative_to_root(pool, text)
                    .or_else(|| super::store_objects::moved_under_root(pool, text))
                    .map(Value::String)
            }
            Value::Array(items)
                if items.iter().any(|i| {
                    i.as_str()
                        .is_some_and(|t| !t.is_empty() && error.contains(t))
                }) =>
            {
                let relative: Option<Vec<Value>> = items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .and_then(|t| super::store_objects::relative_to_root(pool, t))
                            .map(Value::String)
                    })
                    .collect();
                relative.map(Value::Array)
            }
            _ => None,
        };
        let Some(now) = now else {
            continue;
        };
        if tried.iter().any(|t| t.get(&argument.name) == Some(&now)) {
            continue;
        }
        let spec = match now {
            Value::String(_) => keep_provenance(argument, now),
            other => ArgSpec::Pinned(other),
        };
        retry.set(&argument.name, spec);
        changed = true;
    }
    changed.then(|| Retry {
        step: retry,
        reading: "paths relative to the store: the absolute one was refused".into(),
        then: Vec::new(),
    })
}

/// How a field the error asked for is given: the name of the thing a
/// creator makes is fresh (under the store, for a path), anything else a
/// real value where one fits.
fn given(step: &PlanStep, name: &str, value: Value) -> ArgSpec {
    if value.is_string() && step.cues.new_name(name) {
        ArgSpec::Fresh(Value::String(crate::plan::synth::fresh_name(&step.tool)))
    } else {
        ArgSpec::Auto(value)
    }
}

/// The file extension an error asks for (`a note path ends in .md`,
/// `Path must end with '.md'`, `only .xlsx files`), when it names one the
/// value sent does not have.
pub fn extension_asked(error: &str, sent: &str) -> Option<String> {
    let lowered = error.to_lowercase();
    let cue = [
        "end in",
        "ends in",
        "end with",
        "ends with",
        "must be a",
        "only",
        "expected",
    ]
    .iter()
    .any(|c| lowered.contains(c));
    if !cue {
        return None;
    }
    let current = std::path::Path::new(sent)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let bytes: Vec<char> = lowered.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_alphanumeric();
        if bytes[i] == '.' && boundary {
            let ext: String = bytes[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let after = bytes.get(i + 1 + ext.len());
            let ends = after.is_none_or(|c| !c.is_alphanumeric() && *c != '.' && *c != '/');
            if (1..=5).contains(&ext.len())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && ends
                && current.as_deref() != Some(ext.as_str())
            {
                return Some(ext);
            }
        }
        i += 1;
    }
    None
}

fn extension(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    for argument in sent {
        let Some(text) = argument.value.as_str() else {
            continue;
        };
        if step.cues.path_kind(&argument.name).is_none() && !error.contains(text) {
            continue;
        }
        let Some(ext) = extension_asked(error, text) else {
            continue;
        };
        let sent_before = |v: &str| {
            tried
                .iter()
                .any(|t| t.get(&argument.name).and_then(Value::as_str) == Some(v))
        };
        let mut retry = step.clone();
        let fresh = step
            .args
            .iter()
            .any(|(n, spec)| *n == argument.name && matches!(spec, ArgSpec::Fresh(_)));
        if fresh || argument.source == Provenance::Synthesized {
            let name = format!("{}.{ext}", crate::plan::synth::fresh_name(&step.tool));
            retry.set(&argument.name, ArgSpec::Fresh(Value::String(name)));
        } else {
            let relative = !std::path::Path::new(text).is_absolute();
            let of_kind = pool.items().find(|h| {
                h.shape == Some(PathKind::File)
                    && matches!(h.source, Source::Store(_))
                    && h.value.as_str().is_some_and(|v| {
                        v.to_ascii_lowercase().ends_with(&format!(".{ext}"))
                            && !sent_before(v)
                            && !super::store_objects::relative_to_root(pool, v)
                                .is_some_and(|r| sent_before(&r))
                    })
            })?;
            let value = match of_kind.value.as_str() {
                Some(v) if relative => super::store_objects::relative_to_root(pool, v)
                    .map_or_else(|| of_kind.value.clone(), Value::String),
                _ => of_kind.value.clone(),
            };
            retry.set(
                &argument.name,
                ArgSpec::Chosen(Box::new(Harvested {
                    value,
                    ..of_kind.clone()
                })),
            );
        }
        return Some(Retry {
            step: retry,
            reading: format!("a .{ext} {}", argument.name),
            then: Vec::new(),
        });
    }
    None
}

/// A value for property `name` alone, as the planner would invent it were
/// the property required.
pub(crate) fn one_property(schema: &Value, name: &str, sub: &Value, tool: &str) -> Option<Value> {
    let mut alone = Map::new();
    alone.insert("type".into(), Value::String("object".into()));
    let mut properties = Map::new();
    properties.insert(name.to_owned(), sub.clone());
    alone.insert("properties".into(), Value::Object(properties));
    alone.insert(
        "required".into(),
        Value::Array(vec![Value::String(name.into())]),
    );
    for defs in ["$defs", "definitions"] {
        if let Some(d) = schema.get(defs) {
            alone.insert(defs.into(), d.clone());
        }
    }
    let value = crate::plan::synth::arguments_for(Some(&Value::Object(alone)), tool)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)?;
    // An empty default is what leaving the property out already meant: a
    // plain value of a type the property takes instead, the one its
    // description shows where it shows one (an optional `font_name`
    // documented `Font family (e.g. "Calibri")`, or a choice written in
    // prose, put in `examples` by the planner; a `null` default hid both
    // from the generator).
    Some(match value {
        Value::Null => shown_value(sub).unwrap_or_else(|| plain_of(sub, tool)),
        Value::String(v) if v.is_empty() => Value::String(crate::plan::synth::fresh_name(tool)),
        v => v,
    })
}

/// The string value `sub` shows for itself: its first `examples` entry,
/// else the value its description quotes by example. Only for a property
/// that takes a string.
fn shown_value(sub: &Value) -> Option<Value> {
    if !super::written_choices::takes_text(sub) {
        return None;
    }
    let listed = sub
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .filter(|v| v.is_string())
        .cloned();
    listed.or_else(|| {
        sub.get("description")
            .and_then(Value::as_str)
            .and_then(crate::plan::synth::quoted_example)
            .map(Value::String)
    })
}

/// A list of one element of the kind `sub`'s items take: a list an error
/// says is required is not satisfied by the empty one its default was
/// (`La operación 'merge' requiere una lista de archivos en 'files'`,
/// answered again after `"files": []`). The element is filled at call
/// time like any other, so `files` gets a file of the store.
fn one_item(schema: &Value, sub: &Value, tool: &str) -> Value {
    let said = |items: &Value| {
        ["type", "anyOf", "oneOf", "enum", "const", "$ref"]
            .iter()
            .any(|k| items.get(k).is_some())
    };
    let shaped = |items: &Value| {
        ["properties", "additionalProperties"]
            .iter()
            .any(|k| items.get(k).is_some())
    };
    let item = match sub.get("items") {
        // As the schema's generator makes one: an enum's first value, a
        // reference followed.
        Some(items) if said(items) => {
            one_property(schema, "item", items, tool).unwrap_or_else(|| plain_of(items, tool))
        }
        // A mapping's schema that names no type is still a mapping.
        Some(items) if shaped(items) => Value::Object(Map::new()),
        _ => Value::String(crate::plan::synth::fresh_name(tool)),
    };
    Value::Array(vec![item])
}

/// A plain non-null value of a type `sub` takes (`type`, or the
/// alternatives of an `anyOf`/`oneOf`): a fresh name for a string.
fn plain_of(sub: &Value, tool: &str) -> Value {
    fn types_of(v: &Value) -> Vec<&str> {
        match v.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }
    let mut types = types_of(sub);
    for key in ["anyOf", "oneOf"] {
        for alt in sub.get(key).and_then(Value::as_array).into_iter().flatten() {
            types.extend(types_of(alt));
        }
    }
    match types.into_iter().find(|t| *t != "null") {
        Some("integer" | "number") => Value::from(1),
        Some("boolean") => Value::Bool(true),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => Value::Object(Map::new()),
        _ => Value::String(crate::plan::synth::fresh_name(tool)),
    }
}

/// Words after which a text lists the values it accepts.
const LIST_MARKERS: [&str; 22] = [
    // Servers answer in their authors' languages too: Spanish, Portuguese,
    // French and German words for valid, available and allowed.
    "válid",
    "valide",
    "disponible",
    "permitid",
    "gültig",
    "one of",
    "valid:",
    "valid ",
    "allowed ",
    "accepted ",
    "available",
    "valid values",
    "valid options",
    "allowed values",
    "allowed:",
    "expected",
    "choose from",
    "options are",
    "options:",
    "supported",
    // A name that fits several things lists them (`Ambiguous name 'x':
    // matches a-1, a-2`). `matches` only after `ambiguous`, since alone
    // it is as often a search's word.
    "matches ",
    "candidates:",
];

/// The values a text lists after one of [`LIST_MARKERS`]: `Available
/// projects: main, work` → `main`, `work`. Quotes, brackets and a closing
/// period are dropped; a list ends at the end of its line or sentence.
pub fn listed_values(error: &str) -> Vec<String> {
    let lowered = same_length_lowercase(error);
    // A marker starts a word: `Invalid type` holds no `valid `.
    let starts_word = |at: usize| {
        lowered[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    };
    // `no válido`, `non valide`, `nicht gültig`, `not available`: the word
    // before says the opposite, and what follows is the value refused.
    let negated = |at: usize| {
        lowered[..at]
            .split_whitespace()
            .next_back()
            .is_some_and(|w| ["no", "non", "not", "nicht", "não", "pas", "kein", "ne"].contains(&w))
    };
    // Every place a marker starts a word, first to last: the first that is
    // followed by a list wins (`would not be a valid note:` then `status
    // 'x' is not one of: a, b` reads the second).
    let mut places: Vec<(usize, &str)> = LIST_MARKERS
        .iter()
        .flat_map(|m| {
            lowered
                .match_indices(m)
                .map(|(at, _)| at)
                // `is not one of: a, b` still lists the valid ones.
                .filter(|at| starts_word(*at) && (*m == "one of" || !negated(*at)))
                .filter(|at| *m != "matches " || lowered[..*at].contains("ambiguous"))
                .map(move |at| (at, *m))
        })
        .collect();
    places.sort_unstable();
    places
        .into_iter()
        .filter_map(|(at, marker)| error.get(at + marker.len()..))
        .map(values_after)
        .find(|values| !values.is_empty())
        .unwrap_or_default()
}

/// `text` lowercased character by character wherever that keeps its
/// length in bytes (`İ` stays as it is), so that an offset found in the
/// result is one of `text`.
fn same_length_lowercase(text: &str) -> String {
    text.chars()
        .map(|c| {
            let lower: String = c.to_lowercase().collect();
            if lower.len() == c.len_utf8() {
                lower
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The values listed at the start of `rest`, the text after a marker.
fn values_after(rest: &str) -> Vec<String> {
    // `Available projects: main`: the list starts after the colon when
    // there is one on the line.
    let line = rest.lines().next().unwrap_or("");
    let list = match line.find(':') {
        Some(colon) => &line[colon + 1..],
        None => line,
    };
    let list = list.split(". ").next().unwrap_or(list);
    list.split([',', '|', ';'])
        .flat_map(|part| part.split(" or "))
        .map(|v| {
            v.trim()
                .trim_matches(|c: char| "\"'`[](){}.?!".contains(c) || c.is_whitespace())
                .to_owned()
        })
        .filter(|v| !v.is_empty() && !v.contains(' ') && v.len() <= 80)
        .collect()
}

fn listed(step: &PlanStep, sent: &[Argument], error: &str, tried: &[Value]) -> Option<Retry> {
    let values = listed_values(error);
    if values.is_empty() {
        return None;
    }
    // The parameter the text names, else the one whose value it quotes.
    let target = sent
        .iter()
        .filter(|a| a.value.is_string())
        .find(|a| names_param(error, &a.name))
        .or_else(|| {
            sent.iter().find(|a| {
                a.value
                    .as_str()
                    .is_some_and(|v| !v.is_empty() && error.contains(v))
            })
        })?;
    // Roots a refused path may lie under (`Allowed roots: ['/v']`): the
    // path's name under each.
    let name = target
        .value
        .as_str()
        .filter(|t| t.starts_with('/'))
        .and_then(|t| std::path::Path::new(t).file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let values: Vec<String> = match name {
        Some(name) if values.iter().all(|v| v.starts_with('/')) => values
            .iter()
            .map(|root| format!("{}/{name}", root.trim_end_matches('/')))
            .collect(),
        _ => values,
    };
    let mut fresh: Vec<String> = values
        .into_iter()
        .filter(|v| {
            Some(v.as_str()) != target.value.as_str()
                && !tried
                    .iter()
                    .any(|t| t.get(&target.name).and_then(Value::as_str) == Some(v.as_str()))
        })
        .collect();
    // An operation's values are each a form of the tool: all are asked,
    // in the order that leaves something to act on.
    let operation = super::operations::is_operation_param(&target.name);
    if operation {
        fresh.sort_by_key(|v| super::operations::rank(v));
    }
    let mut forms = fresh.iter().map(|v| {
        let mut form = step.clone();
        form.set(&target.name, ArgSpec::Pinned(Value::String(v.clone())));
        (form, format!("a value it listed for {}: {v}", target.name))
    });
    let (first, reading) = forms.next()?;
    let then = if operation {
        forms.collect()
    } else {
        Vec::new()
    };
    Some(Retry {
        step: first,
        reading,
        then,
    })
}

fn form(step: &PlanStep, sent: &[Argument], lowered: &str, pool: &Pool) -> Option<Retry> {
    let words = text_words(lowered);
    let has = |w: &str| words.iter().any(|x| x == w);
    if has("select") && (has("only") || has("must") || has("allowed")) {
        let mut retry = step.clone();
        let mut changed = false;
        for (_, spec) in &mut retry.args {
            if matches!(spec, ArgSpec::Sql(kind) if *kind != SqlKind::Select) {
                *spec = ArgSpec::Sql(SqlKind::Select);
                changed = true;
            }
        }
        if changed {
            return Some(Retry {
                step: retry,
                reading: "a SELECT".into(),
                then: Vec::new(),
            });
        }
    }
    let relative = has("relative") && !lowered.contains("not relative");
    let absolute = has("absolute") && !relative;
    if !relative && !absolute {
        return None;
    }
    let mut retry = step.clone();
    let mut changed = false;
    for argument in sent {
        let Some(text) = argument.value.as_str() else {
            continue;
        };
        let now = if relative {
            super::store_objects::relative_to_root(pool, text)
        } else {
            super::store_objects::absolute_under_root(pool, text)
        };
        if let Some(now) = now {
            retry.set(
                &argument.name,
                keep_provenance(argument, Value::String(now)),
            );
            changed = true;
        }
    }
    changed.then(|| Retry {
        step: retry,
        reading: if relative {
            "paths relative to the store".into()
        } else {
            "absolute paths".into()
        },
        then: Vec::new(),
    })
}

/// The folder an error says the call may act only under (`Can only
/// delete files under captures/`), as it writes it: a relative name ending
/// in `/` right after `under`, `in`, `inside`, `within` or `beneath`.
fn named_folder(error: &str) -> Option<&str> {
    let words: Vec<&str> = error.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let before = pair[0].to_ascii_lowercase();
        if !["under", "in", "inside", "within", "beneath"].contains(&before.as_str()) {
            return None;
        }
        let folder = pair[1]
            .trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ',' | ';' | ':' | '(' | ')'));
        let folder = folder.strip_suffix('.').unwrap_or(folder);
        let plain = folder
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        (plain && folder.len() >= 2 && folder.ends_with('/') && !folder.starts_with('/'))
            .then_some(folder)
    })
}

/// The call may act only under a folder the error names: the first path
/// the store or the answers hold inside it, not sent before, given to the
/// call's path parameter as the error writes it (relative to the store).
fn under_folder(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    // Only where the error limits the call (`can only`, `must be`,
    // `allowed`): a folder named in passing limits nothing.
    let lowered = error.to_lowercase();
    if !["only", "must", "allowed", "restricted", "limited"]
        .iter()
        .any(|w| lowered.contains(w))
    {
        return None;
    }
    let folder = named_folder(error)?;
    // A store's root is where the call acts, never what it acts on.
    let takes_path = |name: &str| {
        step.cues
            .path_kind(name)
            .is_some_and(|kind| kind != PathKind::Root)
    };
    let param = sent
        .iter()
        .find(|a| a.value.is_string() && takes_path(&a.name))
        .map(|a| a.name.clone())
        .or_else(|| {
            step.args
                .iter()
                .map(|(name, _)| name)
                .find(|name| takes_path(name))
                .cloned()
        })?;
    let was_sent = |v: &str| {
        sent.iter()
            .any(|a| a.name == param && a.value.as_str() == Some(v))
            || tried
                .iter()
                .any(|t| t.get(&param).and_then(Value::as_str) == Some(v))
    };
    let (found, relative) = pool.items().find_map(|h| {
        let text = h.value.as_str()?;
        let relative =
            super::store_objects::relative_to_root(pool, text).unwrap_or_else(|| text.to_owned());
        let inside = relative.len() > folder.len() && relative.starts_with(folder);
        (inside && h.shape != Some(PathKind::Dir) && !was_sent(text) && !was_sent(&relative))
            .then_some((h, relative))
    })?;
    let mut retry = step.clone();
    retry.set(
        &param,
        ArgSpec::Chosen(Box::new(Harvested {
            value: Value::String(relative),
            ..found.clone()
        })),
    );
    Some(Retry {
        step: retry,
        reading: format!("{param} under {folder}, where the error said the call acts"),
        then: Vec::new(),
    })
}

/// The argument's new value, keeping where the old one came from: a
/// store's path in another form still names the store's object.
fn keep_provenance(argument: &Argument, value: Value) -> ArgSpec {
    match (&argument.source, &argument.object) {
        (Provenance::Store, Some(object)) => ArgSpec::Chosen(Box::new(Harvested::seeded(
            &argument.name,
            value,
            object.clone(),
            None,
        ))),
        _ => ArgSpec::Pinned(value),
    }
}

fn exists(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    lowered: &str,
    pool: &Pool,
) -> Option<Retry> {
    if !lowered.contains("already exist") {
        return None;
    }
    let target = sent.iter().find(|a| {
        a.value.as_str().is_some_and(|v| {
            !v.is_empty()
                && (error.contains(v)
                    || std::path::Path::new(v)
                        .file_name()
                        .and_then(|f| f.to_str())
                        .is_some_and(|f| error.contains(f)))
        }) && a.source != Provenance::Synthesized
    })?;
    let fresh = crate::plan::synth::fresh_name(&step.tool);
    // A path gets a fresh name of its kind under a directory store's
    // root: made anywhere else, it would be the audit's own write outside
    // the stores. With no directory store there is no such place.
    let existing = target.value.as_str().map(std::path::Path::new);
    let fresh = match existing {
        Some(path) if path.is_absolute() => {
            pool.fresh_root()?;
            match path.extension().and_then(|e| e.to_str()) {
                Some(ext) => format!("{fresh}.{ext}"),
                None => fresh,
            }
        }
        _ => fresh,
    };
    let mut retry = step.clone();
    retry.set(&target.name, ArgSpec::Fresh(Value::String(fresh)));
    Some(Retry {
        step: retry,
        reading: format!("a fresh {}: the one sent already exists", target.name),
        then: Vec::new(),
    })
}

const NOT_FOUND: [&str; 7] = [
    "not found",
    "does not exist",
    "doesn't exist",
    "no such",
    "not exist",
    "unknown",
    "no matching",
];

/// Whether `lowered` (an error's text, lowercased) says a thing was not
/// found.
pub(super) fn says_not_found(lowered: &str) -> bool {
    NOT_FOUND.iter().any(|p| lowered.contains(p))
}

/// A real object the error quotes back as refused for some other reason
/// (`Task '<id>' is not pending`, `... is locked`): another real object
/// of the same kind, as for one not found.
fn refused_object(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    let real = sent.iter().any(|a| {
        a.source.is_real()
            && a.value
                .as_str()
                .is_some_and(|v| v.len() >= 3 && error.contains(v))
    });
    if !real {
        return None;
    }
    let mut retry = not_found(step, sent, error, "not found", pool, tried)?;
    retry.reading = retry.reading.replace("was not found", "was refused");
    Some(retry)
}

/// Words of an update that changed nothing because it was given nothing
/// to change.
const NO_FIELDS: [&str; 7] = [
    "at least one",
    "no formatting specified",
    "no fields",
    "nothing to update",
    "no updates",
    "at least one field",
    "no changes",
];

/// An update refused for want of anything to change: every optional
/// property of the schema the call left out, but ids, is given (a value
/// that changes bytes: the tool's fresh name).
fn no_fields(
    step: &PlanStep,
    sent: &[Argument],
    lowered: &str,
    schema: Option<&Value>,
    properties: Option<&Map<String, Value>>,
) -> Option<Retry> {
    if !NO_FIELDS.iter().any(|p| lowered.contains(p)) {
        return None;
    }
    let mut retry = step.clone();
    let mut added = Vec::new();
    for (name, sub) in properties? {
        let flat = name.to_ascii_lowercase();
        if sent.iter().any(|a| a.name == *name) || flat == "id" || flat.ends_with("id") {
            continue;
        }
        if let Some(value) = one_property(schema?, name, sub, &step.tool) {
            // A field that names a thing (`sheet_name`), given nothing by
            // the schema, takes a real one where the store has it: an
            // invented sheet fails the whole change.
            let invented = value.as_str().is_some_and(|v| v.starts_with("witness"));
            let spec = if invented
                && crate::plan::harvest::names_an_object(name)
                && !step.cues.new_name(name)
            {
                ArgSpec::Auto(value)
            } else {
                ArgSpec::Synthesized(value)
            };
            retry.set(name, spec);
            added.push(name.clone());
        }
    }
    if added.is_empty() {
        return None;
    }
    Some(Retry {
        step: retry,
        reading: format!("fields to change: {}", added.join(", ")),
        then: Vec::new(),
    })
}

fn not_found(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    lowered: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    if !says_not_found(lowered) {
        return None;
    }
    let quoted = |a: &&Argument| {
        a.value
            .as_str()
            .is_some_and(|v| !v.is_empty() && error.contains(v))
    };
    let target = sent
        .iter()
        .filter(|a| a.value.is_string() || a.value.is_number())
        .find(quoted)?;
    let was_sent =
        |v: &Value| *v == target.value || tried.iter().any(|t| t.get(&target.name) == Some(v));
    // An object counts as sent in either form, absolute or relative.
    let sent_before = |v: &Value| {
        was_sent(v)
            || v.as_str()
                .and_then(|t| super::store_objects::relative_to_root(pool, t))
                .is_some_and(|r| was_sent(&Value::String(r)))
    };
    // An absolute store path that was not found may be the right object
    // in the wrong form: its path relative to the store comes first.
    if let Some(text) = target.value.as_str()
        && let Some(relative) = super::store_objects::relative_to_root(pool, text)
        && !was_sent(&Value::String(relative.clone()))
    {
        let mut retry = step.clone();
        retry.set(
            &target.name,
            keep_provenance(target, Value::String(relative)),
        );
        return Some(Retry {
            step: retry,
            reading: format!(
                "{} relative to the store: the absolute path was not found",
                target.name
            ),
            then: Vec::new(),
        });
    }
    // A file's name was not found as a thing the error names in other
    // words: the server may name that thing by the file's stem (a project
    // kept as `garden-guide.json` is the project `garden-guide`).
    if let Some(text) = target.value.as_str()
        && !speaks_of_files(error)
        && let Some(stem) = file_stem(text)
        && !was_sent(&Value::String(stem.to_owned()))
    {
        // The stem is a name the file suggests, not the file: it is sent
        // as chosen here, claiming no store object.
        let mut retry = step.clone();
        retry.set(
            &target.name,
            ArgSpec::Pinned(Value::String(stem.to_owned())),
        );
        return Some(Retry {
            step: retry,
            reading: format!(
                "{} without its file's extension: the file name was not found",
                target.name
            ),
            then: Vec::new(),
        });
    }
    // A name the server joined to a folder of the store and did not find
    // there: another entry of that folder, by its name.
    if let Some(text) = target.value.as_str()
        && let Some(entry) = joined_entry(pool, error, text, &sent_before)
    {
        let mut retry = step.clone();
        retry.set(&target.name, ArgSpec::Chosen(Box::new(entry)));
        return Some(Retry {
            step: retry,
            reading: format!(
                "another entry of the folder the server looked in for {}: the one sent was not found",
                target.name
            ),
            then: Vec::new(),
        });
    }
    // Of a kind read from words, never what another argument of the same
    // call already names (a merge of a project into itself).
    let elsewhere =
        |v: &Value| sent_before(v) || sent.iter().any(|a| a.name != target.name && a.value == *v);
    // A parameter that takes a path has its own rule (the next path of
    // its shape); words name the kinds of other things.
    let takes_path = step.cues.path_kind(&target.name).is_some();
    let next =
        next_object(pool, step, &target.name, &target.value, &sent_before).or_else(|| {
            (!takes_path)
                .then(|| of_missing_kind(pool, error, &target.name, &target.value, &elsewhere))
                .flatten()
        })?;
    let spec = ArgSpec::Chosen(Box::new(Harvested {
        value: in_form_of(pool, &target.value, &next.value),
        ..next.clone()
    }));
    let mut retry = step.clone();
    retry.set(&target.name, spec);
    Some(Retry {
        step: retry,
        reading: format!("the next real {}: the one sent was not found", target.name),
        then: Vec::new(),
    })
}

/// The entry of a store's folder to send in place of `sent`, which the
/// server joined to that folder and did not find there (`Repository path
/// does not exist: /s/repos/witness` for `repo_name: "witness"`): the
/// folder's first entry not sent before and not hidden, a folder for a
/// name without a file's extension, a file for one with (else any
/// entry), by its name.
fn joined_entry(
    pool: &Pool,
    error: &str,
    sent: &str,
    sent_before: &dyn Fn(&Value) -> bool,
) -> Option<Harvested> {
    if sent.is_empty() || sent.contains('/') {
        return None;
    }
    let suffix = format!("/{sent}");
    let folder = error.match_indices(&suffix).find_map(|(at, _)| {
        let after = error[at + suffix.len()..].chars().next();
        if after.is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/')) {
            return None;
        }
        // After the character that opens the path, whatever its width (a
        // no-break space is two bytes).
        let start = error[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '(' | '[' | '«'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let folder = error.get(start..at)?;
        pool.items()
            .any(|h| {
                matches!(h.shape, Some(PathKind::Dir | PathKind::Root))
                    && h.value.as_str() == Some(folder)
            })
            .then_some(folder)
    })?;
    let wanted = if file_stem(sent).is_some() {
        PathKind::File
    } else {
        PathKind::Dir
    };
    let entries = || {
        pool.items().filter_map(|h| {
            let path = std::path::Path::new(h.value.as_str()?);
            let name = path.file_name()?.to_str()?;
            let inside = path.parent().is_some_and(|p| p.as_os_str() == folder);
            (inside
                && !name.starts_with('.')
                && matches!(h.source, Source::Store(_))
                && !sent_before(&Value::String(name.to_owned())))
            .then_some((h, name))
        })
    };
    let (h, name) = entries()
        .find(|(h, _)| h.shape == Some(wanted))
        .or_else(|| entries().next())?;
    Some(Harvested {
        value: Value::String(name.to_owned()),
        ..h.clone()
    })
}

/// Generic words a kind of thing is named by, never the kind itself.
const GENERIC_KEYS: [&str; 7] = ["id", "name", "slug", "key", "title", "uuid", "[]"];

/// The kind of thing an error says it did not find: the word before the
/// value it quotes or before `not found` (`Category "x" not found`,
/// `Repository not found: x`, `Task id 5 does not exist`), or the word
/// after `unknown` or `no such` (`Unknown project 'x'`). `sent` is taken
/// out first, and so is what stands in parentheses.
pub(super) fn missing_kind(error: &str, sent: &str) -> Option<String> {
    let mut text = error.to_lowercase();
    if !sent.is_empty() {
        text = text.replace(&sent.to_lowercase(), " ");
    }
    let mut plain = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let noun = |w: &&str| {
        w.len() >= 3
            && !GENERIC_KEYS.contains(w)
            // A path is the form the thing was looked for in, not its kind
            // (`Repository path does not exist`).
            && ![
                "the", "was", "with", "error", "named", "value", "given", "path", "resource",
                "item", "record", "entry", "object", "element", "data", "requested",
            ]
            .contains(w)
    };
    for (i, pair) in words.windows(2).enumerate() {
        let before = match pair {
            ["not", "found" | "exist" | "exists"] => Some(i),
            ["does" | "doesn" | "did", "not"] => Some(i),
            _ => None,
        };
        if let Some(end) = before {
            let found = words[..end]
                .iter()
                .rev()
                .take(3)
                .find(|w| noun(w) && !["does", "doesn", "did", "is"].contains(*w));
            if let Some(kind) = found {
                return Some((*kind).to_owned());
            }
        }
        let after = matches!(pair, ["no", "such"])
            .then_some(i + 2)
            .or_else(|| (pair[0] == "unknown").then_some(i + 1));
        if let Some(start) = after
            && let Some(kind) = words.get(start).filter(|w| noun(w))
        {
            return Some((*kind).to_owned());
        }
    }
    None
}

/// Whether `word` names the kind `kind`: the same word, singular or
/// plural, or one a short form of the other (`repo`, `repository`).
pub(super) fn is_kind(word: &str, kind: &str) -> bool {
    use crate::plan::harvest::singular;
    let (a, b) = (singular(word), singular(kind));
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    a == b || (short.len() >= 4 && long.starts_with(short.as_str()))
}

/// A real object of the kind the error says it did not find, or failing
/// that of the kind the parameter names by its last word
/// (`target_category`): a value found under that kind's own key, or the
/// name or id of a collection of such things or of an answer about them
/// (`list_categories` → `[{"name": "orders"}]`).
pub(super) fn of_missing_kind<'p>(
    pool: &'p Pool,
    error: &str,
    param: &str,
    like: &Value,
    sent_before: &dyn Fn(&Value) -> bool,
) -> Option<&'p Harvested> {
    let sent = like
        .as_str()
        .map_or_else(|| like.to_string(), str::to_owned);
    let from_param = || {
        crate::plan::cues::words(param)
            .into_iter()
            .rev()
            .find(|w| w.len() >= 3 && !GENERIC_KEYS.contains(&w.as_str()) && w != "path")
    };
    let of_kind = |kind: &str| {
        pool.items().find(|h| {
            let named = is_kind(&h.key, kind)
                || (GENERIC_KEYS.contains(&h.key.as_str())
                    && (h.collection.as_deref().is_some_and(|c| is_kind(c, kind))
                        || crate::plan::cues::words(&h.tool)
                            .last()
                            .is_some_and(|noun| is_kind(noun, kind))));
            named
                && h.value.is_string() == like.is_string()
                && h.value.is_number() == like.is_number()
                && !matches!(h.source, Source::Plan)
                && !sent_before(&h.value)
        })
    };
    // The error's kind first; where the pool holds none of it, the
    // parameter's.
    missing_kind(error, &sent)
        .and_then(|kind| of_kind(&kind))
        .or_else(|| from_param().and_then(|kind| of_kind(&kind)))
}

/// `next` in the form `sent` was in: a relative path stays relative (the
/// next object of a relative path that was not found, or that did
/// nothing, is sent relative too).
fn in_form_of(pool: &Pool, sent: &Value, next: &Value) -> Value {
    let relative = sent
        .as_str()
        .is_some_and(|v| super::store_objects::absolute_under_root(pool, v).is_some());
    match next.as_str() {
        Some(text) if relative => super::store_objects::relative_to_root(pool, text)
            .map_or_else(|| next.clone(), Value::String),
        _ => next.clone(),
    }
}

/// Whether an error speaks of files, paths or folders (whole words: a
/// `profile` is not a file), so that what it did not find is a file.
fn speaks_of_files(error: &str) -> bool {
    const WORDS: [&str; 9] = [
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "directory",
        "directories",
        "folder",
        "folders",
    ];
    error
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| WORDS.contains(&w))
}

/// The stem of a file's name (`garden-guide` for `garden-guide.json`): a
/// single name (no `/`) with an extension of one to five letters or digits,
/// at least one a letter, so that a version (`v1.2`) or a number is none.
fn file_stem(text: &str) -> Option<&str> {
    if text.contains('/') {
        return None;
    }
    let (stem, extension) = text.rsplit_once('.')?;
    let file_like = (1..=5).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_alphabetic());
    (file_like && !stem.is_empty() && !stem.starts_with('.')).then_some(stem)
}

/// A call that sent no argument at all and failed, of a tool whose schema
/// has properties, none required (`query {"sql"?: string}` answering
/// `Client was passed a null or undefined query`): every property given,
/// SQL as SQL, the rest as the schema describes them.
/// A store's root was sent and refused in words about where the call
/// works: the next store's root, one not sent there before. A server given
/// a workspace and a separate store of its own refuses the one for the
/// other.
fn another_root(
    step: &PlanStep,
    sent: &[Argument],
    lowered: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    if !super::root_lesson::speaks_of_place(lowered) {
        return None;
    }
    let roots: Vec<&Harvested> = pool
        .items()
        .filter(|h| h.shape == Some(PathKind::Root))
        .collect();
    for argument in sent {
        let Some(value) = argument.value.as_str() else {
            continue;
        };
        if !roots.iter().any(|h| h.value.as_str() == Some(value)) {
            continue;
        }
        let sent_before = |v: &Value| tried.iter().any(|t| t.get(&argument.name) == Some(v));
        let Some(other) = roots
            .iter()
            .find(|h| h.value.as_str() != Some(value) && !sent_before(&h.value))
        else {
            continue;
        };
        let mut retry = step.clone();
        retry.set(&argument.name, ArgSpec::Chosen(Box::new((*other).clone())));
        return Some(Retry {
            step: retry,
            reading: format!("another store's root for {}", argument.name),
            then: Vec::new(),
        });
    }
    None
}

fn nothing_sent(
    step: &PlanStep,
    sent: &[Argument],
    schema: Option<&Value>,
    properties: Option<&Map<String, Value>>,
) -> Option<Retry> {
    if !sent.is_empty() {
        return None;
    }
    let mut retry = step.clone();
    let mut added = Vec::new();
    for (name, sub) in properties? {
        let spec = match step.cues.sql_kind(name) {
            Some(kind) => ArgSpec::Sql(kind),
            None => ArgSpec::Auto(one_property(schema?, name, sub, &step.tool)?),
        };
        retry.set(name, spec);
        added.push(name.clone());
    }
    if added.is_empty() {
        return None;
    }
    Some(Retry {
        step: retry,
        reading: format!(
            "a call with nothing failed: every parameter given ({})",
            added.join(", ")
        ),
        then: Vec::new(),
    })
}

/// The call without the optional arguments the planner chose where it
/// acts ([`super::scope`]): when a call so given failed and nothing else
/// in its error could be answered, the tool's own default may be the one
/// that works.
fn without_scope(step: &PlanStep, sent: &[Argument], tried: &[Value]) -> Option<Retry> {
    let dropped: Vec<String> = step
        .args
        .iter()
        .filter(|(name, spec)| {
            matches!(spec, ArgSpec::IfReal(_)) && sent.iter().any(|a| a.name == *name)
        })
        .map(|(name, _)| name.clone())
        .collect();
    if dropped.is_empty() {
        return None;
    }
    let mut retry = step.clone();
    retry.args.retain(|(name, _)| !dropped.contains(name));
    let without = Value::Object(
        sent.iter()
            .filter(|a| !dropped.contains(&a.name))
            .map(|a| (a.name.clone(), a.value.clone()))
            .collect(),
    );
    if tried.contains(&without) {
        return None;
    }
    Some(Retry {
        step: retry,
        reading: format!("without the optional {} it was given", dropped.join(", ")),
        then: Vec::new(),
    })
}

/// Another real object for parameter `param`, of the kind `like` was: a
/// path of the same shape, or a value found under the same key (for a
/// thing the plan made, also one an answer listed in a collection the
/// parameter names), newest answers and the store's objects alike, never
/// one `sent_before`.
pub(super) fn next_object<'p>(
    pool: &'p Pool,
    step: &PlanStep,
    param: &str,
    like: &Value,
    sent_before: &dyn Fn(&Value) -> bool,
) -> Option<&'p Harvested> {
    let shape = step.cues.path_kind(param);
    let fresh = |h: &&Harvested| {
        !sent_before(&h.value)
            && h.value.is_string() == like.is_string()
            && !matches!(h.source, Source::Plan)
    };
    // An id of a kind of thing (`task_id`, `noteId`): the keys of the
    // things of that kind first (a `tasks` table's rows), never a table's
    // own name.
    let lowered = param.to_ascii_lowercase();
    let stem = lowered
        .strip_suffix("_id")
        .or_else(|| lowered.strip_suffix("id"))
        .filter(|s| !s.is_empty() && shape.is_none());
    if let Some(stem) = stem {
        let stem = stem.trim_end_matches('_');
        return pool.items().filter(fresh).find(|h| {
            h.key == "id"
                && h.collection.as_deref().is_some_and(|c| {
                    crate::plan::harvest::singular(&c.to_ascii_lowercase()) == stem
                })
        });
    }
    let same = pool.holding(like);
    // A thing the plan made is known by the key it was sent under, not by
    // where an answer listed things of its kind: the next one is also
    // one listed in a collection the parameter names (`list` in `lists`).
    let word = crate::plan::cues::words(param).pop();
    let of_kind = |h: &Harvested| {
        h.collection.as_deref().is_some_and(|c| {
            word.as_deref()
                == Some(crate::plan::harvest::singular(&c.to_ascii_lowercase()).as_str())
        })
    };
    // A folder a tool moves or deletes is one below a store's root (see
    // `Pool::path`).
    let below_root =
        shape == Some(PathKind::Dir) && step.cues.relocates() && !step.cues.new_place(param);
    pool.items().filter(fresh).find(|h| match (shape, h.shape) {
        (Some(PathKind::File), Some(s)) => s == PathKind::File,
        (Some(_), Some(s)) => {
            s != PathKind::File && !(below_root && (s == PathKind::Root || h.hidden()))
        }
        (Some(_), None) => false,
        (None, _) => same.map_or(h.key == param, |s| {
            (s.key == h.key && s.collection == h.collection)
                || (matches!(s.source, Source::Plan) && s.key == h.key && of_kind(h))
        }),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;

    fn sent(args: &[(&str, Value, Provenance)]) -> Vec<Argument> {
        args.iter()
            .map(|(n, v, p)| Argument {
                name: (*n).into(),
                value: v.clone(),
                source: *p,
                from: None,
                object: None,
                parts: Vec::new(),
            })
            .collect()
    }

    /// `param` sent the vault store's file `relative`, by its jailed path.
    fn sent_vault_file(param: &str, relative: &str) -> Vec<Argument> {
        let mut args = sent(&[(
            param,
            json!(format!("/j/vault/{relative}")),
            Provenance::Store,
        )]);
        args[0].object = Some(StoreObject {
            store: "vault".into(),
            object: format!("file/{relative}"),
        });
        args
    }

    fn step(tool: &str, args: &[(&str, Value)]) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: args
                .iter()
                .map(|(n, v)| ((*n).to_owned(), ArgSpec::Auto(v.clone())))
                .collect(),
            cues: crate::plan::cues::ToolCues {
                tool: tool.into(),
                ..Default::default()
            },
        }
    }

    fn spec<'s>(retry: &'s Retry, name: &str) -> &'s ArgSpec {
        &retry.step.args.iter().find(|(n, _)| n == name).unwrap().1
    }

    fn store_pool(paths: &[(&str, PathKind)]) -> Pool {
        let mut pool = Pool::default();
        let seeds = paths
            .iter()
            .map(|(p, shape)| {
                Harvested::seeded_path(
                    (*p).into(),
                    *shape,
                    StoreObject {
                        store: "vault".into(),
                        object: format!("file/{}", p.trim_start_matches("/j/vault/")),
                    },
                )
            })
            .collect();
        pool.seed(seeds, vec!["/j/vault".into()]);
        pool
    }

    #[test]
    fn choices_written_after_a_parameter_are_tried() {
        let schema = json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string"}, "kind": {"type": "string"}}});
        let step = PlanStep {
            tool: "add_memory".into(),
            args: vec![("text".into(), ArgSpec::Synthesized(json!("witness")))],
            ..PlanStep::default()
        };
        let retry = answer(
            &step,
            &[],
            "Error saving memory: add_memory needs kind=fact|concept (got none).",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .expect("a retry");
        assert!(
            retry
                .step
                .args
                .contains(&("kind".into(), ArgSpec::Pinned(json!("fact"))))
        );
    }

    #[test]
    fn a_flag_the_error_names_is_set_and_only_a_boolean_of_the_schema() {
        let schema = json!({"properties": {"path": {"type": "string"},
            "force": {"type": "boolean"}, "confirm": {"type": "string"}}});
        let st = step("remove", &[("path", json!("a.md"))]);
        let args = sent(&[("path", json!("a.md"), Provenance::Store)]);
        let pool = Pool::default();
        let retry = answer(
            &st,
            &args,
            "Deletion cancelled for safety. Use force: true",
            Some(&schema),
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(retry.reading, "the flag force");
        assert_eq!(spec(&retry, "force"), &ArgSpec::Pinned(json!(true)));
        // `confirm` is a string here: not a flag to set.
        assert!(
            answer(
                &st,
                &args,
                "Please confirm the deletion",
                Some(&schema),
                &pool,
                &[]
            )
            .is_none()
        );
        // Already set: nothing more to read.
        let set = sent(&[("force", json!(true), Provenance::Synthesized)]);
        assert!(answer(&st, &set, "Use force: true", Some(&schema), &pool, &[]).is_none());
    }

    #[test]
    fn a_rule_whose_retry_was_sent_before_gives_way_to_the_next() {
        let schema = json!({"properties": {"project": {"type": "string"},
            "force": {"type": "boolean"}}});
        let st = step("remove", &[("project", json!("witness"))]);
        let args = sent(&[("project", json!("witness"), Provenance::Synthesized)]);
        let error = "Refused. Use force: true. Available projects: main";
        let pool = Pool::default();
        let first = answer(&st, &args, error, Some(&schema), &pool, &[]).unwrap();
        assert_eq!(first.reading, "the flag force");
        // The flag was sent before: the listed project is the retry.
        let no_flag = |retry: &PlanStep| !retry.args.iter().any(|(n, _)| n == "force");
        let next = answer_anew(&st, &args, error, Some(&schema), &pool, &[], &no_flag).unwrap();
        assert_eq!(spec(&next, "project"), &ArgSpec::Pinned(json!("main")));
        assert!(answer_anew(&st, &args, error, Some(&schema), &pool, &[], &|_| false).is_none());
    }

    #[test]
    fn a_field_said_to_be_required_is_given() {
        let schema = json!({"properties": {"query": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}}}});
        let st = step("search", &[("query", json!("witness"))]);
        let args = sent(&[("query", json!("witness"), Provenance::Synthesized)]);
        let either = answer(
            &st,
            &args,
            "Error: Provide either \"tags\" or \"pattern\" parameter",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(matches!(spec(&either, "tags"), ArgSpec::Auto(v) if v.is_array()));
        let retry = answer(
            &st,
            &args,
            "At least one tag or pattern is required",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert_eq!(retry.reading, "the field tags it said was required");
        assert!(matches!(spec(&retry, "tags"), ArgSpec::Auto(v) if v.is_array()));
    }

    #[test]
    fn a_field_an_error_says_the_tool_requires_or_needs_is_given() {
        let schema = json!({"properties": {"root": {"type": "string"},
            "index": {"type": "integer"}, "drift_id": {"type": "string"}}});
        let st = step("restore", &[("root", json!("/s"))]);
        let args = sent(&[("root", json!("/s"), Provenance::Store)]);
        for error in [
            "restore requires exactly one of index or drift_id",
            "Provide index OR drift_id",
            "this tool needs index to know what to restore",
        ] {
            let retry = answer(&st, &args, error, Some(&schema), &Pool::default(), &[])
                .unwrap_or_else(|| panic!("no retry for {error}"));
            assert_eq!(
                retry.reading, "the field index it said was required",
                "{error}"
            );
        }
    }

    #[test]
    fn a_call_that_sent_nothing_and_failed_is_given_every_parameter() {
        let schema = json!({"properties": {"sql": {"type": "string"}}});
        let mut st = step("query", &[]);
        st.cues = crate::plan::cues::ToolCues {
            tool: "query".into(),
            speaks_sql: true,
            text: "query run a read-only sql query".into(),
            ..Default::default()
        };
        let retry = answer(
            &st,
            &[],
            "Client was passed a null or undefined query",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(matches!(spec(&retry, "sql"), ArgSpec::Sql(SqlKind::Select)));
        // A call that sent something is not this rule's.
        let args = sent(&[("sql", json!("SELECT 1"), Provenance::Synthesized)]);
        let given = step("query", &[("sql", json!("SELECT 1"))]);
        assert!(
            nothing_sent(
                &given,
                &args,
                Some(&schema),
                schema["properties"].as_object()
            )
            .is_none()
        );
    }

    #[test]
    fn a_writer_a_retry_first_gave_a_fresh_file_is_asked_to_overwrite_too() {
        let mut st = step("write_file", &[]);
        st.cues = crate::plan::cues::ToolCues {
            tool: "write_file".into(),
            creator: true,
            noun: "file".into(),
            ..Default::default()
        };
        let error = r#"[{"code": "invalid_type", "expected": "string", "path": ["path"],
            "message": "Required"}, {"code": "invalid_type", "expected": "string",
            "path": ["content"], "message": "Required"}]"#;
        let retry = answer(&st, &[], error, None, &Pool::default(), &[]).unwrap();
        assert!(matches!(spec(&retry, "path"), ArgSpec::Fresh(_)));
        let [(overwrite, reading)] = retry.then.as_slice() else {
            panic!("{:?}", retry.then);
        };
        assert!(reading.contains("overwrite"));
        assert!(overwrite.cues.existing_target);
        assert!(
            overwrite
                .args
                .iter()
                .any(|(n, s)| n == "path" && matches!(s, ArgSpec::Auto(_)))
        );
    }

    #[test]
    fn a_folder_a_move_did_not_find_is_followed_by_one_below_the_root() {
        use witness_model::audit::StoreObject;
        let at = |object: &str| StoreObject {
            store: "vault".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/vault".into(), PathKind::Root, at("")),
                Harvested::seeded_path("/j/vault/Daily".into(), PathKind::Dir, at("dir/Daily")),
            ],
            vec!["/j/vault".into()],
        );
        let step = |tool: &str| PlanStep {
            tool: tool.into(),
            args: vec![("old_dir".into(), ArgSpec::Auto(json!("drafts")))],
            cues: crate::plan::ToolCues {
                tool: tool.into(),
                ..crate::plan::ToolCues::default()
            },
        };
        let sent = sent(&[("old_dir", json!("drafts"), Provenance::Synthesized)]);
        let tried = [json!({"old_dir": "drafts"})];
        let error = "Folder not found: 'drafts'. Find the path with list_folders.";
        // The root (`.`) would be refused: `Pass a folder below the vault root`.
        let retry =
            answer(&step("move_folder"), &sent, error, None, &pool, &tried).expect("a retry");
        let ArgSpec::Chosen(h) = &retry.step.args[0].1 else {
            panic!("{:?}", retry.step.args)
        };
        assert_eq!(h.value, json!("Daily"));
        // A tool that reads a folder may be given the root.
        let read =
            answer(&step("summarize_folder"), &sent, error, None, &pool, &tried).expect("a retry");
        let ArgSpec::Chosen(h) = &read.step.args[0].1 else {
            panic!("{:?}", read.step.args)
        };
        assert_eq!(h.value, json!("."));
    }

    #[test]
    fn a_refused_root_is_followed_by_the_next_stores_root() {
        use witness_model::audit::StoreObject;
        let mut pool = Pool::default();
        let root = |store: &str| {
            Harvested::seeded_path(
                format!("/jail/stores/{store}/tree"),
                PathKind::Root,
                StoreObject {
                    store: store.into(),
                    object: String::new(),
                },
            )
        };
        pool.seed(vec![root("store"), root("workspace")], Vec::new());
        let step = PlanStep {
            tool: "tc_save".into(),
            args: vec![("root".into(), ArgSpec::Auto(json!("witness")))],
            ..PlanStep::default()
        };
        let sent = [Argument {
            name: "root".into(),
            value: json!("/jail/stores/store/tree"),
            source: Provenance::Store,
            from: None,
            object: None,
            parts: Vec::new(),
        }];
        let tried = [json!({"root": "/jail/stores/store/tree"})];
        let retry = answer(
            &step,
            &sent,
            "store must not equal workspace root",
            None,
            &pool,
            &tried,
        )
        .expect("a retry");
        let ArgSpec::Chosen(h) = &retry.step.args[0].1 else {
            panic!("{:?}", retry.step.args)
        };
        assert_eq!(h.value, json!("/jail/stores/workspace/tree"));
        // Once both were sent, nothing is left to offer.
        let tried = [
            tried[0].clone(),
            json!({"root": "/jail/stores/workspace/tree"}),
        ];
        let mut sent = sent;
        sent[0].value = json!("/jail/stores/workspace/tree");
        assert!(
            answer(
                &step,
                &sent,
                "store must not equal workspace root",
                None,
                &pool,
                &tried
            )
            .is_none()
        );
    }

    #[test]
    fn listed_values_are_read_and_the_named_parameter_takes_the_first_new_one() {
        assert_eq!(
            listed_values("Project 'witness' not found. Available projects: main"),
            ["main"]
        );
        assert_eq!(
            listed_values("mode must be one of 'a', 'b' or 'c'."),
            ["a", "b", "c"]
        );
        assert_eq!(
            listed_values("Invalid value. Valid values: [x, y]"),
            ["x", "y"]
        );
        assert!(listed_values("Nothing listed here").is_empty());
        // A name that fits several things lists them; `matches` without
        // `ambiguous` lists nothing.
        assert_eq!(
            listed_values("Ambiguous name 'witness': matches s03-witness-a, s04-witness-b"),
            ["s03-witness-a", "s04-witness-b"]
        );
        assert!(listed_values("No note matches the query today").is_empty());
        // A marker with no list after it is passed over for a later one.
        assert_eq!(
            listed_values(
                "a.md would not be a valid note:\n- status 'witness' is not one of: draft, active"
            ),
            ["draft", "active"]
        );
        // A marker is a word of its own: `Invalid` holds no `valid `.
        assert_eq!(
            listed_values("Invalid commit type: witness. Valid types: feat, fix, docs"),
            ["feat", "fix", "docs"]
        );
        // In another language.
        assert_eq!(
            listed_values(
                "Operación no soportada: 'witness'. Operaciones válidas: 'merge', 'extract', 'split_by'"
            ),
            ["merge", "extract", "split_by"]
        );
        // A list word after a negation names the value refused.
        assert_eq!(
            listed_values("Valor no válido: 'x'. Valores válidos: a, b"),
            ["a", "b"]
        );
        // A text whose lowercase is longer than itself is read, not sliced
        // inside a character.
        let _ = listed_values("İ valid:éa, b");
        assert_eq!(listed_values("İİ. Allowed: x, y"), ["x", "y"]);
        let st = step(
            "add_task",
            &[("project", json!("witness")), ("title", json!("t"))],
        );
        let args = sent(&[
            ("project", json!("witness"), Provenance::Synthesized),
            ("title", json!("t"), Provenance::Synthesized),
        ]);
        let retry = answer(
            &st,
            &args,
            "Project 'witness' not found. Available projects: main, work",
            None,
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert_eq!(spec(&retry, "project"), &ArgSpec::Pinned(json!("main")));
        // `main` was tried: `work` next.
        let tried = [json!({"project": "main"})];
        let retry = answer(
            &st,
            &args,
            "Available projects: main, work",
            None,
            &Pool::default(),
            &tried,
        )
        .unwrap();
        assert_eq!(spec(&retry, "project"), &ArgSpec::Pinned(json!("work")));
    }

    #[test]
    fn every_operation_an_error_lists_is_asked_removers_last() {
        let st = step("capture", &[("action", json!("witness"))]);
        let args = sent(&[("action", json!("witness"), Provenance::Synthesized)]);
        let retry = answer(
            &st,
            &args,
            r#"{"status":"error","message":"Unknown action 'witness'. Valid: delete, save, list"}"#,
            None,
            &Pool::default(),
            &[],
        )
        .unwrap();
        let action = |s: &PlanStep| s.args[0].1.clone();
        assert_eq!(action(&retry.step), ArgSpec::Pinned(json!("save")));
        assert_eq!(retry.then[1].1, "a value it listed for action: delete");
        let then: Vec<ArgSpec> = retry.then.iter().map(|(s, _)| action(s)).collect();
        assert_eq!(
            then,
            [
                ArgSpec::Pinned(json!("list")),
                ArgSpec::Pinned(json!("delete"))
            ]
        );
        // A parameter that is no operation takes one value, and no more.
        let st = step("add_task", &[("project", json!("witness"))]);
        let args = sent(&[("project", json!("witness"), Provenance::Synthesized)]);
        let retry = answer(
            &st,
            &args,
            "Unknown project. Valid: main, work",
            None,
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(retry.then.is_empty());
    }

    #[test]
    fn a_relative_path_is_asked_and_the_stores_path_is_made_relative() {
        let pool = store_pool(&[("/j/vault/notes/a.md", PathKind::File)]);
        let st = step("read_note", &[("path", json!("/j/vault/notes/a.md"))]);
        let args = sent_vault_file("path", "notes/a.md");
        let retry = answer(
            &st,
            &args,
            "Path must be a portable vault-relative path",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(retry.reading, "paths relative to the store");
        let ArgSpec::Chosen(h) = spec(&retry, "path") else {
            panic!()
        };
        assert_eq!(h.value, json!("notes/a.md"));
        assert!(
            matches!(h.source, Source::Store(_)),
            "still the store's object"
        );
    }

    #[test]
    fn a_form_asked_for_mends_the_value_sent_before_a_field_it_names_is_added() {
        let pool = store_pool(&[("/j/vault/notes/a.md", PathKind::File)]);
        let schema = json!({"properties": {"path": {"type": "string"},
            "project": {"type": "string"}}});
        let st = step("update_doc", &[("path", json!("/j/vault/notes/a.md"))]);
        let args = sent_vault_file("path", "notes/a.md");
        let retry = answer(
            &st,
            &args,
            "path must be relative. Provide a project with --project or prefix the path",
            Some(&schema),
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(retry.reading, "paths relative to the store");
        assert!(retry.step.args.iter().all(|(name, _)| name != "project"));
    }

    #[test]
    fn a_file_name_not_found_as_a_thing_of_another_kind_is_sent_by_its_stem() {
        let pool = store_pool(&[("/j/data/garden-guide.json", PathKind::File)]);
        let st = step("merge_projects", &[("source", json!("garden-guide.json"))]);
        let args = sent(&[("source", json!("garden-guide.json"), Provenance::Store)]);
        let error = "Project \"garden-guide.json\" not found";
        let retry = answer(&st, &args, error, None, &pool, &[]).unwrap();
        assert_eq!(
            retry.reading,
            "source without its file's extension: the file name was not found"
        );
        let ArgSpec::Pinned(value) = spec(&retry, "source") else {
            panic!()
        };
        assert_eq!(*value, json!("garden-guide"));
        // Not found as a file, it keeps its name: the next object instead.
        let st = step("read_file", &[("path", json!("garden-guide.json"))]);
        let args = sent(&[("path", json!("garden-guide.json"), Provenance::Store)]);
        let retry = answer(
            &st,
            &args,
            "File garden-guide.json not found",
            None,
            &pool,
            &[],
        );
        assert!(retry.is_none_or(|r| !r.reading.contains("extension")));
        // Sent as the store's file, the stem claims no store object.
        let st = step("merge_projects", &[("source", json!("garden-guide.json"))]);
        let args = sent_vault_file("source", "garden-guide.json");
        let args = [Argument {
            value: json!("garden-guide.json"),
            ..args[0].clone()
        }];
        let retry = answer(&st, &args, error, None, &pool, &[]).unwrap();
        assert!(
            matches!(spec(&retry, "source"), ArgSpec::Pinned(v) if *v == json!("garden-guide"))
        );
        // Words are whole words: a profile is not a file, and "no such"
        // may speak of a project.
        for error in [
            "Profile \"garden-guide.json\" not found",
            "No such project: garden-guide.json",
        ] {
            let retry = answer(&st, &args, error, None, &pool, &[]).unwrap();
            assert!(retry.reading.contains("extension"), "{error}");
        }
        let retry = answer(
            &st,
            &args,
            "No such file: garden-guide.json",
            None,
            &pool,
            &[],
        );
        assert!(retry.is_none_or(|r| !r.reading.contains("extension")));
        // A version or a number has no file's extension.
        for value in ["v1.2", "3.14", "release.2024"] {
            let st = step("get_release", &[("version", json!(value))]);
            let args = sent(&[("version", json!(value), Provenance::Harvested)]);
            let error = format!("Release {value} not found");
            let retry = answer(&st, &args, &error, None, &pool, &[]);
            assert!(
                retry.is_none_or(|r| !r.reading.contains("extension")),
                "{value}"
            );
        }
    }

    #[test]
    fn the_kind_an_error_did_not_find_is_read_from_its_words() {
        for (error, sent, kind) in [
            (
                "Error: Category \"witness\" not found",
                "witness",
                Some("category"),
            ),
            (
                "Repository not found: witness-x",
                "witness-x",
                Some("repository"),
            ),
            (
                "Repository path does not exist: /s/witness-x",
                "witness-x",
                Some("repository"),
            ),
            ("Initiative 3 (target) not found", "3", Some("initiative")),
            ("Task id 5 does not exist", "5", Some("task")),
            (
                "Unknown project 'witness'. See PROJECTS.md.",
                "witness",
                Some("project"),
            ),
            ("no such table: witness", "witness", Some("table")),
            (
                "Chunk \"w\" not found in project \"shop\"",
                "w",
                Some("chunk"),
            ),
            ("Error: Commit not found", "c1", Some("commit")),
            ("{\"found\": false}", "w", None),
            ("The requested resource was not found", "w", None),
            ("Unknown error", "w", None),
        ] {
            assert_eq!(missing_kind(error, sent).as_deref(), kind, "{error}");
        }
    }

    #[test]
    fn not_found_gives_a_real_thing_of_the_kind_the_error_or_the_parameter_names() {
        let mut pool = Pool::default();
        pool.absorb(
            "list_categories",
            1,
            &json!({"content": [{"type": "text", "text": "[{\"name\": \"orders\", \"chunks\": 1}]"}]}),
        );
        pool.absorb(
            "list_repositories",
            2,
            &json!({"structuredContent": {"repositories": [{"name": "alpha"}]}}),
        );
        let st = step("move_chunk", &[("target_category", json!("witness"))]);
        let args = sent(&[("target_category", json!("witness"), Provenance::Synthesized)]);
        // Named by the error ...
        let retry = answer(
            &st,
            &args,
            "Category \"witness\" not found",
            None,
            &pool,
            &[],
        )
        .unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "target_category") else {
            panic!("{:?}", retry.step.args)
        };
        assert_eq!(h.value, json!("orders"));
        // ... or, where it names none, by the parameter's last word.
        let retry = answer(&st, &args, "Error: \"witness\" not found", None, &pool, &[]).unwrap();
        assert!(
            matches!(spec(&retry, "target_category"), ArgSpec::Chosen(h) if h.value == json!("orders"))
        );
        // A kind the pool holds nothing of gives way to the parameter's.
        let st = step("move_chunk", &[("target_category", json!("witness"))]);
        let args = sent(&[("target_category", json!("witness"), Provenance::Synthesized)]);
        let retry = answer(&st, &args, "Bucket \"witness\" not found", None, &pool, &[]).unwrap();
        assert!(
            matches!(spec(&retry, "target_category"), ArgSpec::Chosen(h) if h.value == json!("orders"))
        );
        // A short form of the kind's name is the kind.
        let st = step("create_tag", &[("repo_name", json!("witness"))]);
        let args = sent(&[("repo_name", json!("witness"), Provenance::Synthesized)]);
        let retry = answer(
            &st,
            &args,
            "Repository not found: witness",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert!(
            matches!(spec(&retry, "repo_name"), ArgSpec::Chosen(h) if h.value == json!("alpha"))
        );
        // Never what another argument of the call names.
        pool.absorb(
            "list_projects",
            3,
            &json!({"structuredContent": {"projects": [{"name": "garden"}, {"name": "shop"}]}}),
        );
        let st = step(
            "merge_projects",
            &[("source", json!("garden")), ("target", json!("witness"))],
        );
        let args = sent(&[
            ("source", json!("garden"), Provenance::Harvested),
            ("target", json!("witness"), Provenance::Synthesized),
        ]);
        let retry = answer(
            &st,
            &args,
            "Project \"witness\" not found",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert!(matches!(spec(&retry, "target"), ArgSpec::Chosen(h) if h.value == json!("shop")));
        // Nothing of another kind stands in.
        let st = step("get_commit", &[("commit_id", json!("witness"))]);
        let args = sent(&[("commit_id", json!("witness"), Provenance::Synthesized)]);
        assert!(answer(&st, &args, "Commit not found", None, &pool, &[]).is_none());
    }

    #[test]
    fn a_name_joined_to_a_stores_folder_and_not_found_there_is_another_entry_of_it() {
        let pool = store_pool(&[
            ("/j/vault", PathKind::Root),
            ("/j/vault/.cache", PathKind::Dir),
            ("/j/vault/notes.txt", PathKind::File),
            ("/j/vault/alpha", PathKind::Dir),
            ("/j/vault/alpha/.git", PathKind::Dir),
        ]);
        let st = step("get_last_tag", &[("repo_name", json!("witness-x"))]);
        let args = sent(&[("repo_name", json!("witness-x"), Provenance::Synthesized)]);
        let error = "Error executing tool: Repository path does not exist: /j/vault/witness-x";
        let retry = answer(&st, &args, error, None, &pool, &[]).unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "repo_name") else {
            panic!()
        };
        // A folder for a name with no extension, not the hidden one.
        assert_eq!(h.value, json!("alpha"));
        assert!(retry.reading.starts_with("another entry of the folder"));
        // Sent before: the next entry.
        let tried = [json!({"repo_name": "alpha"})];
        let retry = answer(&st, &args, error, None, &pool, &tried).unwrap();
        assert!(
            matches!(spec(&retry, "repo_name"), ArgSpec::Chosen(h) if h.value == json!("notes.txt"))
        );
        // A path opened by a character wider than a byte is read, not
        // sliced inside it.
        let spaced = "Repository\u{a0}/j/vault/witness-x\u{a0}does not exist";
        let retry = answer(&st, &args, spaced, None, &pool, &[]).unwrap();
        assert!(
            matches!(spec(&retry, "repo_name"), ArgSpec::Chosen(h) if h.value == json!("alpha"))
        );
        // The value must end the path: a longer name is another thing.
        let longer = "Repository path does not exist: /j/vault/witness-x2";
        let retry = answer(&st, &args, longer, None, &pool, &[]);
        assert!(retry.is_none_or(|r| !r.reading.starts_with("another entry")));
    }

    #[test]
    fn a_field_said_to_be_required_in_another_language_is_given() {
        let schema = json!({"type": "object", "properties": {
            "operation": {"type": "string"}, "input_path": {"type": "string"}}});
        let st = step("pdf_manipulate", &[("operation", json!("extract"))]);
        let args = sent(&[("operation", json!("extract"), Provenance::Synthesized)]);
        let error = "La operación 'extract' requiere 'input_path'";
        let retry = answer(&st, &args, error, Some(&schema), &Pool::default(), &[]).unwrap();
        assert_eq!(retry.reading, "the field input_path it said was required");
        let error = "Debe especificarse input_path o files.";
        let retry = answer(&st, &args, error, Some(&schema), &Pool::default(), &[]).unwrap();
        assert_eq!(retry.reading, "the field input_path it said was required");
        let error = "La ruta especificada no existe (input_path)";
        assert!(
            answer(&st, &args, error, Some(&schema), &Pool::default(), &[])
                .is_none_or(|r| !r.reading.contains("required")),
            "a path that was given and not found asks for no field"
        );
    }

    #[test]
    fn a_list_said_to_be_required_is_given_one_element_not_its_empty_default() {
        let schema = json!({"type": "object", "properties": {
            "operation": {"type": "string"},
            "files": {"type": "array", "items": {}, "default": []},
            "ids": {"type": "array", "items": {"type": "integer"}, "default": []}}});
        let st = step("pdf_manipulate", &[("operation", json!("merge"))]);
        let args = sent(&[("operation", json!("merge"), Provenance::Synthesized)]);
        let error = "La operación 'merge' requiere una lista de archivos en 'files'";
        let retry = answer(&st, &args, error, Some(&schema), &Pool::default(), &[]).unwrap();
        assert!(
            matches!(spec(&retry, "files"), ArgSpec::Auto(Value::Array(v)) if v.len() == 1 && v[0].is_string()),
            "{:?}",
            spec(&retry, "files")
        );
        let retry = answer(
            &st,
            &args,
            "ids is required",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(matches!(spec(&retry, "ids"), ArgSpec::Auto(v) if *v == json!([1])));
        // A list of mappings whose item schema names no type.
        let schema = json!({"type": "object", "properties": {
            "action": {"type": "string"},
            "overrides": {"type": "array", "default": [],
                "items": {"additionalProperties": {"type": "string"}}}}});
        let st = step("vault_init", &[("action", json!("migrate"))]);
        let args = sent(&[("action", json!("migrate"), Provenance::Synthesized)]);
        let retry = answer(
            &st,
            &args,
            "overrides is required",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(matches!(spec(&retry, "overrides"), ArgSpec::Auto(v) if *v == json!([{}])));
        // Items of an enum, or behind a reference, as the schema says.
        let refs = json!({"type": "object",
            "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}},
            "properties": {
                "modes": {"type": "array", "default": [], "items": {"$ref": "#/$defs/Mode"}},
                "kinds": {"type": "array", "default": [],
                    "items": {"type": "string", "enum": ["a", "b"]}}}});
        let run = step("run", &[]);
        let asked = |error: &str, name: &str| {
            answer(&run, &[], error, Some(&refs), &Pool::default(), &[])
                .map(|r| spec(&r, name).clone())
        };
        assert!(
            matches!(asked("modes is required", "modes"), Some(ArgSpec::Auto(v)) if v == json!(["fast"]))
        );
        assert!(
            matches!(asked("kinds is required", "kinds"), Some(ArgSpec::Auto(v)) if v == json!(["a"]))
        );
        // Only where an error asks for the list: a form's field keeps its
        // empty default, which the server may well take.
        let sub = &schema["properties"]["overrides"];
        assert_eq!(
            one_property(&schema, "overrides", sub, "vault_init"),
            Some(json!([]))
        );
    }

    #[test]
    fn a_call_that_said_it_changed_nothing_is_given_the_next_real_object() {
        let pool = store_pool(&[
            ("/j/vault", PathKind::Root),
            ("/j/vault/more.txt", PathKind::File),
            ("/j/vault/notes.txt", PathKind::File),
        ]);
        let st = step("git_add", &[("file", json!("/j/vault/more.txt"))]);
        let args = sent_vault_file("file", "more.txt");
        let retry = idle(&st, &args, &pool, &[], true).unwrap();
        assert!(
            matches!(spec(&retry, "file"), ArgSpec::Chosen(h) if h.value == json!("/j/vault/notes.txt"))
        );
        assert_eq!(
            retry.reading,
            "the next real file: the call said it changed nothing on the one sent"
        );
        // Nothing real was sent, or nothing else is there: no retry.
        let invented = sent(&[("file", json!("witness.txt"), Provenance::Synthesized)]);
        assert!(idle(&st, &invented, &pool, &[], true).is_none());
        let tried = [json!({"file": "/j/vault/notes.txt"})];
        assert!(idle(&st, &args, &pool, &tried, true).is_none());
        // A list of one file, beside the store's root: the next file, listed.
        let st = step(
            "git_add",
            &[
                ("repo_path", json!("/j/vault")),
                ("files", json!(["more.txt"])),
            ],
        );
        let mut args = sent(&[
            ("repo_path", json!("/j/vault"), Provenance::Store),
            ("files", json!(["more.txt"]), Provenance::Store),
        ]);
        args[1].object = Some(StoreObject {
            store: "vault".into(),
            object: "file/more.txt".into(),
        });
        let retry = idle(&st, &args, &pool, &[], true).unwrap();
        assert!(
            matches!(spec(&retry, "files"), ArgSpec::Chosen(h) if h.value == json!(["notes.txt"]))
        );
    }

    #[test]
    fn a_thing_the_plan_made_that_held_nothing_gives_way_to_one_listed_of_its_kind() {
        let mut pool = Pool::default();
        pool.absorb(
            "show_lists",
            1,
            &json!({"structuredContent": {"lists": [{"name": "groceries"}]}}),
        );
        pool.created("make_list", 2, "name", &json!("witness-make_list"), None);
        let st = step("export_copy", &[("list", json!("witness"))]);
        let made = sent(&[("list", json!("witness-make_list"), Provenance::Harvested)]);
        let retry = idle(&st, &made, &pool, &[], true).unwrap_or_else(|| panic!("no retry"));
        assert!(
            matches!(spec(&retry, "list"), ArgSpec::Chosen(h) if h.value == json!("groceries"))
        );
        // A parameter that names another kind is not sent a list.
        let other = step("export_copy", &[("project", json!("witness"))]);
        let sent_project = sent(&[("project", json!("witness-make_list"), Provenance::Harvested)]);
        assert!(idle(&other, &sent_project, &pool, &[], true).is_none());
    }

    #[test]
    fn a_call_told_it_acts_only_under_a_folder_is_given_a_path_inside_it() {
        assert_eq!(
            named_folder("Can only delete files under captures/. Got: /v/a.md"),
            Some("captures/")
        );
        assert_eq!(
            named_folder("Must be in 'inbox/notes/'"),
            Some("inbox/notes/")
        );
        assert_eq!(
            named_folder("Not allowed under /etc/"),
            None,
            "an absolute folder"
        );
        assert_eq!(
            named_folder("Nothing under captures"),
            None,
            "no folder's slash"
        );
        let mut pool = store_pool(&[
            ("/j/vault", PathKind::Root),
            ("/j/vault/Daily/a.md", PathKind::File),
            ("/j/vault/captures", PathKind::Dir),
        ]);
        pool.absorb(
            "vault_capture",
            4,
            &json!({"structuredContent": {"status": "success", "path": "captures/2026-x.md"}}),
        );
        let st = step("vault_capture", &[("path", json!("/j/vault/Daily/a.md"))]);
        let args = sent_vault_file("path", "Daily/a.md");
        let error = "Can only delete files under captures/. Got: /j/vault/Daily/a.md";
        let retry = answer(&st, &args, error, None, &pool, &[]).unwrap();
        assert_eq!(
            retry.reading,
            "path under captures/, where the error said the call acts"
        );
        assert!(
            matches!(spec(&retry, "path"), ArgSpec::Chosen(h) if h.value == json!("captures/2026-x.md"))
        );
        // Sent before: nothing else lies there.
        let tried = [json!({"path": "captures/2026-x.md"})];
        let retry = answer(&st, &args, error, None, &pool, &tried);
        assert!(retry.is_none_or(|r| !r.reading.contains("under captures/")));
        // A folder named in passing limits nothing.
        let passing = "Field 'title' is required (in captures/)";
        let retry = answer(&st, &args, passing, None, &pool, &[]);
        assert!(retry.is_none_or(|r| !r.reading.contains("under captures/")));
        // A store's root parameter is never the one replaced.
        let st = step("capture", &[("root", json!("/j/vault"))]);
        let args = sent(&[("root", json!("/j/vault"), Provenance::Store)]);
        let retry = answer(&st, &args, error, None, &pool, &[]);
        assert!(retry.is_none_or(|r| !r.reading.contains("under captures/")));
    }

    #[test]
    fn a_failed_call_given_an_optional_scope_is_tried_without_it() {
        let mut st = step("browse", &[]);
        st.args
            .push(("path".into(), ArgSpec::IfReal(json!("witness"))));
        let args = sent(&[("path", json!("/j/vault/a.md"), Provenance::Store)]);
        let retry = answer(
            &st,
            &args,
            "Something odd happened",
            None,
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert!(retry.step.args.is_empty());
        assert_eq!(retry.reading, "without the optional path it was given");
        assert!(
            answer(&st, &args, "odd", None, &Pool::default(), &[json!({})]).is_none(),
            "already tried without it"
        );
    }

    #[test]
    fn fields_a_validator_says_are_missing_are_given() {
        let zod = r#"Error: Invalid arguments for read_file: [
  {
    "expected": "string",
    "code": "invalid_type",
    "path": [ "path" ],
    "message": "Invalid input: expected string, received undefined"
  }
]"#;
        assert_eq!(
            missing_fields(zod),
            [("path".to_owned(), "string".to_owned())]
        );
        let pydantic = "1 validation error for readArguments\nnote_id\n  Field required [type=missing, input_value={}, input_type=dict]";
        assert_eq!(
            missing_fields(pydantic),
            [("note_id".to_owned(), "string".to_owned())]
        );
        let st = step("read_file", &[]);
        let retry = answer(&st, &[], zod, Some(&json!({})), &Pool::default(), &[]).unwrap();
        assert_eq!(spec(&retry, "path"), &ArgSpec::Auto(json!("witness")));
        assert!(missing_fields("Error: nothing [1, 2] here").is_empty());
    }

    #[test]
    fn a_validators_report_is_read_within_bounds() {
        let deep: Vec<Value> = std::iter::once(json!("edits"))
            .chain((0..50_000).map(|_| json!("a")))
            .collect();
        let issue = json!([{"expected": "string", "code": "invalid_type", "path": deep}]);
        assert!(
            wrong_types(&format!("Error: {issue}")).is_empty(),
            "too deep"
        );
        let many: Vec<Value> = (0..1000)
            .map(
                |i| json!({"expected": "string", "code": "invalid_type", "path": ["edits", i % 8]}),
            )
            .collect();
        assert!(wrong_types(&format!("Error: {}", Value::Array(many))).len() <= MAX_ISSUES);
        let dotted = format!(
            "{}\n  Field required [type=missing]",
            vec!["a"; 40_000].join(".")
        );
        assert!(wrong_types(&dotted).is_empty());
    }

    #[test]
    fn a_validator_teaches_the_shape_inside_a_parameter_a_level_at_a_time() {
        // A server that lists no schema: its validator says what edits are.
        let item = r#"Error: Invalid arguments for edit_file: [
  {
    "expected": "object",
    "code": "invalid_type",
    "path": [ "edits", 0 ],
    "message": "Invalid input: expected object, received string"
  }
]"#;
        let st = step("edit_file", &[]);
        let args = sent(&[
            ("path", json!("/j/a.md"), Provenance::Store),
            ("edits", json!(["witness"]), Provenance::Synthesized),
        ]);
        let retry = answer(&st, &args, item, Some(&json!({})), &Pool::default(), &[]).unwrap();
        assert_eq!(spec(&retry, "edits"), &ArgSpec::Auto(json!([{}])));
        assert!(
            retry.step.args.iter().all(|(n, _)| n != "path"),
            "path kept as planned"
        );
        let fields = r#"Error: [
  {"expected": "string", "code": "invalid_type", "path": ["edits", 0, "oldText"],
   "message": "Invalid input: expected string, received undefined"},
  {"expected": "string", "code": "invalid_type", "path": ["edits", 0, "newText"],
   "message": "Invalid input: expected string, received undefined"}
]"#;
        let args = sent(&[("edits", json!([{}]), Provenance::Synthesized)]);
        let retry = answer(&st, &args, fields, Some(&json!({})), &Pool::default(), &[]).unwrap();
        assert_eq!(
            spec(&retry, "edits"),
            &ArgSpec::Auto(json!([{"oldText": "witness-oldText", "newText": "witness-newText"}]))
        );
        // pydantic says the same in lines.
        let pydantic = "1 validation error for edit\nedits.0\n  Input should be a valid dictionary [type=dict_type, input_value='witness', input_type=str]";
        assert_eq!(
            wrong_types(pydantic),
            [WrongType {
                at: vec![json!("edits"), json!(0)],
                expected: "object".into()
            }]
        );
    }

    #[test]
    fn an_absolute_store_path_the_error_refuses_is_sent_relative() {
        let pool = store_pool(&[("/j/vault/Areas.base", PathKind::File)]);
        let st = step("read_file", &[("path", json!("/j/vault/Areas.base"))]);
        let args = sent(&[("path", json!("/j/vault/Areas.base"), Provenance::Store)]);
        let retry = answer(
            &st,
            &args,
            "Error executing tool read_file: not a vault path: '/j/vault/Areas.base'",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(spec(&retry, "path"), &ArgSpec::Pinned(json!("Areas.base")));
    }

    #[test]
    fn another_machines_path_the_error_refuses_is_sent_under_the_store() {
        let pool = store_pool(&[("/j/vault/Areas.base", PathKind::File)]);
        let example = "/Users/you/Documents/letter.md";
        let st = step("save_content", &[("filepath", json!(example))]);
        let args = sent(&[("filepath", json!(example), Provenance::Synthesized)]);
        let error =
            format!("Path '{example}' is outside allowed directories. Allowed roots: ['/j/vault']");
        // Under the roots it lists, or, when it lists none, the store's.
        for error in [error, format!("Path '{example}' is outside the vault")] {
            let retry = answer(&st, &args, &error, None, &pool, &[]).unwrap();
            assert_eq!(
                spec(&retry, "filepath"),
                &ArgSpec::Pinned(json!("/j/vault/letter.md")),
                "{error}"
            );
        }
    }

    #[test]
    fn a_file_of_the_extension_the_error_names_is_sent() {
        assert_eq!(
            extension_asked(
                "not a note: 'Areas.base' (a note path ends in .md)",
                "Areas.base"
            )
            .as_deref(),
            Some("md")
        );
        assert_eq!(
            extension_asked("Path must end with '.md': witness", "witness").as_deref(),
            Some("md")
        );
        assert_eq!(extension_asked("not found: a.md", "a.md"), None, "no cue");
        assert_eq!(
            extension_asked("must end with .md", "a.md"),
            None,
            "already one"
        );
        let pool = store_pool(&[
            ("/j/vault/Areas.base", PathKind::File),
            ("/j/vault/Areas/Garden.md", PathKind::File),
        ]);
        let st = step("delete_file", &[("path", json!("Areas.base"))]);
        let args = sent(&[("path", json!("Areas.base"), Provenance::Store)]);
        let retry = answer(
            &st,
            &args,
            "not a note: 'Areas.base' (a note path ends in .md)",
            None,
            &pool,
            &[],
        )
        .unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "path") else {
            panic!()
        };
        assert_eq!(
            h.value,
            json!("Areas/Garden.md"),
            "relative, as the one sent"
        );
    }

    #[test]
    fn an_id_not_found_is_followed_by_another_key_of_that_kind_never_a_table() {
        let mut pool = Pool::default();
        let at = |o: &str| StoreObject {
            store: "db".into(),
            object: o.into(),
        };
        pool.seed(
            vec![
                Harvested::seeded(
                    "name",
                    json!("task_links"),
                    at("sqlite_master/table:task_links"),
                    Some("tables"),
                ),
                Harvested::seeded("id", json!("7"), at("tasks/7"), Some("tasks")),
                Harvested::seeded("id", json!("8"), at("tasks/8"), Some("tasks")),
                Harvested::seeded("id", json!("3"), at("notes/3"), Some("notes")),
            ],
            Vec::new(),
        );
        let st = step("get_task", &[("task_id", json!("7"))]);
        let args = sent(&[("task_id", json!("7"), Provenance::Store)]);
        let retry = answer(&st, &args, "Task '7' not found", None, &pool, &[]).unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "task_id") else {
            panic!()
        };
        assert_eq!(h.value, json!("8"));
        let tried = [json!({"task_id": "8"})];
        assert!(answer(&st, &args, "Task '7' not found", None, &pool, &tried).is_none());
    }

    #[test]
    fn an_update_given_nothing_to_change_gets_its_optional_fields() {
        let schema = json!({"properties": {"memory_id": {"type": "string"},
            "content": {"type": "string", "default": null},
            "confidence": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}},
            "required": ["memory_id"]});
        let st = step("update_memory", &[("memory_id", json!("m1"))]);
        let args = sent(&[("memory_id", json!("m1"), Provenance::Harvested)]);
        let retry = answer(
            &st,
            &args,
            "Error executing tool update_memory: No fields supplied for update",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert_eq!(
            spec(&retry, "content"),
            &ArgSpec::Synthesized(json!("witness-update_memory"))
        );
        assert_eq!(spec(&retry, "confidence"), &ArgSpec::Synthesized(json!(1)));
        assert!(retry.step.args.iter().all(
            |(n, _)| n != "memory_id" || matches!(spec(&retry, "memory_id"), ArgSpec::Auto(_))
        ));
    }

    #[test]
    fn a_list_of_store_paths_the_error_quotes_is_sent_relative() {
        let pool = store_pool(&[("/j/vault/Daily/a.md", PathKind::File)]);
        let st = step("read_notes", &[("paths", json!(["/j/vault/Daily/a.md"]))]);
        let args = sent(&[("paths", json!(["/j/vault/Daily/a.md"]), Provenance::Store)]);
        let retry = answer(
            &st,
            &args,
            "/j/vault/Daily/a.md: Error - Parent directory does not exist: /j/vault/j/vault/Daily",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(
            spec(&retry, "paths"),
            &ArgSpec::Pinned(json!(["Daily/a.md"]))
        );
    }

    #[test]
    fn only_a_select_is_asked_for_when_the_text_says_so() {
        let mut st = step("create_view", &[]);
        st.args.push(("sql".into(), ArgSpec::Sql(SqlKind::Insert)));
        let args = sent(&[("sql", json!("INSERT ..."), Provenance::Synthesized)]);
        let retry = answer(
            &st,
            &args,
            "View definition must be a SELECT query",
            None,
            &Pool::default(),
            &[],
        )
        .unwrap();
        assert_eq!(spec(&retry, "sql"), &ArgSpec::Sql(SqlKind::Select));
    }

    #[test]
    fn an_existing_name_becomes_a_fresh_one_and_a_missing_object_the_next_real_one() {
        let pool = store_pool(&[
            ("/j/vault/a.md", PathKind::File),
            ("/j/vault/b.md", PathKind::File),
            ("/j/vault/notes", PathKind::Dir),
        ]);
        let mut st = step("save", &[("filepath", json!("/j/vault/a.md"))]);
        st.cues.tool = "save".into();
        let args = sent_vault_file("filepath", "a.md");
        let retry = answer(
            &st,
            &args,
            "File already exists: /j/vault/a.md",
            None,
            &pool,
            &[],
        )
        .unwrap();
        assert_eq!(
            spec(&retry, "filepath"),
            &ArgSpec::Fresh(json!("witness-save.md")),
            "of its kind, made under the store's root when sent"
        );
        assert!(
            answer(
                &st,
                &args,
                "File already exists: /j/vault/a.md",
                None,
                &Pool::default(),
                &[]
            )
            .is_none(),
            "no directory store: nowhere inside the stores to make it"
        );
        let not_found = |tried: &[Value]| {
            answer(
                &st,
                &args,
                "File not found: /j/vault/a.md",
                None,
                &pool,
                tried,
            )
        };
        // The same note in the form relative to the store first.
        let retry = not_found(&[]).unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "filepath") else {
            panic!()
        };
        assert_eq!(h.value, json!("a.md"));
        assert!(matches!(h.source, Source::Store(_)));
        // Then the next file (not the directory), in the form that was
        // tried last: relative.
        let relative = sent(&[("filepath", json!("a.md"), Provenance::Store)]);
        let tried = [
            json!({"filepath": "/j/vault/a.md"}),
            json!({"filepath": "a.md"}),
        ];
        let retry = answer(&st, &relative, "File not found: a.md", None, &pool, &tried).unwrap();
        let ArgSpec::Chosen(h) = spec(&retry, "filepath") else {
            panic!()
        };
        assert_eq!(h.value, json!("b.md"), "a file, not the directory");
        let tried = [
            json!({"filepath": "/j/vault/a.md"}),
            json!({"filepath": "a.md"}),
            json!({"filepath": "b.md"}),
        ];
        assert!(
            answer(&st, &relative, "File not found: a.md", None, &pool, &tried).is_none(),
            "every file was tried"
        );
    }
    #[test]
    fn fields_added_to_a_change_take_what_their_descriptions_show() {
        // Optional, `null` by default: the generator alone invents a word
        // for each; the description's example, a prose choice the planner
        // put in `examples`, and a real sheet are what the server takes.
        let schema = json!({"type": "object", "properties": {
            "file_path": {"type": "string"},
            "sheet_name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "font_name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null,
                "description": "Font family (e.g. \"Calibri\")."},
            "border_style": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null,
                "examples": ["thin"]}},
            "required": ["file_path"]});
        let step = step("format_cells", &[("file_path", json!("/j/book.xlsx"))]);
        let sent = sent(&[("file_path", json!("/j/book.xlsx"), Provenance::Store)]);
        let retry = answer(
            &step,
            &sent,
            "No formatting specified: pass at least one style parameter.",
            Some(&schema),
            &Pool::default(),
            &[],
        )
        .expect("a retry");
        assert_eq!(
            spec(&retry, "font_name"),
            &ArgSpec::Synthesized(json!("Calibri"))
        );
        assert_eq!(
            spec(&retry, "border_style"),
            &ArgSpec::Synthesized(json!("thin"))
        );
        assert!(
            matches!(spec(&retry, "sheet_name"), ArgSpec::Auto(v) if v == "witness-format_cells")
        );
    }
}
