//! **A root the server refused is refused for every tool.** A server with
//! two stores (a workspace and the store it keeps its state in) often
//! takes the place it works in by one parameter that every tool shares
//! (`root`, `workspace`, `directory`), and refuses the wrong store's root
//! in words about places: `store must not equal workspace root`. The
//! error retry of one tool finds the right root; every other tool, and
//! the same tool's later forms and its retries after a setup step, were
//! planned with the first root to hand and go back to the refused one,
//! so that every one of them fails where the first already had, and the
//! claims on them are never tested.
//!
//! So when a retry changed a parameter from one store's root to another
//! and got past the refusal (it did its job, or failed in words that are
//! not about places: `no active task`), the server has said which root it
//! works in: every later call of any tool that would send the refused
//! root for a parameter of that name is sent the one that passed. Only a
//! value the planner filled or invented is changed, never one a retry
//! chose or a plan file gave, and only where the value sent would be the
//! refused root itself.
//!
//! Example: `tc_show {"root": "/j/store"}` answered `store must not equal
//! workspace root`, its retry `tc_show {"root": "/j/workspace"}` answered
//! `no active task`; `tc_save` and `tc_init`, planned with `root:
//! "/j/store"`, are sent `root: "/j/workspace"`.

use serde_json::Value;
use witness_model::audit::Argument;

use crate::plan::PlanStep;
use crate::plan::cues::PathKind;
use crate::plan::harvest::{Harvested, Pool};

/// Words an error about the place a call acts in uses.
pub(crate) const PLACE_WORDS: [&str; 6] =
    ["root", "workspace", "directory", "folder", "store", "repo"];

/// Whether `lowered` (an error's text, lowercased) speaks of places.
pub(crate) fn speaks_of_place(lowered: &str) -> bool {
    PLACE_WORDS.iter().any(|w| lowered.contains(w))
}

/// What a server taught about its roots: for parameter `param`, the root
/// it refused and the one it took.
#[derive(Clone, Debug, PartialEq)]
pub struct RootLesson {
    pub param: String,
    pub refused: Value,
    pub taken: Harvested,
}

/// The lesson of a retry: `failed` is what the refused call sent and
/// `refusal` its error text, `retried` what its retry sent, `retry_error`
/// the retry's error text (`None` when it did its job). A lesson when the
/// refusal speaks of places, one parameter went from a store's root to
/// another store's root, and the retry's answer, if an error, is not
/// about places.
pub fn learnt(
    failed: &[Argument],
    refusal: &str,
    retried: &[Argument],
    retry_error: Option<&str>,
    pool: &Pool,
) -> Option<RootLesson> {
    // The refusal was about the place (a thing not found under one root
    // teaches nothing about the server's root), and the retry's answer,
    // if an error, is not.
    if !speaks_of_place(&refusal.to_lowercase())
        || retry_error.is_some_and(|e| speaks_of_place(&e.to_lowercase()))
    {
        return None;
    }
    let root = |v: &Value| {
        pool.items()
            .find(|h| h.shape == Some(PathKind::Root) && h.value == *v)
    };
    retried.iter().find_map(|now| {
        let then = failed.iter().find(|a| a.name == now.name)?;
        if then.value == now.value {
            return None;
        }
        root(&then.value)?;
        let taken = root(&now.value)?;
        Some(RootLesson {
            param: now.name.clone(),
            refused: then.value.clone(),
            taken: taken.clone(),
        })
    })
}

/// Gives `step` the roots `lessons` taught, for each parameter whose spec
/// the planner filled or invented and whose value, as `resolved` (the
/// step's argument object) has it, is a refused root. Whether it changed
/// `step`.
pub fn apply(step: &mut PlanStep, resolved: &Value, lessons: &[RootLesson]) -> bool {
    let mut changed = false;
    for lesson in lessons {
        changed |= super::teach(
            step,
            resolved,
            &lesson.param,
            &lesson.refused,
            &lesson.taken,
        );
    }
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{Provenance, StoreObject};

    use super::*;
    use crate::plan::ArgSpec;

    fn argument(name: &str, value: &str) -> Argument {
        super::super::test_support::argument(name, json!(value), Provenance::Store)
    }

    fn root(path: &str, store: &str) -> Harvested {
        Harvested::seeded_path(
            path.into(),
            PathKind::Root,
            StoreObject {
                store: store.into(),
                object: "dir/".into(),
            },
        )
    }

    fn pool() -> Pool {
        let mut pool = Pool::default();
        pool.seed(
            vec![root("/j/store", "store"), root("/j/workspace", "workspace")],
            vec!["/j/store".into(), "/j/workspace".into()],
        );
        pool
    }

    fn lesson() -> RootLesson {
        learnt(
            &[argument("root", "/j/store")],
            "store must not equal workspace root",
            &[argument("root", "/j/workspace")],
            Some(r#"{"error": "no active task"}"#),
            &pool(),
        )
        .expect("a lesson")
    }

    #[test]
    fn a_retry_that_got_past_a_refused_root_teaches_it() {
        let lesson = lesson();
        assert_eq!(lesson.param, "root");
        assert_eq!(lesson.refused, json!("/j/store"));
        assert_eq!(lesson.taken.value, json!("/j/workspace"));
    }

    #[test]
    fn a_retry_refused_in_words_about_places_or_a_change_of_no_root_teaches_nothing() {
        let refused_again = learnt(
            &[argument("root", "/j/store")],
            "store must not equal workspace root",
            &[argument("root", "/j/workspace")],
            Some("workspace root is not a git repository"),
            &pool(),
        );
        assert_eq!(refused_again, None);
        let not_a_root = learnt(
            &[argument("root", "/j/store/a")],
            "store must not equal workspace root",
            &[argument("root", "/j/workspace")],
            None,
            &pool(),
        );
        assert_eq!(not_a_root, None);
        // A thing not found under one root says nothing of the place.
        let not_found = learnt(
            &[argument("root", "/j/store")],
            "task t1 not found",
            &[argument("root", "/j/workspace")],
            None,
            &pool(),
        );
        assert_eq!(not_found, None);
    }

    #[test]
    fn a_later_tool_planned_with_the_refused_root_gets_the_taken_one() {
        let mut step = PlanStep {
            tool: "tc_save".into(),
            args: vec![
                ("root".into(), ArgSpec::Auto(json!("."))),
                ("title".into(), ArgSpec::Synthesized(json!("witness"))),
            ],
            cues: Default::default(),
        };
        let resolved = json!({"root": "/j/store", "title": "witness"});
        assert!(apply(&mut step, &resolved, &[lesson()]));
        match &step.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("/j/workspace")),
            other => panic!("expected the taken root, got {other:?}"),
        }
    }

    #[test]
    fn a_value_chosen_or_not_the_refused_root_is_kept() {
        let chosen = ArgSpec::Chosen(Box::new(root("/j/store", "store")));
        let mut step = PlanStep {
            tool: "tc_show".into(),
            args: vec![("root".into(), chosen.clone())],
            cues: Default::default(),
        };
        assert!(!apply(&mut step, &json!({"root": "/j/store"}), &[lesson()]));
        assert_eq!(step.args[0].1, chosen);
        let mut other = PlanStep {
            tool: "tc_show".into(),
            args: vec![("root".into(), ArgSpec::Auto(json!(".")))],
            cues: Default::default(),
        };
        assert!(!apply(
            &mut other,
            &json!({"root": "/j/store/sub"}),
            &[lesson()]
        ));
    }
}
