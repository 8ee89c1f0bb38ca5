//! **What turns a tool to writing.** Many tools only read, render or
//! rehearse unless the caller asks for more: an optional boolean named for
//! the write it enables (`save_to_file`, `write_file`, `persist`, `force`,
//! `overwrite`, `append`, `confirm`, `apply`, `commit`) left at its default
//! `false`, a rehearsal switch (`dry_run`, `preview`, `validate_only`)
//! left at its default `true`, or an optional place for the output
//! (`output`, `out_path`, `save_as`) left out. A claim about what the tool
//! writes is then tested only on the form that writes nothing. So every
//! tool with such a switch is also asked with each switch thrown to its
//! writing side and each output place given a fresh name, as a form of its
//! own after the form as planned (which keeps testing the default).
//!
//! A name that negates (`no_save`, `skip_write`, `disable_overwrite`)
//! writes on `false`; a switch whose default, or whose planned value, is
//! already the writing side is left as it is. A switch that replaces
//! (`overwrite`, `replace`, `force`) thrown on a maker of files points its
//! form at a file that exists: the store's, else the one the planned form
//! made, for a fresh name gives it nothing to replace.
//!
//! Answers the failure where an export left `save_to_file` off and wrote
//! nothing, a report left `write_file` off, a file writer's repeats never
//! sent `append: true`, an initialiser answered `kept schema.yml (force
//! overwrites)`, and a preview with no `output` saved nothing: each claim
//! about what the tool writes passed on a call that could not write.
//!
//! Example: `export_project {"project": string, "save_to_file"?: boolean}`
//! is called `{"project": "garden"}` and then `{"project": "garden",
//! "save_to_file": true}`; `render {"doc": string, "dry_run": boolean
//! (default true)}` is called with `dry_run: true` and then with
//! `dry_run: false`.

use serde_json::Value;

use crate::plan::cues::{PathKind, flat, words};
use crate::plan::{ArgSpec, PlanStep};

/// Words of a boolean's name that say `true` makes the call write.
const WRITE_WORDS: [&str; 16] = [
    "save",
    "write",
    "persist",
    "force",
    "overwrite",
    "append",
    "confirm",
    "confirmed",
    "apply",
    "commit",
    "execute",
    "export",
    "output",
    "replace",
    "store",
    "flush",
];

/// Words of a switch that say `true` replaces what exists: its form names
/// a file that exists, or the switch would have nothing to replace.
const REPLACE_WORDS: [&str; 3] = ["overwrite", "replace", "force"];

/// Words of a boolean's name that say `true` makes the call only rehearse.
const REHEARSAL_WORDS: [&str; 7] = [
    "dry",
    "dryrun",
    "preview",
    "simulate",
    "simulation",
    "rehearse",
    "rehearsal",
];

/// Words that, in a boolean's name, turn what it says around.
const NEGATIONS: [&str; 7] = ["no", "not", "skip", "disable", "without", "dont", "never"];

/// Verbs that, before a trailing `only` (`validate_only`, `check_only`),
/// say the call only checks.
const CHECK_WORDS: [&str; 6] = ["validate", "check", "plan", "read", "verify", "inspect"];

/// The value of boolean parameter `name` that asks the call to write, when
/// its name says which one does.
pub fn writing_side(name: &str) -> Option<bool> {
    let words = words(name);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let rehearses = has(&REHEARSAL_WORDS)
        || flat(name) == "readonly"
        || (words.last().is_some_and(|w| w == "only") && has(&CHECK_WORDS));
    let side = if rehearses {
        false
    } else if has(&WRITE_WORDS) {
        true
    } else {
        return None;
    };
    Some(if has(&NEGATIONS) { !side } else { side })
}

/// `step` with every switch of `schema` thrown to its writing side and
/// every optional output place given a fresh name; `None` when the tool
/// has no switch that is not already on its writing side.
pub fn switched_form(step: &PlanStep, schema: Option<&Value>) -> Option<PlanStep> {
    let schema = schema?;
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let mut form = step.clone();
    let mut thrown = false;
    let mut replaces = false;
    for (name, sub) in properties {
        if super::read_error::takes_boolean(sub) {
            let Some(side) = writing_side(name) else {
                continue;
            };
            if planned_bool(step, name).unwrap_or_else(|| default_bool(sub)) == side {
                continue;
            }
            form.set(name, ArgSpec::Pinned(Value::Bool(side)));
            thrown = true;
            replaces |= side
                && words(name)
                    .iter()
                    .any(|w| REPLACE_WORDS.contains(&w.as_str()));
        } else if step.cues.output_place(name)
            && !step.args.iter().any(|(n, _)| n == name)
            && let Some(value) = super::read_error::one_property(schema, name, sub, &step.tool)
            && value.is_string()
        {
            let fresh = if value == "witness" {
                Value::String(crate::plan::synth::fresh_name(&step.tool))
            } else {
                value
            };
            form.args.push((name.clone(), ArgSpec::Fresh(fresh)));
            thrown = true;
        }
    }
    if replaces {
        // Told to overwrite, the call is pointed at a file that exists:
        // one the store held, else the one the planned form made.
        crate::plan::aim_at_existing(&mut form, |cues, name| {
            cues.path_kind(name) == Some(PathKind::File) && !cues.new_place(name)
        });
    }
    thrown.then_some(form)
}

