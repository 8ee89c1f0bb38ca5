//! Argument synthesis from a tool's input schema and its descriptions.
//!
//! Synthesized values are the weakest evidence there is: a call that fails on
//! them proves nothing about the server (its checks become `untestable`). They
//! are deterministic, so reruns send the same bytes, and plain, so a reader
//! recognises them (`"witness"`, `1`, `true`).
//!
//! Before inventing, synthesis takes what the schema offers: `const`, the
//! first of an `enum`, `default`, the first of `examples`, a value quoted
//! in the property's description (`IANA timezone name (e.g.,
//! 'America/New_York')`), a format the description spells out (`HH:MM`),
//! then a `format`. What is still invented is plain, and a name (a
//! parameter that names or identifies a thing) carries the tool's name, so
//! two tools never share one invented name: `witness-create_directory`.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

/// Depth beyond which nested schemas are not followed (cyclic `$ref`s end here).
const MAX_DEPTH: usize = 8;

/// Most values one synthesis builds. A schema is server input: without a
/// total, 60 required properties that each `$ref` the root fan out as
/// 60^depth. Past the budget every value is `null` and nothing is descended.
const MAX_NODES: usize = 2_000;

/// Most bytes of strings (and object keys) one synthesis builds: a `default`
/// or `const` copied from the schema at every `$ref` must not multiply.
const MAX_BYTES: usize = 256 * 1024;

/// Longest string a `minLength` can ask for (a schema may ask for 10^11).
const MAX_STRING_LEN: usize = 4_096;

/// Most items a synthesized array holds, whatever `minItems` says.
const MAX_ITEMS: u64 = 4;

/// What is left of the output budget while one synthesis runs, and the
/// tool it runs for (whose name invented names carry).
struct Budget {
    nodes: usize,
    bytes: usize,
    tool: String,
}

impl Budget {
    fn new(tool: &str) -> Self {
        Budget {
            nodes: MAX_NODES,
            bytes: MAX_BYTES,
            tool: tool.to_owned(),
        }
    }

    /// Spends one node; `false` once the budget is gone.
    fn take(&mut self) -> bool {
        if self.nodes == 0 {
            return false;
        }
        self.nodes -= 1;
        true
    }

    fn spent(&self) -> bool {
        self.nodes == 0 || self.bytes == 0
    }

    /// Spends what a copy of `value` costs; `false` (spending nothing) when
    /// that is more than is left.
    fn afford(&mut self, value: &Value) -> bool {
        let (mut nodes, mut bytes) = (self.nodes, self.bytes);
        if !charge(value, &mut nodes, &mut bytes) {
            return false;
        }
        self.nodes = nodes;
        self.bytes = bytes;
        true
    }
}

/// Subtracts the size of `value` from `nodes` and `bytes`, stopping early
/// (`false`) when either would go below zero.
fn charge(value: &Value, nodes: &mut usize, bytes: &mut usize) -> bool {
    let Some(left) = nodes.checked_sub(1) else {
        return false;
    };
    *nodes = left;
    let mut pay = |n: usize| match bytes.checked_sub(n) {
        Some(left) => {
            *bytes = left;
            true
        }
        None => false,
    };
    match value {
        Value::String(s) => pay(s.len()),
        Value::Array(items) => items.iter().all(|v| charge(v, nodes, bytes)),
        Value::Object(map) => map.iter().all(|(k, v)| {
            bytes.checked_sub(k.len()).is_some_and(|left| {
                *bytes = left;
                charge(v, nodes, bytes)
            })
        }),
        _ => true,
    }
}

/// Values for the required properties of an object schema, in property order.
pub fn arguments(schema: Option<&Value>) -> Vec<(String, Value)> {
    arguments_for(schema, "")
}

/// [`arguments`] for tool `tool`: the names it invents carry the tool's name.
pub fn arguments_for(schema: Option<&Value>, tool: &str) -> Vec<(String, Value)> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    let Value::Object(object) = value_for(schema, schema, "", 0, &mut Budget::new(tool)) else {
        return Vec::new();
    };
    object.into_iter().collect()
}

/// `schema` with each top-level property that has no description given the
/// line the tool's own description writes about it: docstrings put what a
/// parameter is in the tool's text (`@param cell: Anchor cell (e.g.
/// "B2")`, `:param path: ...`, `path (str): ...` under `Args:`), and the
/// examples there are the server's own. `None` when nothing was added.
pub fn with_parameter_docs(schema: &Value, description: &str) -> Option<Value> {
    let properties = schema.get("properties")?.as_object()?;
    let mut added = serde_json::Map::new();
    for (name, sub) in properties {
        if sub
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty())
        {
            continue;
        }
        if let Some(doc) = parameter_doc(description, name) {
            added.insert(name.clone(), Value::String(doc));
        }
    }
    // A map the tool's text shows (`Set cells by coordinate, e.g. {"A1":
    // "Title", "B2": 42}`) is the example of the one free-form map among
    // its parameters: sent empty, such a map does nothing or is refused
    // (`updates must not be empty`).
    // Its own words (`Mapping of cell coordinate to value.`) are kept
    // before the example.
    let said_of = |name: &str, sub: &Value| -> String {
        added
            .get(name)
            .and_then(Value::as_str)
            .or_else(|| sub.get("description").and_then(Value::as_str))
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let free_maps: Vec<(String, String)> = properties
        .iter()
        .filter(|(_, sub)| {
            sub.as_object().map(type_of) == Some("object") && sub.get("properties").is_none()
        })
        .map(|(name, sub)| (name.clone(), said_of(name, sub)))
        .collect();
    // An example of the whole call (`{"file_path": ..., "updates": ...}`)
    // or of an answer is no example of the map: it names the tool's own
    // parameters.
    let of_the_map = |shown: &Value| {
        shown
            .as_object()
            .is_some_and(|m| !m.keys().any(|k| properties.contains_key(k)))
    };
    if let [(only, said)] = free_maps.as_slice()
        && json_example(said, "object").is_none()
        && let Some(shown) = json_example(description, "object").filter(of_the_map)
    {
        let doc = format!("{said} e.g. {shown}").trim().to_owned();
        added.insert(only.clone(), Value::String(doc));
    }
    if added.is_empty() {
        return None;
    }
    let mut out = schema.clone();
    let props = out.get_mut("properties")?.as_object_mut()?;
    for (name, doc) in added {
        if let Some(Value::Object(sub)) = props.get_mut(&name) {
            sub.insert("description".into(), doc);
        }
    }
    Some(out)
}

