//! **The object a tool did its job on is the one its later forms get.**
//! A tool handed the first object of its kind often has nothing to do on
//! it: an export of a project the audit had just made, still empty
//! (`"exported": 0`), a count of an empty folder. The idle retry
//! ([`super::read_error::idle`]) then finds the next real object, on which
//! the call does its job. But the tool's later forms (its switched form
//! `save_to_file: true`, its overwrite form, a form after a setup call)
//! are built from the planned step and filled from the pool as the first
//! call was, so they go back to the empty object: the export is saved
//! with nothing in it, and a change the audit makes afterwards to what
//! the output is made from changes nothing the output holds, so the
//! replace a claim is about is never shown.
//!
//! So when an idle retry changed one argument from the object the call
//! did nothing on to another and that retry did its job (it answered
//! without saying it changed nothing, or changed the store), every later
//! call of the same tool that would send the idle object for that
//! parameter is sent the one the job was done on. Only a value the
//! planner filled or invented is changed, never one a retry or a form
//! chose or a plan file gave, and only where the value sent would be the
//! idle object itself; other tools keep theirs (an empty project is the
//! right one for a tool that adds to it).
//!
//! Example: `export_project {"project": "witness-create_project"}`
//! answered `{"exported": 0, "data": []}`, its retry `{"project":
//! "garden-guide"}` exported 3 chunks; the switched form is sent
//! `{"project": "garden-guide", "save_to_file": true}`, not the empty
//! project.

use serde_json::Value;
use witness_model::audit::Argument;

use crate::plan::harvest::Harvested;
use crate::plan::{ArgSpec, PlanStep};

/// What an idle retry taught one tool: for parameter `param`, the value
/// the tool did nothing on and the object it did its job on.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleLesson {
    pub tool: String,
    pub param: String,
    pub idle: Value,
    pub done: Harvested,
}

/// The lesson of idle retry `retry` of `planned` (the step whose call did
/// nothing; `idle` is what that call sent). A lesson when the retry chose
/// an object for the one parameter it changed (as
/// [`super::read_error::idle`] does) whose value differs from what the
/// idle call sent for it: a value the step had chosen already is no
/// lesson. Whether the retry did its job is the caller's to judge, from
/// the ledger.
pub fn learnt(idle: &[Argument], planned: &PlanStep, retry: &PlanStep) -> Option<IdleLesson> {
    retry.args.iter().find_map(|(name, spec)| {
        let ArgSpec::Chosen(done) = spec else {
            return None;
        };
        if planned.args.iter().any(|(n, s)| n == name && s == spec) {
            return None;
        }
        let then = idle.iter().find(|a| a.name == *name)?;
        (then.value != done.value).then(|| IdleLesson {
            tool: retry.tool.clone(),
            param: name.clone(),
            idle: then.value.clone(),
            done: (**done).clone(),
        })
    })
}

/// Gives `step` the objects `lessons` taught its tool, for each parameter
/// whose spec the planner filled or invented and whose value, as
/// `resolved` (the step's argument object) has it, is the idle one, while
/// the object done on is not `gone` (taken away since: the later form
/// would only be refused). Whether it changed `step`.
pub fn apply(
    step: &mut PlanStep,
    resolved: &Value,
    lessons: &[IdleLesson],
    gone: &dyn Fn(&Value) -> bool,
) -> bool {
    let mut changed = false;
    let tool = step.tool.clone();
    for lesson in lessons.iter().filter(|l| l.tool == tool) {
        if !gone(&lesson.done.value) {
            changed |= super::teach(step, resolved, &lesson.param, &lesson.idle, &lesson.done);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::Provenance;

    use super::*;

    fn chosen(value: &str) -> ArgSpec {
        ArgSpec::Chosen(Box::new(Harvested::sent_by(
            "list_projects",
            1,
            "name",
            json!(value),
            None,
        )))
    }

    fn retry() -> PlanStep {
        PlanStep {
            tool: "export_project".into(),
            args: vec![("project".into(), chosen("garden-guide"))],
            ..PlanStep::default()
        }
    }

    fn planned() -> PlanStep {
        PlanStep {
            tool: "export_project".into(),
            args: vec![("project".into(), ArgSpec::Auto(json!("witness")))],
            ..PlanStep::default()
        }
    }

    fn lesson() -> IdleLesson {
        let idle = [super::super::test_support::argument(
            "project",
            json!("witness-create_project"),
            Provenance::Harvested,
        )];
        learnt(&idle, &planned(), &retry()).unwrap_or_else(|| panic!("no lesson"))
    }

    fn never(_: &Value) -> bool {
        false
    }

    #[test]
    fn a_retry_that_chose_another_object_teaches_it() {
        let lesson = lesson();
        assert_eq!(lesson.param, "project");
        assert_eq!(lesson.idle, json!("witness-create_project"));
        assert_eq!(lesson.done.value, json!("garden-guide"));
        // A retry that chose the value already sent teaches nothing.
        let same = [super::super::test_support::argument(
            "project",
            json!("garden-guide"),
            Provenance::Harvested,
        )];
        assert_eq!(learnt(&same, &planned(), &retry()), None);
        // A value the step had chosen already is no lesson.
        let idle = [super::super::test_support::argument(
            "project",
            json!("witness-create_project"),
            Provenance::Harvested,
        )];
        assert_eq!(learnt(&idle, &retry(), &retry()), None);
    }

    #[test]
    fn a_later_form_of_the_tool_that_would_send_the_idle_object_gets_the_one_done() {
        let mut switched = PlanStep {
            tool: "export_project".into(),
            args: vec![
                ("project".into(), ArgSpec::Auto(json!("witness"))),
                ("save_to_file".into(), ArgSpec::Pinned(json!(true))),
            ],
            ..PlanStep::default()
        };
        let resolved = json!({"project": "witness-create_project", "save_to_file": true});
        let mut taken_away = switched.clone();
        assert!(apply(&mut switched, &resolved, &[lesson()], &never));
        match &switched.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("garden-guide")),
            other => panic!("expected the object done on, got {other:?}"),
        }
        assert_eq!(switched.args[1].1, ArgSpec::Pinned(json!(true)));
        // Not once the object done on was taken away.
        let gone = |v: &Value| *v == json!("garden-guide");
        assert!(!apply(&mut taken_away, &resolved, &[lesson()], &gone));
    }

    #[test]
    fn another_tool_another_value_or_a_chosen_one_is_kept() {
        // A tool that adds to the empty project keeps it.
        let mut other_tool = PlanStep {
            tool: "add_chunk".into(),
            args: vec![("project".into(), ArgSpec::Auto(json!("witness")))],
            ..PlanStep::default()
        };
        let resolved = json!({"project": "witness-create_project"});
        assert!(!apply(&mut other_tool, &resolved, &[lesson()], &never));
        // The same tool sending another object keeps it.
        let mut elsewhere = PlanStep {
            tool: "export_project".into(),
            args: vec![("project".into(), ArgSpec::Auto(json!("witness")))],
            ..PlanStep::default()
        };
        assert!(!apply(
            &mut elsewhere,
            &json!({"project": "shop-faq"}),
            &[lesson()],
            &never
        ));
        // A value a form chose stays.
        let mut picked = PlanStep {
            tool: "export_project".into(),
            args: vec![("project".into(), chosen("witness-create_project"))],
            ..PlanStep::default()
        };
        assert!(!apply(&mut picked, &resolved, &[lesson()], &never));
    }
}
