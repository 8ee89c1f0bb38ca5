//! **A value already in place is swapped for the next.** A retry that
//! found a real object for a parameter (a category the store holds, for
//! the `Category "witness" not found` of a move) may find the one the
//! thing is already in: `Chunk is already in that category`, `Task is
//! already in that column`, `Already on 'main'`. The call did nothing,
//! and nothing about the claim is learnt from it; the object that was
//! first to hand is simply the one the thing already had.
//!
//! So when an error says `already` (but not `already exists`, `already
//! taken` or `in use`, which ask for a fresh name instead) and the
//! attempt before it differs from it in exactly one parameter, which now
//! carries a real value, that parameter is
//! sent the next real object of the kind its name says (`target_category`:
//! a category), else of the kind of the value sent: one not sent before
//! and not named by another argument of the call. Without an earlier attempt
//! there is no telling which argument the error is about, and nothing is
//! retried.
//!
//! Example: `move_chunk {"id": "c1", "target_category": "witness"}`
//! answered `Category "witness" not found`; its retry with the store's
//! `orders` answered `Chunk is already in that category`; the next try is
//! `move_chunk {"id": "c1", "target_category": "tools"}`, another
//! category the store held.

use serde_json::Value;
use witness_model::audit::Argument;

use super::read_error::{Retry, next_object, of_missing_kind};
use crate::plan::harvest::{Harvested, Pool};
use crate::plan::{ArgSpec, PlanStep};

/// Whether `lowered` (an error's text, lowercased) says the value sent is
/// the one already in place, not that a thing of that name exists.
fn says_already(lowered: &str) -> bool {
    // A name already taken, in use or registered asks for a fresh one, as
    // one that already exists does.
    const FRESH: [&str; 7] = [
        "already exist",
        "already taken",
        "already in use",
        "already registered",
        "already defined",
        "already used",
        "already running",
    ];
    lowered.contains("already") && !FRESH.iter().any(|p| lowered.contains(p))
}