/// What a tool's description says about parameter `name` on a line of its
/// own: the rest of the line after `@param name:`, `:param name:`, `name:`,
/// `name (type):` or `name -`.
pub(crate) fn parameter_doc(description: &str, name: &str) -> Option<String> {
    description.lines().find_map(|line| {
        let line = line.trim().trim_start_matches(['-', '*', ' ']);
        let rest = line
            .strip_prefix("@param ")
            .or_else(|| line.strip_prefix(":param "))
            .unwrap_or(line);
        let after = rest.strip_prefix(name)?;
        // `name (str): ...`: the type in brackets is skipped.
        let after = match after.trim_start().strip_prefix('(') {
            Some(typed) => typed.split_once(')')?.1,
            None => after,
        };
        let text = after
            .trim_start()
            .strip_prefix(':')
            .or_else(|| after.trim_start().strip_prefix("- "))?
            .trim();
        (!text.is_empty()).then(|| text.to_owned())
    })
}

/// An invented name for tool `tool`: `witness-<tool>`, reduced to letters,
/// digits, `-` and `_` so it is usable as a file, branch or entity name.
pub fn fresh_name(tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    if tool.is_empty() {
        "witness".to_owned()
    } else {
        format!("witness-{tool}")
    }
}

/// The properties whose value the schema itself offers (`const`, an `enum`,
/// a `default`, `examples`, a value quoted in the description): choosing
/// them invents nothing.
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
                || example(sub).is_some()
                || quoted_example(description(sub)).is_some()
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// A value satisfying `schema` as far as a plain generator can, within
/// `budget` (once it is spent, `null`).
fn value_for(schema: &Value, root: &Value, name: &str, depth: usize, budget: &mut Budget) -> Value {
    // Charged before the depth test: the `null`s past the depth are output too.
    if !budget.take() || depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(object) = schema.as_object() else {
        return Value::String("witness".into());
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return match resolve_ref(root, reference) {
            Some(target) => value_for(target, root, name, depth + 1, budget),
            None => Value::Null,
        };
    }
    // A structure the description shows (`cells: List of {"cell": "A1",
    // "value": ...}`, `agg: e.g. {"amount": "sum"}`) is the server's own
    // example of what it parses; an empty default or `{}` says nothing.
    let structured = matches!(type_of(object), "object" | "array");
    let said = object.get("default").is_none_or(is_empty_structure)
        && object.get("const").is_none()
        && object.get("enum").is_none()
        && example(schema).is_none();
    if structured
        && said
        && let Some(shown) = json_example(description(schema), type_of(object))
        && budget.afford(&shown)
    {
        return shown;
    }
    let fixed = object.get("const").or_else(|| {
        object
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            .or_else(|| object.get("default"))
            .or_else(|| example(schema))
    });
    if let Some(fixed) = fixed {
        return if budget.afford(fixed) {
            fixed.clone()
        } else {
            Value::Null
        };
    }
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        let merged = Value::Object(merge_all_of(object, parts, root));
        return value_for(&merged, root, name, depth + 1, budget);
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(first) = object
            .get(combinator)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return value_for(first, root, name, depth + 1, budget);
        }
    }
    match type_of(object) {
        "object" => object_value(object, root, depth, budget),
        "array" => array_value(object, root, name, depth, budget),
        "integer" => json!(number_in_range(object).round() as i64),
        "number" => json!(number_in_range(object)),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => {
            let value = Value::String(string_for(object, name, &budget.tool));
            if budget.afford(&value) {
                value
            } else {
                Value::Null
            }
        }
    }
}

/// Every part of an `allOf` must hold at once: they are merged into one
/// schema, properties and required lists joined, the first word on any
/// other key kept.
fn merge_all_of(object: &Map<String, Value>, parts: &[Value], root: &Value) -> Map<String, Value> {
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
    merged
}

/// The schema's type: a list of types is its first non-null one, and a
/// schema with properties but no type is an object.
fn type_of(object: &Map<String, Value>) -> &str {
    match object.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if object.contains_key("properties") => "object",
        _ => "string",
    }
}

