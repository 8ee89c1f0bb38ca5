//! Paths into a tool result: what a plan's `{ from = "call 2", path = "json.id" }`
//! reads, and the view of a result that both plan paths and the harvest see.
//!
//! The view has up to three roots: `structured` (the result's
//! `structuredContent`), `text` (its first text content) and `json` (that
//! text parsed as JSON); a path follows `.key` and `[index]` steps from one.

use serde_json::{Map, Value};

/// A step of a result path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

pub fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && steps.is_empty() {
            return Err("must start with structured, text or json".into());
        }
        if !key.is_empty() {
            steps.push(Step::Key(key.to_owned()));
        }
        while let Some(stripped) = rest.strip_prefix('[') {
            let end = stripped.find(']').ok_or("unclosed [")?;
            let index = stripped[..end]
                .parse()
                .map_err(|_| format!("{:?} is not an index", &stripped[..end]))?;
            steps.push(Step::Index(index));
            rest = &stripped[end + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected {rest:?}"));
        }
    }
    match steps.first() {
        Some(Step::Key(root)) if ["structured", "text", "json"].contains(&root.as_str()) => {
            Ok(steps)
        }
        _ => Err("must start with structured, text or json".into()),
    }
}

/// The view of a tool result that plan paths read.
pub fn result_view(result: &Value) -> Value {
    let mut view = Map::new();
    if let Some(structured) = result.get("structuredContent") {
        view.insert("structured".into(), structured.clone());
    }
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .find(|i| i.get("type").and_then(Value::as_str) == Some("text"))
        })
        .and_then(|i| i.get("text"))
        .and_then(Value::as_str);
    if let Some(text) = text {
        view.insert("text".into(), Value::String(text.to_owned()));
        if let Ok(json) = serde_json::from_str::<Value>(text) {
            view.insert("json".into(), json);
        }
    }
    Value::Object(view)
}

/// Follows `path` into `view`.
pub fn lookup(view: &Value, path: &str) -> Option<Value> {
    let steps = parse_path(path).ok()?;
    let mut here = view;
    for step in &steps {
        here = match step {
            Step::Key(k) => here.get(k)?,
            Step::Index(i) => here.get(*i)?,
        };
    }
    Some(here.clone())
}