/// The retry of a call of `step` that sent `sent` and failed with
/// `lowered` (lowercased), when the error says the value is already in
/// place: the parameter the previous attempt (the next to last of
/// `tried`, every argument object the tool was sent, this call's last)
/// sent otherwise is given the next real object of its kind.
pub fn retry(
    step: &PlanStep,
    sent: &[Argument],
    lowered: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    if !says_already(lowered) || tried.len() < 2 {
        return None;
    }
    // The attempt before is this call's own earlier try only when the two
    // differ in the one value the retry changed: an earlier call of
    // another step of the tool differs in more, and says nothing here.
    let before = &tried[tried.len() - 2];
    let changed: Vec<&Argument> = sent
        .iter()
        .filter(|a| before.get(&a.name) != Some(&a.value))
        .collect();
    let [target] = changed.as_slice() else {
        return None;
    };
    if !target.source.is_real() {
        return None;
    }
    let sent_before = |v: &Value| {
        tried.iter().any(|t| t.get(&target.name) == Some(v))
            || sent.iter().any(|a| a.name != target.name && a.value == *v)
    };
    // The kind the parameter names (`target_category`: a category) first:
    // a value found by words may share its key with things of other kinds
    // (`name`, for projects and categories alike).
    let next = of_missing_kind(pool, "", &target.name, &target.value, &sent_before)
        .or_else(|| next_object(pool, step, &target.name, &target.value, &sent_before))?;
    let mut retry = step.clone();
    retry.set(
        &target.name,
        ArgSpec::Chosen(Box::new(Harvested::clone(next))),
    );
    Some(Retry {
        step: retry,
        reading: format!(
            "the next real {}: the one sent was already in place",
            target.name
        ),
        then: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{Provenance, StoreObject};

    use super::super::test_support::argument;
    use super::*;
    use crate::plan::harvest::Source;

    fn category(name: &str, at: &str) -> Harvested {
        Harvested::seeded(
            "name",
            json!(name),
            StoreObject {
                store: "data".into(),
                object: format!("json/shop.json#/categories/{at}"),
            },
            Some("categories"),
        )
    }

    fn step() -> PlanStep {
        PlanStep {
            tool: "move_chunk".into(),
            args: vec![
                ("id".into(), ArgSpec::Auto(json!("c1"))),
                ("target_category".into(), ArgSpec::Auto(json!("witness"))),
            ],
            cues: crate::plan::cues::ToolCues {
                tool: "move_chunk".into(),
                ..Default::default()
            },
        }
    }

    fn pool() -> Pool {
        let mut pool = Pool::default();
        pool.seed(
            vec![category("orders", "0"), category("tools", "1")],
            Vec::new(),
        );
        pool
    }

    #[test]
    fn the_value_a_retry_chose_is_swapped_for_the_next_of_its_kind() {
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument("target_category", json!("orders"), Provenance::Store),
        ];
        let tried = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "orders"}),
        ];
        let retry = retry(
            &step(),
            &sent,
            "error: chunk is already in that category",
            &pool(),
            &tried,
        )
        .expect("a retry");
        let chosen = retry
            .step
            .args
            .iter()
            .find(|(n, _)| n == "target_category")
            .map(|(_, s)| s.clone());
        match chosen {
            Some(ArgSpec::Chosen(h)) => {
                assert_eq!(h.value, json!("tools"));
                assert!(matches!(h.source, Source::Store(_)));
            }
            other => panic!("expected the next category, got {other:?}"),
        }
    }

    fn answered(tool: &str, value: &str) -> Harvested {
        Harvested {
            key: "name".into(),
            value: json!(value),
            tool: tool.into(),
            step: 1,
            path: "json[0].name".into(),
            collection: None,
            source: Source::Answer,
            shape: None,
        }
    }

    #[test]
    fn the_kind_the_parameter_names_comes_before_the_key_the_value_shares() {
        // Projects and categories both answered under `name`: the next
        // value is a category, as `target_category` says.
        let mut pool = Pool::default();
        pool.seed(
            vec![
                answered("list_projects", "garden-guide"),
                answered("list_categories", "orders"),
                answered("list_categories", "tools"),
            ],
            Vec::new(),
        );
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument("target_category", json!("orders"), Provenance::Store),
        ];
        let tried = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "orders"}),
        ];
        let retry =
            retry(&step(), &sent, "already in that category", &pool, &tried).expect("a retry");
        let value = retry.step.args.iter().find_map(|(n, s)| match s {
            ArgSpec::Chosen(h) if n == "target_category" => Some(h.value.clone()),
            _ => None,
        });
        assert_eq!(value, Some(json!("tools")));
    }

    #[test]
    fn without_an_earlier_attempt_or_with_already_exists_nothing_is_retried() {
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument("target_category", json!("orders"), Provenance::Store),
        ];
        let once = [json!({"id": "c1", "target_category": "orders"})];
        assert!(retry(&step(), &sent, "already in that category", &pool(), &once).is_none());
        let twice = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "orders"}),
        ];
        assert!(
            retry(
                &step(),
                &sent,
                "category orders already exists",
                &pool(),
                &twice
            )
            .is_none()
        );
    }

    #[test]
    fn an_invented_value_is_not_what_the_error_is_about() {
        // The retry changed only a value the audit made up: nothing real
        // to swap.
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument(
                "target_category",
                json!("witness-2"),
                Provenance::Synthesized,
            ),
        ];
        let tried = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "witness-2"}),
        ];
        assert!(retry(&step(), &sent, "already in that category", &pool(), &tried).is_none());
    }

    #[test]
    fn an_earlier_call_that_differs_in_more_than_the_value_says_nothing() {
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument("target_category", json!("orders"), Provenance::Store),
        ];
        let tried = [
            json!({"id": "c9", "target_category": "tools"}),
            json!({"id": "c1", "target_category": "orders"}),
        ];
        assert!(retry(&step(), &sent, "already in that category", &pool(), &tried).is_none());
        let taken = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "orders"}),
        ];
        assert!(retry(&step(), &sent, "name already taken", &pool(), &taken).is_none());
    }

    #[test]
    fn every_object_of_the_kind_sent_before_ends_the_retries() {
        let sent = [
            argument("id", json!("c1"), Provenance::Store),
            argument("target_category", json!("tools"), Provenance::Store),
        ];
        let tried = [
            json!({"id": "c1", "target_category": "witness"}),
            json!({"id": "c1", "target_category": "orders"}),
            json!({"id": "c1", "target_category": "tools"}),
        ];
        assert!(retry(&step(), &sent, "already in that category", &pool(), &tried).is_none());
    }
}