/// An object with a value for every required property, in property order.
fn object_value(
    object: &Map<String, Value>,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Value {
    let mut out = Map::new();
    let required: HashSet<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (key, sub) in properties {
            if budget.spent() {
                // Out of budget: the object stays short rather than
                // growing a `null` for every property left.
                break;
            }
            if required.contains(key.as_str()) {
                budget.bytes = budget.bytes.saturating_sub(key.len());
                let value = value_for(sub, root, key, depth + 1, budget);
                out.insert(key.clone(), value);
            }
        }
    }
    Value::Object(out)
}

/// `minItems` copies of one item (at least one, at most [`MAX_ITEMS`]),
/// varied when the items must be unique.
fn array_value(
    object: &Map<String, Value>,
    root: &Value,
    name: &str,
    depth: usize,
    budget: &mut Budget,
) -> Value {
    let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(1);
    let item = object
        .get("items")
        .map(|items| value_for(items, root, name, depth + 1, budget))
        .unwrap_or(Value::String("witness".into()));
    let unique = object.get("uniqueItems").and_then(Value::as_bool) == Some(true);
    let mut items = vec![item];
    for i in 1..min.clamp(1, MAX_ITEMS) {
        // Each copy costs what the first did: nested arrays of
        // arrays would otherwise grow as 4^depth.
        if !budget.afford(&items[0]) {
            break;
        }
        let next = if unique {
            varied(&items[0], i)
        } else {
            items[0].clone()
        };
        items.push(next);
    }
    Value::Array(items)
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

/// The first of a schema's `examples` (or its `example`).
fn example(schema: &Value) -> Option<&Value> {
    schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .or_else(|| schema.get("example"))
}

fn is_empty_structure(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// The JSON object or array a description writes, as a value of JSON type
/// `wanted` (`object` or `array`): the one that opens at the text's first
/// `{` or `[`, only, so that a fragment nested in an example that does not
/// parse is never taken for the whole. An object where a list is asked
/// for is taken as its one element (`List of {...}`). A placeholder for a
/// value (`...`, `…`, quoted or bare) is read as a string, and a trailing
/// `, ...` in a list or object as nothing more; an ellipsis inside a
/// string (`"see the docs..."`) spoils the example, which is then not
/// used.
pub fn json_example(text: &str, wanted: &str) -> Option<Value> {
    let text = text
        .replace(", ...]", "]")
        .replace(", ...}", "}")
        .replace(", …]", "]")
        .replace(", …}", "}")
        .replace("\"...\"", "\"witness\"")
        .replace("\"…\"", "\"witness\"")
        .replace("...", "\"witness\"")
        .replace('…', "\"witness\"");
    let at = text.find(['{', '['])?;
    let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    if is_empty_structure(&value) {
        return None;
    }
    match (wanted, value) {
        ("array", Value::Array(items)) => Some(Value::Array(items)),
        ("array", Value::Object(map)) => Some(Value::Array(vec![Value::Object(map)])),
        ("object", Value::Object(map)) => Some(Value::Object(map)),
        _ => None,
    }
}

/// Words of a string parameter's description that say its text is JSON.
const JSON_FORMS: [&str; 10] = [
    "json string",
    "json array",
    "json object",
    "json list",
    "json-encoded",
    "json encoded",
    "json-formatted",
    "json formatted",
    "as json",
    "in json",
];

/// For a string parameter whose text is JSON (its name says `json`:
/// `items_json`, `jsonData`; or its description: `a JSON array of ...`),
/// JSON text: the description's example when it shows one, else a list
/// of one word when the description or name speaks of a list, else an
/// object of one field. The audit's own word is no JSON, and a server
/// that parses it answers only `Expecting value: line 1 column 1`.
fn json_text(name: &str, described: &str) -> Option<String> {
    // A place to read or write JSON (`json_path`, `output_json`,
    // `jsonl_file`) is a path, which its own rules fill.
    const PLACE_WORDS: [&str; 10] = [
        "path",
        "file",
        "filename",
        "dir",
        "folder",
        "output",
        "out",
        "dest",
        "destination",
        "jsonl",
    ];
    if crate::plan::cues::words(name)
        .iter()
        .any(|w| PLACE_WORDS.contains(&w.as_str()))
    {
        return None;
    }
    let flat: String = name
        .to_ascii_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let lowered = described.to_lowercase();
    if !flat.contains("json") && !JSON_FORMS.iter().any(|f| lowered.contains(f)) {
        return None;
    }
    let wanted = match described.find(['{', '[']) {
        Some(at) if described[at..].starts_with('[') => "array",
        _ => "object",
    };
    let shown = json_example(described, wanted);
    if let Some(shown) = shown {
        return Some(shown.to_string());
    }
    let listed = ["array", "list", "items"]
        .iter()
        .any(|w| lowered.contains(w) || flat.contains(w));
    Some(if listed {
        r#"["witness"]"#.to_owned()
    } else {
        r#"{"name": "witness"}"#.to_owned()
    })
}

fn description(schema: &Value) -> &str {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// A value quoted in a description: the first one after `e.g.`, `for
/// example`, `such as` or `like` when there is one, else the first quoted
/// at all (`'local'` in "local branches ('local')"). A quote opens after a
/// space or bracket and closes before one (or punctuation), so an
/// apostrophe inside a word never opens one.
pub fn quoted_example(text: &str) -> Option<String> {
    let quoted: Vec<(usize, String)> = quoted_values(text)
        .into_iter()
        .filter(|(at, _)| !forbidden_at(text, *at))
        .collect();
    let lowered = text.to_lowercase();
    let cue = ["e.g.", "for example", "such as", "like "]
        .iter()
        .filter_map(|c| lowered.find(c))
        .min();
    cue.and_then(|at| quoted.iter().find(|(pos, _)| *pos > at))
        .or_else(|| quoted.first())
        .map(|(_, value)| unquoted(value).to_owned())
}

/// A value with the quotes of a second layer taken off: a description's
/// ``` `"drafts"` ``` (code around a string) offers `drafts`.
fn unquoted(value: &str) -> &str {
    let mut value = value;
    while value.len() >= 2 {
        let inner = ['"', '\'', '`']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q));
        match inner {
            Some(inner) if !inner.is_empty() => value = inner,
            _ => break,
        }
    }
    value
}

/// Whether the clause before byte `at` of `text` forbids what is quoted
/// there (`Must not start with "-"`, `never '..'`, `cannot be "root"`): a
/// value the prose rules out is never the value sent.
fn forbidden_at(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or("").to_lowercase();
    // The clause: from the last sentence or list break before the quote.
    let start = [". ", "; ", "\n", ", or ", " or "]
        .iter()
        .filter_map(|b| before.rfind(b).map(|i| i + b.len()))
        .max()
        .unwrap_or(0);
    let clause = format!(" {} ", before.get(start..).unwrap_or(""));
    [
        " not ",
        " never ",
        " no ",
        "n't ",
        " cannot ",
        " avoid ",
        " except ",
        " without ",
        " forbidden",
        " disallowed",
        " reserved",
        " invalid",
    ]
    .iter()
    .any(|w| clause.contains(w))
}

/// Every quoted value in `text`, with the byte offset of its opening quote.
fn quoted_values(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let opens = matches!(c, '\'' | '"' | '`')
            && (i == 0 || matches!(chars[i - 1].1, ' ' | '(' | '[' | '{' | ',' | ':' | '='));
        if !opens {
            i += 1;
            continue;
        }
        let close = (i + 1..chars.len()).find(|&j| {
            chars[j].1 == c && chars.get(j + 1).is_none_or(|(_, n)| !n.is_alphanumeric())
        });
        match close {
            Some(j) => {
                let value: String = chars[i + 1..j].iter().map(|(_, c)| *c).collect();
                if !value.trim().is_empty() && value.chars().count() <= 80 && !value.contains('\n')
                {
                    out.push((at, value));
                }
                i = j + 1;
            }
            None => i += 1,
        }
    }
    out
}

