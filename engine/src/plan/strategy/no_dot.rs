//! **A name that starts with a dot, where dots are refused.** A store's
//! root, sent in the relative form a server asked for, is `.`; a name
//! parameter that took it (`repo`, which the server makes into
//! `Log/.-log.md`) is refused by servers that keep hidden files and
//! folders out of what they manage: `dot-folders and dot-files are outside
//! the note set`, `hidden paths are not allowed`. The same value is sent
//! again on every later try, and the tool is never exercised.
//!
//! So when an error speaks of dot-files, dot-folders or hidden paths and
//! the call sent a value that starts with a dot, that argument is sent a
//! value with none: a folder a store holds that is not hidden (in the
//! form the value was in) for a parameter that takes a path, else the
//! tool's fresh name.
//!
//! Example: `log_append {"repo": ".", "line": "witness"}` answered `not a
//! vault path: 'Log/.-log.md' (dot-folders and dot-files are outside the
//! note set)`; `repo` takes a place, so the retry is `log_append {"repo":
//! "Daily", "line": "witness"}`, a folder of the vault by its relative
//! path. A `name` would have been sent `witness-log_append`.

use serde_json::Value;
use witness_model::audit::Argument;

use super::read_error::Retry;
use crate::plan::cues::PathKind;
use crate::plan::harvest::{Pool, Source};
use crate::plan::{ArgSpec, PlanStep};

/// Words of an error that refuses hidden names.
const REFUSES_DOTS: [&str; 7] = [
    "dot-file",
    "dot-folder",
    "dotfile",
    "dot file",
    "hidden file",
    "hidden path",
    "hidden folder",
];

/// The retry of a call of `step` that sent `sent` and failed with
/// `lowered` (lowercased) when the error refuses hidden names and the call
/// sent one.
pub fn retry(step: &PlanStep, sent: &[Argument], lowered: &str, pool: &Pool) -> Option<Retry> {
    if !REFUSES_DOTS.iter().any(|w| lowered.contains(w)) {
        return None;
    }
    // A value that is `.` or has a part that starts with a dot (never
    // `..`, a way up, nor `./`, a way in), a parameter that takes a place
    // first.
    let hidden = |v: &str| {
        v == "."
            || v.split('/')
                .any(|part| part.starts_with('.') && part != "." && part != "..")
    };
    let dotted = |a: &&Argument| a.value.as_str().is_some_and(hidden);
    let target = sent
        .iter()
        .filter(dotted)
        .find(|a| step.cues.path_kind(&a.name).is_some())
        .or_else(|| sent.iter().find(dotted))?;
    let relative = target.value.as_str().is_some_and(|v| !v.starts_with('/'));
    let spec = match step.cues.path_kind(&target.name) {
        Some(_) => {
            let folder = pool.items().find(|h| {
                h.shape == Some(PathKind::Dir)
                    && matches!(h.source, Source::Store(_))
                    && !h.hidden()
            })?;
            let value = match folder.value.as_str() {
                Some(path) if relative => super::store_objects::relative_to_root(pool, path)
                    .map_or_else(|| folder.value.clone(), Value::String),
                _ => folder.value.clone(),
            };
            ArgSpec::Chosen(Box::new(crate::plan::harvest::Harvested {
                value,
                ..folder.clone()
            }))
        }
        None => ArgSpec::Fresh(Value::String(crate::plan::synth::fresh_name(&step.tool))),
    };
    let mut retry = step.clone();
    retry.set(&target.name, spec);
    Some(Retry {
        step: retry,
        reading: format!(
            "{} without a leading dot: the error refuses hidden names",
            target.name
        ),
        then: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{Provenance, StoreObject};

    use super::*;
    use crate::plan::harvest::Harvested;

    fn argument(name: &str, value: &str) -> Argument {
        super::super::test_support::argument(name, json!(value), Provenance::Store)
    }

    fn step() -> PlanStep {
        PlanStep {
            tool: "log_append".into(),
            args: Vec::new(),
            cues: crate::plan::cues::ToolCues {
                tool: "log_append".into(),
                ..Default::default()
            },
        }
    }

    fn pool() -> Pool {
        let at = |object: &str| StoreObject {
            store: "vault".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/v".into(), PathKind::Root, at("dir/")),
                Harvested::seeded_path("/j/v/.obsidian".into(), PathKind::Dir, at("dir/.obsidian")),
                Harvested::seeded_path("/j/v/Daily".into(), PathKind::Dir, at("dir/Daily")),
            ],
            vec!["/j/v".into()],
        );
        pool
    }

    const REFUSED: &str =
        "not a vault path: 'log/.-log.md' (dot-folders and dot-files are outside the note set)";

    #[test]
    fn a_name_that_starts_with_a_dot_gets_the_fresh_name() {
        let sent = [argument("name", "."), argument("line", "witness")];
        let retry = retry(&step(), &sent, REFUSED, &pool()).expect("a retry");
        assert_eq!(
            retry.step.args,
            [(
                "name".to_owned(),
                ArgSpec::Fresh(json!("witness-log_append"))
            )]
        );
    }

    #[test]
    fn a_path_that_starts_with_a_dot_gets_a_folder_not_hidden_in_its_form() {
        let sent = [argument("folder", ".")];
        let retry = retry(&step(), &sent, REFUSED, &pool()).expect("a retry");
        match &retry.step.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("Daily")),
            other => panic!("expected a folder, got {other:?}"),
        }
    }

    #[test]
    fn no_dot_sent_or_no_word_about_hidden_names_retries_nothing() {
        let sent = [
            argument("repo", "garden"),
            argument("up", "../notes"),
            argument("here", "./notes/a.md"),
        ];
        assert!(retry(&step(), &sent, REFUSED, &pool()).is_none());
        let dot = [argument("repo", ".")];
        assert!(retry(&step(), &dot, "repo not found", &pool()).is_none());
    }
}