/// The boolean the step as planned sends for `name`, if it sends one.
fn planned_bool(step: &PlanStep, name: &str) -> Option<bool> {
    step.args.iter().find_map(|(n, spec)| match spec {
        ArgSpec::Pinned(v) | ArgSpec::Literal(v) | ArgSpec::Auto(v) | ArgSpec::Synthesized(v)
            if n == name =>
        {
            v.as_bool()
        }
        _ => None,
    })
}

/// The schema's default for a boolean property (a switch left out is off
/// unless the schema says otherwise).
fn default_bool(sub: &Value) -> bool {
    sub.get("default").and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::cues::ToolCues;

    fn step(tool: &str, args: Vec<(&str, ArgSpec)>) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: args.into_iter().map(|(n, s)| (n.to_owned(), s)).collect(),
            cues: ToolCues {
                tool: tool.into(),
                ..ToolCues::default()
            },
        }
    }

    fn spec<'s>(step: &'s PlanStep, name: &str) -> Option<&'s ArgSpec> {
        step.args.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    #[test]
    fn names_say_which_side_writes() {
        assert_eq!(writing_side("save_to_file"), Some(true));
        assert_eq!(writing_side("writeFile"), Some(true));
        assert_eq!(writing_side("force"), Some(true));
        assert_eq!(writing_side("append"), Some(true));
        assert_eq!(writing_side("dry_run"), Some(false));
        assert_eq!(writing_side("dryRun"), Some(false));
        assert_eq!(writing_side("validate_only"), Some(false));
        assert_eq!(writing_side("no_save"), Some(false));
        assert_eq!(writing_side("skip_write"), Some(false));
        // Switches that say nothing about writing are not thrown.
        assert_eq!(writing_side("recursive"), None);
        assert_eq!(writing_side("include_hidden"), None);
        assert_eq!(writing_side("only_open"), None);
    }

    #[test]
    fn an_export_left_to_its_default_is_also_asked_to_save() {
        let schema = json!({
            "type": "object",
            "properties": {
                "project": {"type": "string"},
                "save_to_file": {"type": "boolean", "default": false},
                "pretty": {"type": "boolean"}
            },
            "required": ["project"]
        });
        let planned = step(
            "export_project",
            vec![("project", ArgSpec::Auto(json!("witness")))],
        );
        let form = switched_form(&planned, Some(&schema)).expect("a switched form");
        assert_eq!(
            spec(&form, "save_to_file"),
            Some(&ArgSpec::Pinned(json!(true)))
        );
        assert_eq!(spec(&form, "pretty"), None, "not a switch that writes");
        assert_eq!(spec(&form, "project"), spec(&planned, "project"));
    }

    #[test]
    fn a_rehearsal_on_by_default_is_also_asked_for_real() {
        let schema = json!({
            "type": "object",
            "properties": {
                "doc": {"type": "string"},
                "dry_run": {"type": "boolean", "default": true}
            },
            "required": ["doc", "dry_run"]
        });
        let planned = step(
            "render",
            vec![
                ("doc", ArgSpec::Auto(json!("witness"))),
                ("dry_run", ArgSpec::Pinned(json!(true))),
            ],
        );
        let form = switched_form(&planned, Some(&schema)).expect("a switched form");
        assert_eq!(spec(&form, "dry_run"), Some(&ArgSpec::Pinned(json!(false))));
    }

    #[test]
    fn a_maker_told_to_overwrite_is_pointed_at_a_file_that_exists() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "overwrite": {"type": "boolean", "default": false}
            },
            "required": ["path"]
        });
        let mut planned = step(
            "create_workbook",
            vec![("path", ArgSpec::Fresh(json!("witness-create_workbook")))],
        );
        planned.cues.creator = true;
        let form = switched_form(&planned, Some(&schema)).expect("a switched form");
        assert_eq!(
            spec(&form, "overwrite"),
            Some(&ArgSpec::Pinned(json!(true)))
        );
        assert!(matches!(spec(&form, "path"), Some(ArgSpec::Auto(_))));
        assert!(form.cues.existing_target && !form.cues.new_name("path"));
        // A switch that only saves keeps the fresh name.
        let saves = json!({"type": "object", "properties": {"path": {"type": "string"},
            "save": {"type": "boolean"}}});
        let form = switched_form(&planned, Some(&saves)).expect("a switched form");
        assert!(matches!(spec(&form, "path"), Some(ArgSpec::Fresh(_))));
    }

    #[test]
    fn switches_already_on_their_writing_side_add_no_form() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "overwrite": {"type": "boolean", "default": true},
                "dry_run": {"type": "boolean"},
                "recursive": {"type": "boolean"}
            }
        });
        let planned = step("write_file", vec![("path", ArgSpec::Fresh(json!("a.txt")))]);
        assert_eq!(switched_form(&planned, Some(&schema)), None);
        assert_eq!(switched_form(&planned, None), None);
    }

    #[test]
    fn an_optional_output_place_is_given_a_fresh_name() {
        let schema = json!({
            "type": "object",
            "properties": {
                "input_path": {"type": "string"},
                "output": {"type": "string", "description": "where to save the pages"}
            },
            "required": ["input_path"]
        });
        let planned = step(
            "pdf_preview",
            vec![("input_path", ArgSpec::Auto(json!("witness")))],
        );
        let form = switched_form(&planned, Some(&schema)).expect("a switched form");
        assert!(
            matches!(spec(&form, "output"), Some(ArgSpec::Fresh(Value::String(s))) if !s.is_empty()),
            "{:?}",
            spec(&form, "output")
        );
    }
}