/// A value in the format a description spells out (`HH:MM`, `YYYY-MM-DD`,
/// `ISO 8601`), longest spelling first.
fn templated(text: &str) -> Option<&'static str> {
    const TEMPLATES: [(&str, &str); 6] = [
        ("YYYY-MM-DDTHH:MM:SS", "2026-01-01T12:00:00"),
        ("YYYY-MM-DD", "2026-01-01"),
        ("HH:MM:SS", "12:00:00"),
        ("HH:MM", "12:00"),
        ("ISO 8601", "2026-01-01T12:00:00Z"),
        ("ISO-8601", "2026-01-01T12:00:00Z"),
    ];
    TEMPLATES
        .iter()
        .find(|(spelled, _)| text.contains(spelled))
        .map(|(_, value)| *value)
}

/// Whether a parameter names or identifies a thing (`name`, `branch_name`,
/// `entityName`, `id`, `key`, `path`): an invented value for it is a name.
fn names_a_thing(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    matches!(lowered.as_str(), "id" | "name" | "key" | "path" | "title")
        || lowered.ends_with("name")
        || lowered.ends_with("_id")
        || name.ends_with("Id")
        || name.ends_with("ID")
}

/// Whether a tool's name says it changes what exists (`update_note`,
/// `edit_file`, `replace_text`).
fn rewrites_content(tool: &str) -> bool {
    super::cues::words(tool).iter().any(|w| {
        [
            "update",
            "edit",
            "modify",
            "replace",
            "overwrite",
            "change",
            "patch",
        ]
        .contains(&w.as_str())
    })
}

/// Whether a (lowercased) property carries a thing's content.
pub(crate) fn is_content(lowered: &str) -> bool {
    let flat: String = lowered
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    ["content", "contents", "text", "body", "newcontent"].contains(&flat.as_str())
}

/// A string for property `name`: the first candidate the property's own
/// constraints admit (`pattern`, `format`, lengths, `enum`), tried in order
/// — a value its description offers, a format it spells out, its
/// `format`'s plain value, an invented one — then a few plain shapes; the
/// first candidate when none is admitted (the call then shows the server's
/// own rule).
fn string_for(object: &Map<String, Value>, name: &str, tool: &str) -> String {
    let candidates = string_candidates(object, name, tool);
    let admitted = admits(object);
    candidates
        .iter()
        .find(|c| admitted(c))
        .or(candidates.first())
        .cloned()
        .unwrap_or_else(|| "witness".to_owned())
}

/// Whether a string meets `object`'s own constraints. A schema that does
/// not compile admits everything: the server then judges.
fn admits(object: &Map<String, Value>) -> impl Fn(&str) -> bool {
    let mut own = Map::new();
    for key in [
        "pattern",
        "format",
        "minLength",
        "maxLength",
        "enum",
        "const",
    ] {
        if let Some(v) = object.get(key) {
            own.insert(key.to_owned(), v.clone());
        }
    }
    let validator = (!own.is_empty())
        .then(|| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(&Value::Object(own))
                .ok()
        })
        .flatten();
    move |value: &str| {
        validator
            .as_ref()
            .is_none_or(|v| v.is_valid(&Value::String(value.to_owned())))
    }
}

