//! **An error that says nothing is answered by the likeliest mend.** Many
//! servers hide their exceptions (`Error executing tool create_table`, a
//! framework's default), and no rule that reads an error finds anything
//! to read. The call failed on something the audit chose, and two of its
//! choices fail most often where the server never says why: a name it
//! made up with a hyphen (`witness-create_table`), which identifiers of
//! tables, sheets' tables, columns and variables refuse, and an invented
//! word for a parameter that names a thing, where the store or an earlier
//! answer has since shown a real one.
//!
//! So when an error's text holds no word beyond the failure itself and
//! the tool's name, the retry sends every name the audit made up with
//! underscores in place of hyphens, and every invented value of a
//! parameter that names an existing thing a real one of the pool, where
//! there is one. When neither changes the call, nothing is retried.
//!
//! Example: `create_table {"table_name": "witness-create_table", ...}`
//! answered `Error executing tool create_table`; the retry sends
//! `"table_name": "witness_create_table"`.

use serde_json::Value;
use witness_model::audit::{Argument, Provenance};

use super::read_error::Retry;
use crate::plan::harvest::Pool;
use crate::plan::{ArgSpec, PlanStep};

/// Words a failure is written in that say nothing about its cause.
const EMPTY_WORDS: [&str; 13] = [
    "error",
    "executing",
    "tool",
    "internal",
    "failed",
    "failure",
    "exception",
    "an",
    "occurred",
    "while",
    "calling",
    "call",
    "the",
];

/// Whether `error` says nothing but that the call of `tool` failed (never
/// `Unknown tool`, which says the tool is not there).
pub fn says_nothing(error: &str, tool: &str) -> bool {
    let tool_words = super::text_words(tool);
    let words = super::text_words(error);
    !words.is_empty()
        && words
            .iter()
            .all(|w| tool_words.contains(w) || EMPTY_WORDS.contains(&w.as_str()))
}

/// The retry of a call of `step` that sent `sent` and failed with `error`,
/// when the error says nothing.
pub fn retry(step: &PlanStep, sent: &[Argument], error: &str, pool: &Pool) -> Option<Retry> {
    if !says_nothing(error, &step.tool) {
        return None;
    }
    let mut retry = step.clone();
    let mut mended = Vec::new();
    for (name, spec) in &mut retry.args {
        let made_up = match spec {
            ArgSpec::Fresh(Value::String(s)) | ArgSpec::Synthesized(Value::String(s)) => s,
            _ => continue,
        };
        if made_up.starts_with("witness") && made_up.contains('-') {
            *made_up = made_up.replace('-', "_");
            mended.push(name.clone());
        }
    }
    for argument in sent {
        // Only what the planner invented or would fill: a value the schema
        // offers or an error listed (recorded as synthesized too) stays.
        let invented = step.args.iter().any(|(n, spec)| {
            *n == argument.name && matches!(spec, ArgSpec::Synthesized(_) | ArgSpec::Auto(_))
        });
        if argument.source != Provenance::Synthesized
            || !invented
            || !crate::plan::harvest::names_an_object(&argument.name)
            || step.cues.new_name(&argument.name)
            || mended.contains(&argument.name)
        {
            continue;
        }
        if let Some(real) = pool.candidate_like(&step.cues, &argument.name, &argument.value) {
            retry.set(&argument.name, ArgSpec::Chosen(Box::new(real.clone())));
            mended.push(argument.name.clone());
        }
    }
    if mended.is_empty() {
        return None;
    }
    Some(Retry {
        step: retry,
        reading: format!(
            "the error says nothing: {} mended (names without hyphens, real things)",
            mended.join(", ")
        ),
        then: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn step() -> PlanStep {
        PlanStep {
            tool: "create_table".into(),
            args: vec![
                ("sheet".into(), ArgSpec::Auto(json!("Q1"))),
                (
                    "table_name".into(),
                    ArgSpec::Fresh(json!("witness-create_table")),
                ),
            ],
            cues: crate::plan::cues::ToolCues {
                tool: "create_table".into(),
                ..Default::default()
            },
        }
    }

    #[test]
    fn only_an_error_with_no_word_of_its_own_says_nothing() {
        assert!(says_nothing(
            "Error executing tool create_table",
            "create_table"
        ));
        assert!(says_nothing("Internal error", "create_table"));
        assert!(says_nothing(
            "Error executing tool create-table",
            "create-table"
        ));
        assert!(!says_nothing("Unknown tool: create_table", "create_table"));
        assert!(!says_nothing("", "create_table"));
        assert!(!says_nothing(
            "Error executing tool create_table: Table name invalid",
            "create_table"
        ));
    }

    #[test]
    fn a_made_up_name_loses_its_hyphens() {
        let retry = retry(
            &step(),
            &[],
            "Error executing tool create_table",
            &Pool::default(),
        )
        .expect("a retry");
        assert_eq!(
            retry.step.args[1].1,
            ArgSpec::Fresh(json!("witness_create_table"))
        );
        // The sheet, the store's, is kept.
        assert_eq!(retry.step.args[0].1, ArgSpec::Auto(json!("Q1")));
    }

    #[test]
    fn an_invented_thing_is_given_a_real_one_the_pool_has_since_seen() {
        let mut pool = Pool::default();
        pool.absorb(
            "list_memories",
            1,
            &json!({"structuredContent": {"memories": [{"id": "m1"}]}}),
        );
        let step = PlanStep {
            tool: "memory_link".into(),
            args: vec![("memory_id".into(), ArgSpec::Synthesized(json!("witness")))],
            cues: crate::plan::cues::ToolCues {
                tool: "memory_link".into(),
                ..Default::default()
            },
        };
        let sent = [super::super::test_support::argument(
            "memory_id",
            json!("witness"),
            Provenance::Synthesized,
        )];
        let retry =
            retry(&step, &sent, "Error executing tool memory_link", &pool).expect("a retry");
        match &retry.step.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("m1")),
            other => panic!("expected the memory the pool saw, got {other:?}"),
        }
    }

    #[test]
    fn an_error_with_words_or_nothing_to_mend_retries_nothing() {
        assert!(
            retry(
                &step(),
                &[],
                "Error executing tool create_table: Table name invalid",
                &Pool::default()
            )
            .is_none()
        );
        let plain = PlanStep {
            args: vec![("sheet".into(), ArgSpec::Auto(json!("Q1")))],
            ..step()
        };
        assert!(
            retry(
                &plain,
                &[],
                "Error executing tool create_table",
                &Pool::default()
            )
            .is_none()
        );
    }
}
