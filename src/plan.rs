//! Plans: which tools to call, in what order, with which arguments.
//!
//! A plan file (TOML) lists calls with literal arguments or arguments taken
//! from an earlier result:
//!
//! ```toml
//! [[call]]
//! tool = "save_note"
//! args = { id = "draft", body = "hello" }
//!
//! [[call]]
//! tool = "mint_api_key"
//! args = { grant_id = "grant_0001" }
//!
//! [[call]]
//! tool = "revoke_api_key"
//! args.key_id = { from = "call 2", path = "json.id" }
//! ```
//!
//! An inline table with exactly the keys `from` and `path` is a reference; any
//! other table is a literal object. `path` is read against a view of the
//! earlier result: `structured` (its `structuredContent`), `text` (its first
//! text content) and `json` (that text parsed as JSON), followed by `.key` and
//! `[index]` steps: `json.items[0].id`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::model::{Argument, Origin, Provenance, ToolEntry};

/// How one argument's value is obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    Literal(Value),
    From {
        step: u32,
        path: String,
    },
    Synthesized(Value),
    /// A harvested value when one fits at call time, else this synthesized one.
    Auto(Value),
}

/// One planned call.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStep {
    pub tool: String,
    pub args: Vec<(String, ArgSpec)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub steps: Vec<PlanStep>,
    /// Where the plan came from: `file` or `synthesized`.
    pub origin: &'static str,
    /// In a synthesized plan, the step before which tools that failed on
    /// invented arguments get one more try with harvested ones (before any
    /// tool that removes things runs).
    pub retry_at: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(default)]
    call: Vec<CallFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallFile {
    tool: String,
    #[serde(default)]
    args: BTreeMap<String, toml::Value>,
}

/// Why a plan file was refused. One line each, for exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("cannot read plan {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("plan {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

impl Plan {
    /// Reads and validates a plan file (references must point backwards).
    pub fn load(path: &Path) -> Result<Self, PlanError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text).map_err(|message| PlanError::Invalid {
            path: shown,
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let file: PlanFile = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
        if file.call.is_empty() {
            return Err("it lists no [[call]]".into());
        }
        let mut steps = Vec::new();
        for (i, call) in file.call.into_iter().enumerate() {
            let this = i as u32 + 1;
            let mut args = Vec::new();
            for (name, value) in call.args {
                let spec = match reference(&value) {
                    Some((from, path)) => {
                        let step = parse_call_ref(&from).ok_or_else(|| {
                            format!(
                                "call {this} argument {name}: from = {from:?} must be \"call N\""
                            )
                        })?;
                        if step == 0 || step >= this {
                            return Err(format!(
                                "call {this} argument {name}: from = {from:?} must name an earlier call"
                            ));
                        }
                        parse_path(&path).map_err(|e| {
                            format!("call {this} argument {name}: path {path:?}: {e}")
                        })?;
                        ArgSpec::From { step, path }
                    }
                    None => {
                        ArgSpec::Literal(serde_json::to_value(&value).map_err(|e| e.to_string())?)
                    }
                };
                args.push((name, spec));
            }
            steps.push(PlanStep {
                tool: call.tool,
                args,
            });
        }
        Ok(Plan {
            steps,
            origin: "file",
            retry_at: None,
        })
    }

    /// Tools the plan names that the server does not list.
    pub fn unknown_tools<'a>(&'a self, tools: &[ToolEntry]) -> Vec<&'a str> {
        self.steps
            .iter()
            .map(|s| s.tool.as_str())
            .filter(|name| !tools.iter().any(|t| t.name == *name))
            .collect()
    }

    /// One call per tool, arguments synthesized from each input schema.
    ///
    /// Order matters only so that later calls have something real to act on:
    /// tools that add come first, then other writes, then read-only tools,
    /// then unknown ones, and tools that remove things last. A name may rank a
    /// tool within that order; it never changes the tool's safety class.
    pub fn synthesized(tools: &[ToolEntry]) -> Self {
        let mut ordered: Vec<&ToolEntry> = tools.iter().collect();
        ordered.sort_by_key(|t| {
            let rank = if removes_by_name(&t.name) && t.class != crate::model::ToolClass::ReadOnly {
                4
            } else {
                match t.class {
                    crate::model::ToolClass::Additive => 0,
                    crate::model::ToolClass::Destructive => 1,
                    crate::model::ToolClass::ReadOnly => 2,
                    crate::model::ToolClass::Unknown => 3,
                }
            };
            (rank, t.name.clone())
        });
        let retry_at = ordered
            .iter()
            .position(|t| removes_by_name(&t.name) && t.class != crate::model::ToolClass::ReadOnly)
            .unwrap_or(ordered.len());
        let steps = ordered
            .into_iter()
            .map(|tool| PlanStep {
                tool: tool.name.clone(),
                args: crate::synth::arguments(tool.input_schema.as_ref())
                    .into_iter()
                    .map(|(name, value)| {
                        // Scalars may be ids the server handed out; objects never are.
                        let spec = if value.is_string() || value.is_i64() {
                            ArgSpec::Auto(value)
                        } else {
                            ArgSpec::Synthesized(value)
                        };
                        (name, spec)
                    })
                    .collect(),
            })
            .collect();
        Plan {
            steps,
            origin: "synthesized",
            retry_at: Some(retry_at),
        }
    }
}

