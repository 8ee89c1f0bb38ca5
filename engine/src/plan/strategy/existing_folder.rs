//! **A folder where the error asks for one.** A tool that writes into a
//! folder it is given (an export's `to`, a backup's `dest`, a render's
//! `out`) often names the parameter in words the planner does not read as
//! a path, and is sent an invented word. The server answers `export
//! destination must be an existing directory`, and the tool, whose every
//! call failed, is never exercised: a claim that it writes nothing passes
//! untested.
//!
//! So when an error says a value must be an existing folder (or is not
//! one), the argument it is about (the one whose value it quotes, else the
//! one it names, else the only invented text the call sent) is sent a
//! folder a store holds: one below a store's root, not hidden and not
//! named by another argument of the call, else a store's root. The audit
//! then writes only inside a store, where it is observed.
//!
//! Example: `tc_export {"root": "/j/work", "to": "witness"}` answered
//! `export destination must be an existing directory`; the retry is
//! `tc_export {"root": "/j/work", "to": "/j/work/docs"}`.

use serde_json::Value;
use witness_model::audit::{Argument, Provenance};

use super::names_param;
use super::read_error::Retry;
use crate::plan::cues::PathKind;
use crate::plan::harvest::{Pool, Source};
use crate::plan::{ArgSpec, PlanStep};

/// Words of an error saying a value must be an existing folder.
const ASKS_FOR_A_FOLDER: [&str; 8] = [
    "existing directory",
    "existing folder",
    "must be a directory",
    "must be a folder",
    "is not a directory",
    "is not a folder",
    "not a directory",
    "not a valid directory",
];

/// The text `argument` sent, when it sent some.
fn text(argument: &Argument) -> Option<&str> {
    argument.value.as_str().filter(|v| !v.is_empty())
}

/// The retry of a call of `step` that sent `sent` and failed with `error`
/// (`lowered`, lowercased) when the error asks for an existing folder.
pub fn retry(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    lowered: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    if !ASKS_FOR_A_FOLDER.iter().any(|p| lowered.contains(p)) {
        return None;
    }
    // The longest value the error quotes, of three characters or more:
    // a root in its relative form (`.`) or a folder that contains the
    // value refused (`/j/work` in `/j/work/witness`) is not what it is
    // about.
    let quoted = sent
        .iter()
        .filter(|a| text(a).is_some_and(|v| v.len() >= 3 && error.contains(v)))
        .max_by_key(|a| text(a).map_or(0, str::len));
    let named = || sent.iter().find(|a| names_param(error, &a.name));
    let invented = || {
        let mut made_up = sent
            .iter()
            .filter(|a| a.source == Provenance::Synthesized && text(a).is_some());
        let only = made_up.next()?;
        made_up.next().is_none().then_some(only)
    };
    let target = quoted.or_else(named).or_else(invented)?;
    let taken = |v: &Value| {
        tried.iter().any(|t| t.get(&target.name) == Some(v))
            || sent.iter().any(|a| a.name != target.name && a.value == *v)
    };
    let stored = |shape: PathKind| {
        pool.items().find(|h| {
            h.shape == Some(shape)
                && matches!(h.source, Source::Store(_))
                && !h.hidden()
                && !taken(&h.value)
        })
    };
    let folder = stored(PathKind::Dir).or_else(|| stored(PathKind::Root))?;
    let mut retry = step.clone();
    retry.set(&target.name, ArgSpec::Chosen(Box::new(folder.clone())));
    Some(Retry {
        step: retry,
        reading: format!(
            "a folder of the store for {}: the error asks for an existing one",
            target.name
        ),
        then: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;
    use crate::plan::harvest::Harvested;

    fn argument(name: &str, value: &str, source: Provenance) -> Argument {
        super::super::test_support::argument(name, json!(value), source)
    }

    fn pool() -> Pool {
        let at = |object: &str| StoreObject {
            store: "work".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/work".into(), PathKind::Root, at("dir/")),
                Harvested::seeded_path("/j/work/.git".into(), PathKind::Dir, at("dir/.git")),
                Harvested::seeded_path("/j/work/docs".into(), PathKind::Dir, at("dir/docs")),
            ],
            vec!["/j/work".into()],
        );
        pool
    }

    fn step() -> PlanStep {
        PlanStep {
            tool: "tc_export".into(),
            args: Vec::new(),
            cues: Default::default(),
        }
    }

    fn sent_to(folder: &str) -> Option<Value> {
        let sent = [
            argument("root", "/j/work", Provenance::Store),
            argument("to", "witness", Provenance::Synthesized),
        ];
        let error = r#"{"error": "export destination must be an existing directory"}"#;
        let retry = retry(&step(), &sent, error, &error.to_lowercase(), &pool(), &[])?;
        assert_eq!(
            retry
                .step
                .args
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["to"]
        );
        match &retry.step.args[0].1 {
            ArgSpec::Chosen(h) => Some(h.value.clone()).filter(|v| v == folder),
            _ => None,
        }
    }

    #[test]
    fn the_only_invented_word_is_given_a_folder_below_the_root_not_hidden() {
        assert_eq!(sent_to("/j/work/docs"), Some(json!("/j/work/docs")));
    }

    #[test]
    fn an_error_that_asks_for_no_folder_or_names_no_argument_retries_nothing() {
        let two_invented = [
            argument("to", "witness", Provenance::Synthesized),
            argument("name", "witness-2", Provenance::Synthesized),
        ];
        let error = "destination must be an existing directory";
        assert!(retry(&step(), &two_invented, error, error, &pool(), &[]).is_none());
        let sent = [argument("to", "witness", Provenance::Synthesized)];
        let other = "destination is read-only";
        assert!(retry(&step(), &sent, other, other, &pool(), &[]).is_none());
    }

    #[test]
    fn the_longest_value_quoted_is_the_one_the_error_is_about() {
        let sent = [
            argument("root", "/j/work", Provenance::Store),
            argument("to", "/j/work/witness", Provenance::Synthesized),
        ];
        let error = "'/j/work/witness' is not a directory.";
        let retry = retry(&step(), &sent, error, error, &pool(), &[]).expect("a retry");
        assert_eq!(retry.step.args[0].0, "to");
    }

    #[test]
    fn the_error_quoting_a_value_points_at_its_argument() {
        let sent = [
            argument("to", "witness", Provenance::Synthesized),
            argument("name", "out", Provenance::Synthesized),
        ];
        let error = "'witness' is not a directory";
        let retry = retry(&step(), &sent, error, error, &pool(), &[]).expect("a retry");
        assert_eq!(retry.step.args[0].0, "to");
    }
}