/// Plain shapes tried when no described, formatted or invented value meets
/// a property's pattern: a word, digits, a date, a UUID, a path segment.
const PLAIN_SHAPES: [&str; 14] = [
    "witness",
    "Witness",
    "WITNESS",
    "witness_1",
    "witness-1",
    "w1",
    "1",
    "1234",
    "a",
    "A1",
    "2026-01-01",
    "00000000-0000-4000-8000-000000000000",
    "witness/1",
    "witness.txt",
];

fn string_candidates(object: &Map<String, Value>, name: &str, tool: &str) -> Vec<String> {
    let mut out = Vec::new();
    let described = object
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    out.extend(json_text(name, described));
    out.extend(quoted_example(described));
    out.extend(templated(described).map(str::to_owned));
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
    out.extend(by_format.map(str::to_owned));
    let lowered = name.to_ascii_lowercase();
    let flat: String = lowered
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let invented = if lowered.contains("url") || lowered.contains("uri") {
        "https://example.invalid/witness".to_string()
    } else if flat.contains("base64") || flat.ends_with("b64") {
        // `witness`, encoded: a base64 parameter refuses the bare word.
        "d2l0bmVzcw==".to_string()
    } else if flat.contains("color") || flat.contains("colour") {
        // A colour is written as hex digits (`FF0000`) by spreadsheet,
        // document and drawing libraries alike.
        "FF0000".to_string()
    } else if flat == "cellrange" || flat == "cellsrange" || (flat == "range" && tool_cells(tool)) {
        "A1:B2".to_string()
    } else if flat == "cell" || flat == "cellref" || flat == "cellreference" {
        "A1".to_string()
    } else if flat.contains("date")
        || flat.contains("deadline")
        || flat == "due"
        || flat.starts_with("due")
    {
        "2026-01-01".to_string()
    } else if (flat.starts_with("new")
        && ["text", "str", "content", "value", "line"]
            .iter()
            .any(|w| flat.contains(w)))
        || flat.contains("replace")
    {
        // What replaces something differs from what it replaces (`oldText`
        // is `witness` too), so the edit changes the bytes.
        format!("replaced by {}", fresh_name(tool))
    } else if names_a_thing(name) {
        fresh_name(tool)
    } else if rewrites_content(tool) && is_content(&lowered) {
        // The content an update writes is its own, and does not begin with
        // what a plain write leaves (`witness`): else the update could
        // write back the very bytes an earlier write left, or look like an
        // append to them, and an overwrite would never show.
        format!("updated by {}", fresh_name(tool))
    } else {
        "witness".to_string()
    };
    out.push(invented);
    out.extend(PLAIN_SHAPES.iter().map(|s| (*s).to_owned()));
    let min = object
        .get("minLength")
        .and_then(Value::as_u64)
        .map_or(0, |m| usize::try_from(m).unwrap_or(usize::MAX))
        .min(MAX_STRING_LEN);
    let max = object
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
    // Lengths shape the invented values only: a value the schema or its
    // description offers is kept as offered.
    let offered = out.len() - PLAIN_SHAPES.len() - 1;
    for value in out.iter_mut().skip(offered) {
        if value.len() < min {
            let pad = min - value.len();
            value.extend(std::iter::repeat_n('x', pad));
        }
        if let Some(max) = max {
            // Every character here is ASCII, so any length is a char boundary.
            value.truncate(max);
        }
    }
    out
}

/// Whether a tool's name speaks of cells, sheets or workbooks, where a
/// bare `range` is a range of cells.
fn tool_cells(tool: &str) -> bool {
    let lowered = tool.to_ascii_lowercase();
    ["cell", "sheet", "excel", "xlsx", "workbook", "spreadsheet"]
        .iter()
        .any(|w| lowered.contains(w))
}

/// The `i`-th of several items that must differ (`uniqueItems`).
fn varied(item: &Value, i: u64) -> Value {
    if i == 0 {
        return item.clone();
    }
    match item {
        Value::String(s) => Value::String(format!("{s}-{}", i + 1)),
        Value::Number(n) => match n.as_i64() {
            // Near i64::MAX (a `minimum` of 1e30 saturates there) step down.
            Some(v) => {
                let step = i64::try_from(i).unwrap_or(i64::MAX);
                json!(v.checked_add(step).unwrap_or(v.saturating_sub(step)))
            }
            None => json!(n.as_f64().unwrap_or(0.0) + i as f64),
        },
        Value::Bool(b) => Value::Bool(if i == 1 { !b } else { *b }),
        other => other.clone(),
    }
}

/// The subschema a `$ref` names within the tool's own schema document, or
/// `None`. A reference is followed only inside the document: a JSON pointer
/// (`#/$defs/a`, percent-encoded or not), a plain-name fragment (`#addr`,
/// the `$anchor` it names), or a URI that is the `$id` of one of the
/// document's own subschemas, with either fragment after it. Anything else
/// (another document, a network address) is left unresolved and never
/// fetched (SEP-2106): the schema is server input.
fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let (base, fragment) = match reference.split_once('#') {
        Some((base, fragment)) => (base, fragment),
        None => (reference, ""),
    };
    let resource = if base.is_empty() || root.get("$id").and_then(Value::as_str) == Some(base) {
        root
    } else {
        find_in(root, 0, &|node| {
            node.get("$id").and_then(Value::as_str) == Some(base)
        })?
    };
    if fragment.is_empty() {
        return Some(resource);
    }
    if fragment.starts_with('/') {
        let pointer = percent_decoded(fragment)?;
        return resource.pointer(&pointer);
    }
    find_in(resource, 0, &|node| {
        node.get("$anchor").and_then(Value::as_str) == Some(fragment)
    })
}