/// Names that say a tool takes something away; used only to call such tools
/// after the ones that create what they would remove.
fn removes_by_name(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    [
        "delete", "remove", "revoke", "drop", "destroy", "purge", "clear",
    ]
    .iter()
    .any(|w| lowered.contains(w))
}

fn reference(value: &toml::Value) -> Option<(String, String)> {
    let table = value.as_table()?;
    if table.len() != 2 {
        return None;
    }
    let from = table.get("from")?.as_str()?;
    let path = table.get("path")?.as_str()?;
    Some((from.to_owned(), path.to_owned()))
}

fn parse_call_ref(text: &str) -> Option<u32> {
    text.trim().strip_prefix("call")?.trim().parse().ok()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A step of a result path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Result<Vec<Step>, String> {
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

/// Resolves a step's arguments against earlier results (by plan step).
/// Returns the arguments with provenance, or why one could not be resolved.
pub fn resolve(
    step: &PlanStep,
    results: &BTreeMap<u32, Value>,
    pool: &crate::harvest::Pool,
) -> Result<(Value, Vec<Argument>), String> {
    let mut object = Map::new();
    let mut record = Vec::new();
    for (name, spec) in &step.args {
        let (value, source, from) = match spec {
            ArgSpec::Literal(v) => (v.clone(), Provenance::Literal, None),
            ArgSpec::Synthesized(v) => (v.clone(), Provenance::Synthesized, None),
            ArgSpec::Auto(fallback) => match pool.candidate(&step.tool, name) {
                Some(h) => (
                    h.value.clone(),
                    Provenance::Harvested,
                    Some(Origin {
                        call: format!("call {}", h.step),
                        path: h.path.clone(),
                    }),
                ),
                None => (fallback.clone(), Provenance::Synthesized, None),
            },
            ArgSpec::From { step: from, path } => {
                let result = results.get(from).ok_or_else(|| {
                    format!("argument {name}: call {from} produced no result to read")
                })?;
                let value = lookup(&result_view(result), path)
                    .ok_or_else(|| format!("argument {name}: call {from} has nothing at {path}"))?;
                (
                    value,
                    Provenance::Harvested,
                    Some(Origin {
                        call: format!("call {from}"),
                        path: path.clone(),
                    }),
                )
            }
        };
        object.insert(name.clone(), value.clone());
        record.push(Argument {
            name: name.clone(),
            value,
            source,
            from,
        });
    }
    Ok((Value::Object(object), record))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plan_file_with_literal_and_reference() {
        let plan = Plan::parse(
            r#"
            [[call]]
            tool = "mint"
            args = { grant = "g1", opts = { ttl = 5 } }
            [[call]]
            tool = "revoke"
            args.key = { from = "call 1", path = "json.id" }
            "#,
        );
        let plan = match plan {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(plan.steps.len(), 2);
        assert_eq!(
            plan.steps[0].args[1],
            ("opts".into(), ArgSpec::Literal(json!({"ttl": 5})))
        );
        assert_eq!(
            plan.steps[1].args[0],
            (
                "key".into(),
                ArgSpec::From {
                    step: 1,
                    path: "json.id".into()
                }
            )
        );
    }

    #[test]
    fn references_must_point_backwards_and_paths_must_parse() {
        let forward =
            "[[call]]\ntool = \"a\"\nargs.x = { from = \"call 1\", path = \"json.id\" }\n";
        assert!(Plan::parse(forward).is_err());
        let bad_path = "[[call]]\ntool = \"a\"\n[[call]]\ntool = \"b\"\nargs.x = { from = \"call 1\", path = \"body.id\" }\n";
        assert!(Plan::parse(bad_path).is_err());
        assert!(Plan::parse("").is_err());
        assert!(Plan::parse("[[call]]\nname = \"x\"\n").is_err());
    }

    #[test]
    fn harvested_values_carry_their_origin() {
        let step = PlanStep {
            tool: "revoke".into(),
            args: vec![(
                "key".into(),
                ArgSpec::From {
                    step: 1,
                    path: "json.items[1].id".into(),
                },
            )],
        };
        let mut results = BTreeMap::new();
        results.insert(
            1,
            json!({"content": [{"type": "text", "text": "{\"items\": [{\"id\": \"a\"}, {\"id\": \"b\"}]}"}]}),
        );
        let pool = crate::harvest::Pool::default();
        let resolved = resolve(&step, &results, &pool);
        let Ok((args, record)) = resolved else {
            panic!("not resolved: {resolved:?}");
        };
        assert_eq!(args, json!({"key": "b"}));
        assert_eq!(record[0].source, Provenance::Harvested);
        assert_eq!(
            record[0].from,
            Some(Origin {
                call: "call 1".into(),
                path: "json.items[1].id".into()
            })
        );
        results.insert(1, json!({"content": []}));
        assert!(resolve(&step, &results, &pool).is_err());
    }
}