/// The first subschema of `node` (itself included, depth first, in
/// document order) that `wanted` accepts, within [`MAX_DEPTH`] levels of
/// JSON nesting twice over (a `$defs` entry is two levels below its parent).
fn find_in<'a>(
    node: &'a Value,
    depth: usize,
    wanted: &dyn Fn(&Value) -> bool,
) -> Option<&'a Value> {
    if depth > 2 * MAX_DEPTH {
        return None;
    }
    match node {
        Value::Object(map) => {
            if wanted(node) {
                return Some(node);
            }
            map.values().find_map(|v| find_in(v, depth + 1, wanted))
        }
        Value::Array(items) => items.iter().find_map(|v| find_in(v, depth + 1, wanted)),
        _ => None,
    }
}

/// A URI fragment's percent-escapes decoded (`%24defs` is `$defs`); `None`
/// when an escape is broken or the result is not UTF-8.
fn percent_decoded(fragment: &str) -> Option<String> {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_structure_the_description_shows_is_sent_as_shown() {
        assert_eq!(
            json_example(
                r#"List of {"cell": "A1", "value": ...} or {"cell": "B1", "formula": "=A1*2"}."#,
                "array"
            ),
            Some(json!([{"cell": "A1", "value": "witness"}]))
        );
        assert_eq!(
            json_example(
                r#"Mapping of column name to function, e.g. {"amount": "sum"}."#,
                "object"
            ),
            Some(json!({"amount": "sum"}))
        );
        assert_eq!(
            json_example(r#"Rows, e.g. [{"id": 1}, ...]"#, "array"),
            Some(json!([{"id": 1}]))
        );
        // Braces that are no JSON, an empty one, a list where a mapping is asked.
        assert_eq!(
            json_example("Format: [{id, text, metadata}, ...]", "array"),
            None
        );
        assert_eq!(json_example("Defaults to {} when left out", "object"), None);
        assert_eq!(json_example(r#"e.g. ["a", "b"]"#, "object"), None);
        // A nested object is never taken for an example that did not parse.
        assert_eq!(
            json_example(
                r#"e.g. {"where": {"status": "open"}, "note": "see docs..."}"#,
                "object"
            ),
            None
        );
        assert_eq!(
            json_example(r#"List of {"name": "..."}"#, "array"),
            Some(json!([{"name": "witness"}]))
        );
        let schema = json!({"type": "object", "properties": {
            "cells": {"type": "array", "items": {"type": "object", "additionalProperties": true},
                "description": "List of {\"cell\": \"A1\", \"value\": ...}"},
            "fields": {"type": "object", "default": {},
                "description": "e.g. {\"name\": \"Ada\"}"},
            "style": {"type": "object", "default": {"bold": true},
                "description": "e.g. {\"italic\": true}"}},
            "required": ["cells", "fields", "style"]});
        let args: std::collections::BTreeMap<String, Value> =
            arguments_for(Some(&schema), "write_cells")
                .into_iter()
                .collect();
        assert_eq!(args["cells"], json!([{"cell": "A1", "value": "witness"}]));
        assert_eq!(
            args["fields"],
            json!({"name": "Ada"}),
            "an empty default says nothing"
        );
        assert_eq!(
            args["style"],
            json!({"bold": true}),
            "a default that says something stays"
        );
    }

    #[test]
    fn a_string_that_holds_json_is_sent_json_text() {
        let schema = json!({"type": "object", "properties": {
            "items_json": {"type": "string"},
            "analysis": {"type": "string", "description": "The analysis as a JSON object"},
            "rows": {"type": "string",
                "description": "JSON array of rows, e.g. [{\"id\": 1}, ...]"},
            "title": {"type": "string", "description": "Plain title, not JSON"}},
            "required": ["items_json", "analysis", "rows", "title"]});
        let args: std::collections::BTreeMap<String, Value> =
            arguments_for(Some(&schema), "save_analysis")
                .into_iter()
                .collect();
        let parsed = |k: &str| serde_json::from_str::<Value>(args[k].as_str().unwrap_or("")).ok();
        assert_eq!(parsed("items_json"), Some(json!(["witness"])));
        assert_eq!(parsed("analysis"), Some(json!({"name": "witness"})));
        assert_eq!(parsed("rows"), Some(json!([{"id": 1}])));
        assert_eq!(parsed("title"), None, "a mention of JSON is no form");
        let places = json!({"type": "object", "properties": {
            "json_path": {"type": "string", "description": "Where to save as JSON"},
            "output_json": {"type": "string"}},
            "required": ["json_path", "output_json"]});
        for (name, value) in arguments_for(Some(&places), "export") {
            assert!(
                serde_json::from_str::<Value>(value.as_str().unwrap_or("")).is_err(),
                "{name} is a place, not JSON text: {value}"
            );
        }
    }

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
    fn an_update_writes_content_of_its_own_and_a_write_plain_content() {
        let schema = json!({"type": "object", "properties": {"content": {"type": "string"}},
            "required": ["content"]});
        let content = |tool: &str| arguments_for(Some(&schema), tool)[0].1.clone();
        assert_eq!(
            content("memory_bank_update"),
            json!("updated by witness-memory_bank_update")
        );
        assert_eq!(content("editNote"), json!("updated by witness-editNote"));
        assert_eq!(content("memory_bank_write"), json!("witness"));
    }

    #[test]
    fn a_value_the_description_forbids_is_never_the_value_and_patterns_are_met() {
        let schema = serde_json::json!({"type": "object", "required": ["flag", "code", "id"],
        "properties": {
            "flag": {"type": "string", "description": "A word. Must not start with \"-\"."},
            "code": {"type": "string", "pattern": "^[0-9]{4}$"},
            "id": {"type": "string", "format": "uuid"},
        }});
        let args = arguments(Some(&schema));
        let value = |name: &str| {
            args.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_ne!(value("flag"), serde_json::json!("-"));
        assert_eq!(value("code"), serde_json::json!("1234"));
        assert_eq!(
            value("id"),
            serde_json::json!("00000000-0000-4000-8000-000000000000")
        );
        // A quote the prose offers is still taken; one it rules out is not.
        assert_eq!(
            quoted_example("The branch, e.g. 'main'").as_deref(),
            Some("main")
        );
        assert_eq!(quoted_example("Never use '..' in a path"), None);
        // A docstring's parameter lines describe parameters that have none.
        let schema = json!({"properties": {"cell": {"type": "string"},
            "path": {"type": "string", "description": "Where"}}});
        let doc = "Insert an image.\n\n    @param cell: Anchor cell (e.g. \"B2\").\n    @param path: ignored";
        let described = with_parameter_docs(&schema, doc).unwrap_or_default();
        assert_eq!(
            described["properties"]["cell"]["description"],
            "Anchor cell (e.g. \"B2\")."
        );
        assert_eq!(described["properties"]["path"]["description"], "Where");
        assert_eq!(
            parameter_doc("Args:\n  count (int): How many, e.g. '3'", "count").as_deref(),
            Some("How many, e.g. '3'")
        );
        assert_eq!(parameter_doc("cellar: no", "cell"), None);
        // What replaces differs from what is replaced; base64 is base64.
        let edit = json!({"properties": {"oldText": {"type": "string"},
            "newText": {"type": "string"}, "content_base64": {"type": "string"},
            "due": {"type": "string"}},
            "required": ["oldText", "newText", "content_base64", "due"]});
        let args: std::collections::BTreeMap<String, Value> =
            arguments_for(Some(&edit), "edit_file")
                .into_iter()
                .collect();
        assert_ne!(args["oldText"], args["newText"]);
        assert_eq!(args["content_base64"], json!("d2l0bmVzcw=="));
        assert_eq!(args["due"], json!("2026-01-01"));
        // A colour is hex; a cell and a range of cells are A1 references.
        let cells = json!({"properties": {"font_color": {"type": "string"},
            "cell_range": {"type": "string"}, "cell": {"type": "string"},
            "range": {"type": "string"}},
            "required": ["font_color", "cell_range", "cell", "range"]});
        let args: std::collections::BTreeMap<String, Value> =
            arguments_for(Some(&cells), "format_cells")
                .into_iter()
                .collect();
        assert_eq!(args["font_color"], json!("FF0000"));
        assert_eq!(args["cell_range"], json!("A1:B2"));
        assert_eq!(args["cell"], json!("A1"));
        assert_eq!(args["range"], json!("A1:B2"));
        // A range elsewhere is not a range of cells.
        let dates = json!({"properties": {"range": {"type": "string"}}, "required": ["range"]});
        let args = arguments_for(Some(&dates), "list_events");
        assert_eq!(args[0].1, json!("witness"));
        // Code around a string offers the string.
        assert_eq!(
            quoted_example("Folder to move, such as `\"drafts\"`.").as_deref(),
            Some("drafts")
        );
        assert_eq!(
            quoted_example("Cannot be 'root'; for example 'alice'").as_deref(),
            Some("alice")
        );
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

    /// Serialized size of what `arguments` built, and how long it took.
    fn synthesize(schema: &Value) -> (usize, std::time::Duration) {
        let started = std::time::Instant::now();
        let args: Map<String, Value> = arguments(Some(schema)).into_iter().collect();
        let elapsed = started.elapsed();
        let size = serde_json::to_vec(&Value::Object(args))
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        (size, elapsed)
    }

    #[test]
    fn a_huge_min_length_is_clamped() {
        let schema = json!({"type": "object", "required": ["s"],
            "properties": {"s": {"type": "string", "minLength": 100_000_000_000u64}}});
        let (size, elapsed) = synthesize(&schema);
        assert!(size < 2 * MAX_STRING_LEN, "{size} bytes");
        assert!(elapsed.as_secs() < 5, "{elapsed:?}");
        let args: Map<String, Value> = arguments(Some(&schema)).into_iter().collect();
        assert_eq!(args["s"].as_str().map(str::len), Some(MAX_STRING_LEN));
    }

    #[test]
    fn sixty_required_self_references_stay_within_the_node_budget() {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for i in 0..60 {
            properties.insert(format!("p{i}"), json!({"$ref": "#"}));
            required.push(json!(format!("p{i}")));
        }
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let (size, elapsed) = synthesize(&schema);
        assert!(size < 64 * 1024, "{size} bytes");
        assert!(elapsed.as_secs() < 5, "{elapsed:?}");
    }

    #[test]
    fn a_huge_default_behind_fanning_refs_is_not_copied_each_time() {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for i in 0..60 {
            properties.insert(format!("p{i}"), json!({"$ref": "#/$defs/big"}));
            properties.insert(format!("q{i}"), json!({"$ref": "#"}));
            required.push(json!(format!("p{i}")));
            required.push(json!(format!("q{i}")));
        }
        let big = "d".repeat(100_000);
        let schema = json!({"type": "object", "properties": properties, "required": required,
            "$defs": {"big": {"type": "string", "default": big}}});
        let (size, elapsed) = synthesize(&schema);
        assert!(size < MAX_BYTES + 64 * 1024, "{size} bytes");
        assert!(elapsed.as_secs() < 5, "{elapsed:?}");
    }

    #[test]
    fn nested_arrays_do_not_multiply_past_the_budget() {
        let schema = json!({"type": "object", "required": ["a"],
            "properties": {"a": {"$ref": "#/$defs/arr"}},
            "$defs": {"arr": {"type": "array", "minItems": 4, "items": {"$ref": "#/$defs/arr"}}}});
        let (size, elapsed) = synthesize(&schema);
        assert!(size < 64 * 1024, "{size} bytes");
        assert!(elapsed.as_secs() < 5, "{elapsed:?}");
    }

    #[test]
    fn unique_integers_near_the_top_of_i64_do_not_overflow() {
        let schema = json!({"type": "object", "required": ["set"],
            "properties": {"set": {"type": "array", "minItems": 2, "uniqueItems": true,
                "items": {"type": "integer", "minimum": 1e30}}}});
        let args: Map<String, Value> = arguments(Some(&schema)).into_iter().collect();
        let set = args["set"].as_array().cloned().unwrap_or_default();
        assert_eq!(set.len(), 2);
        assert_ne!(set[0], set[1], "uniqueItems asks for distinct items");
        assert_eq!(set[0], json!(i64::MAX));
    }

    #[test]
    fn references_resolve_within_the_document_by_pointer_anchor_and_id() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://tools.example/route",
            "type": "object",
            "properties": {
                "home": {"$ref": "#address"},
                "work": {"$ref": "#/%24defs/address"},
                "unit": {"$ref": "https://tools.example/unit"},
                "unit_size": {"$ref": "https://tools.example/unit#/properties/size"},
                "city": {"$ref": "https://tools.example/route#/$defs/address/properties/city"}
            },
            "required": ["home", "work", "unit", "unit_size", "city"],
            "additionalProperties": false,
            "$defs": {
                "address": {"$anchor": "address", "type": "object",
                    "properties": {"city": {"type": "string", "default": "Lyon"}},
                    "required": ["city"]},
                "unit": {"$id": "https://tools.example/unit", "type": "object",
                    "properties": {"size": {"type": "integer", "minimum": 3}},
                    "required": ["size"]}
            }
        });
        let args: Map<String, Value> = arguments(Some(&schema)).into_iter().collect();
        assert_eq!(args["home"], json!({"city": "Lyon"}));
        assert_eq!(args["work"], json!({"city": "Lyon"}));
        assert_eq!(args["unit"], json!({"size": 3}));
        assert_eq!(args["unit_size"], json!(3));
        assert_eq!(args["city"], json!("Lyon"));
    }

    #[test]
    fn a_reference_outside_the_document_is_never_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "profile": {"$ref": "http://127.0.0.1:9/canary/profile-schema.json"},
                "other": {"$ref": "other.json#/$defs/x"},
                "missing": {"$ref": "#nowhere"},
                "broken": {"$ref": "#/%zz"}
            },
            "required": ["profile", "other", "missing", "broken"]
        });
        let args: Map<String, Value> = arguments(Some(&schema)).into_iter().collect();
        for name in ["profile", "other", "missing", "broken"] {
            assert_eq!(args[name], Value::Null, "{name}");
        }
    }

    #[test]
    fn the_one_free_map_is_sent_the_map_the_tools_text_shows() {
        let schema = json!({"type": "object", "properties": {
            "file_path": {"type": "string"},
            "updates": {"type": "object", "additionalProperties": {"type": "string"}},
            "sheet": {"type": "string"}},
            "required": ["file_path", "updates"]});
        let text = r#"Set individual cells by coordinate, e.g. {"A1": "Title", "B2": 42}.

        @param updates: Mapping of cell coordinate to value."#;
        let described = with_parameter_docs(&schema, text).unwrap_or_else(|| panic!("no docs"));
        let args = arguments_for(Some(&described), "update_cells");
        let updates = args
            .iter()
            .find(|(k, _)| k == "updates")
            .map(|(_, v)| v.clone());
        assert_eq!(updates, Some(json!({"A1": "Title", "B2": 42})));
        // Two free maps: whose example it is cannot be told.
        let two = json!({"type": "object", "properties": {
            "updates": {"type": "object"}, "styles": {"type": "object"}},
            "required": ["updates", "styles"]});
        let whole = r#"Example: {"file_path": "a.xlsx", "updates": {"A1": 1}}"#;
        assert!(
            with_parameter_docs(&schema, whole).is_none(),
            "a whole call"
        );
        let shown_only = r#"Set cells, e.g. {"A1": "Title"}."#;
        assert!(with_parameter_docs(&two, shown_only).is_none());
    }
}
