//! **A link between two things needs two.** Tools that relate one thing
//! to another (`memory_link {"id_a", "id_b"}`, `add_dependency
//! {"task_id", "blocks_id"}`) need two things of a kind. Where the store
//! held none and the plan made one, the planner has one value to give, and
//! sends it twice (the store refuses to link a thing to itself) or finds
//! nothing of the kind for the second parameter (`Initiative 3 (target)
//! not found`). The call fails, the tool is never exercised, and neither
//! is the tool that removes the link.
//!
//! So when a call that failed sent one real value for two parameters, or
//! its error says a thing of some kind was not found while another
//! argument names a thing of that kind the plan's own earlier call made,
//! the call that made it is made once more (its invented words marked as
//! a second), and the failed call is sent the new thing for the
//! parameter that lacked one. Only a thing an earlier call of another
//! tool made and was seen to make (it changed the store) is made again;
//! the maker's and the tool's budgets of calls hold.
//!
//! Example: after `memory_write` made memory `m1`, `memory_link {"id_a":
//! "m1", "id_b": "m1"}` fails; `memory_write` is called again and makes
//! `m2`, and `memory_link {"id_a": "m1", "id_b": "m2"}` is sent.

use serde_json::Value;
use witness_model::audit::Argument;

use super::read_error::{is_kind, missing_kind, says_not_found};
use crate::plan::harvest::{Harvested, Pool, Source};
use crate::plan::{ArgSpec, PlanStep};

/// A second thing a failed call needs: the parameter to send it to, and
/// the value of the first, whose maker is to be called again.
#[derive(Clone, Debug, PartialEq)]
pub struct Needed {
    pub param: String,
    pub maker: Harvested,
}

/// What a call of `step` that sent `sent` and failed with `error` needs a
/// second thing for, when it does; `made` tells whether the plan step that
/// made a value was seen to change the store.
pub fn needed(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    pool: &Pool,
    made: &dyn Fn(u32) -> bool,
) -> Option<Needed> {
    let scalar = |a: &&Argument| a.source.is_real() && (a.value.is_string() || a.value.is_number());
    // The answer the argument's value was taken from is its maker, found
    // by where it was taken from, not by its value: a `1` is many things'
    // id. An answer that only echoed a value it was sent (a feedback call
    // naming the memory) is not: then the earliest call of another tool
    // that gave the same value under the same key, unasked, and changed
    // the store is.
    let qualifies = |h: &Harvested| {
        h.step > 0
            && h.tool != step.tool
            && matches!(h.source, Source::Answer | Source::Plan)
            && made(h.step)
            && !pool.asked_for(h).iter().any(|(_, v)| *v == h.value)
    };
    let maker = |argument: &Argument| {
        let from = argument.from.as_ref()?;
        let taken = pool.items().find(|h| {
            Some(h.step) == from.step() && h.path == from.path && h.value == argument.value
        })?;
        if qualifies(taken) {
            return Some(taken);
        }
        pool.items()
            .find(|h| h.value == taken.value && h.key == taken.key && qualifies(h))
    };
    // One value sent for two parameters: the second gets another.
    let twice = sent.iter().filter(scalar).enumerate().find_map(|(i, a)| {
        let again = sent
            .iter()
            .filter(scalar)
            .skip(i + 1)
            .find(|b| b.value == a.value)?;
        Some(Needed {
            param: again.name.clone(),
            maker: maker(a)?.clone(),
        })
    });
    twice.or_else(|| missing_second(sent, error, &maker))
}

/// The parameter whose value the error says was not found, when another
/// argument names a thing of the kind the error names that the plan made.
fn missing_second<'p>(
    sent: &[Argument],
    error: &str,
    maker: &dyn Fn(&Argument) -> Option<&'p Harvested>,
) -> Option<Needed> {
    if !says_not_found(&error.to_lowercase()) {
        return None;
    }
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    // Quoted as a word of its own: an id `1` is not in `Initiative 13`.
    let quotes = |v: &str| {
        error.match_indices(v).any(|(at, _)| {
            let before = error[..at].chars().next_back();
            let after = error[at + v.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    };
    let missing = sent.iter().find(|a| {
        (a.value.is_string() || a.value.is_number()) && {
            let v = text(&a.value);
            !v.is_empty() && quotes(&v)
        }
    })?;
    let kind = missing_kind(error, &text(&missing.value))?;
    sent.iter()
        .filter(|a| a.name != missing.name && a.source.is_real())
        .find_map(|a| {
            let h = maker(a)?;
            let of_kind = crate::plan::cues::words(&a.name)
                .iter()
                .chain(crate::plan::cues::words(&h.tool).iter())
                .any(|w| is_kind(w, &kind));
            of_kind.then(|| Needed {
                param: missing.name.clone(),
                maker: h.clone(),
            })
        })
}

/// The maker's step made again: each name the audit made fresh (or
/// invented for a parameter that names a new thing) is marked as a second
/// (`witness-memory_write-2`, `witness-a-2.md`), so that a server that
/// refuses a duplicate name makes a new thing; other values stay.
pub fn again(maker: &PlanStep) -> PlanStep {
    let mut step = maker.clone();
    let cues = step.cues.clone();
    for (name, spec) in &mut step.args {
        let made_up = match spec {
            ArgSpec::Fresh(Value::String(s)) => s,
            ArgSpec::Synthesized(Value::String(s)) if cues.new_name(name) => s,
            _ => continue,
        };
        // Before a file's extension: `witness-a.md` is `witness-a-2.md`.
        let stem_end = made_up
            .rfind('.')
            .filter(|dot| *dot > made_up.rfind('/').map_or(0, |slash| slash + 1))
            .unwrap_or(made_up.len());
        made_up.insert_str(stem_end, "-2");
    }
    step
}

/// The thing the maker's call at plan step `made_at`, or a retry of it,
/// gave under the key the first was found under, other than the first.
pub fn second<'p>(pool: &'p Pool, needed: &Needed, made_at: u32) -> Option<&'p Harvested> {
    pool.items().find(|h| {
        h.step >= made_at
            && h.tool == needed.maker.tool
            && h.key == needed.maker.key
            && h.value != needed.maker.value
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::Provenance;

    use super::*;

    /// An argument taken from the answer of plan step `step`, at `path`.
    fn argument(name: &str, value: Value, step: u32, path: &str) -> Argument {
        Argument {
            from: Some(witness_model::audit::Origin {
                call: format!("call {step}"),
                path: path.into(),
            }),
            ..super::super::test_support::argument(name, value, Provenance::Harvested)
        }
    }

    fn answered(tool: &str, step: u32, key: &str, value: Value) -> Harvested {
        Harvested {
            key: key.into(),
            value,
            tool: tool.into(),
            step,
            path: format!("json.{key}"),
            collection: None,
            source: Source::Answer,
            shape: None,
        }
    }

    fn step(tool: &str) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: Vec::new(),
            cues: Default::default(),
        }
    }

    fn pool(items: Vec<Harvested>) -> Pool {
        let mut pool = Pool::default();
        pool.seed(items, Vec::new());
        pool
    }

    #[test]
    fn one_value_sent_for_two_parameters_asks_its_maker_for_another() {
        // The value was taken from a feedback call's echo (step 4), which
        // changed the store too; the maker is the write that gave it first.
        let mut pool = pool(vec![
            answered("memory_write", 3, "id", json!("m1")),
            answered("memory_feedback", 4, "id", json!("m1")),
        ]);
        let sent = [
            argument("id_a", json!("m1"), 4, "json.id"),
            argument("id_b", json!("m1"), 4, "json.id"),
        ];
        // Unasked, the feedback call gave the value first-hand: its maker.
        let needed_now = needed(&step("memory_link"), &sent, "Error", &pool, &|s| s >= 3)
            .expect("a second memory");
        assert_eq!(needed_now.maker.tool, "memory_feedback");
        // Asked about `m1`, it only echoed it.
        pool.absorb_answer(
            "memory_feedback",
            4,
            &json!("ok"),
            &[],
            &[],
            &[("memory_id".into(), json!("m1"))],
        );
        let needed = needed(&step("memory_link"), &sent, "Error", &pool, &|s| s >= 3)
            .expect("a second memory");
        assert_eq!(needed.param, "id_b");
        assert_eq!(needed.maker.tool, "memory_write");
    }

    #[test]
    fn a_thing_of_the_kind_another_argument_names_not_found_asks_for_a_second() {
        // A goal made earlier has the id 1 too: the maker is the call the
        // value was taken from.
        let pool = pool(vec![
            answered("add_goal", 12, "goal_id", json!(1)),
            answered("create_initiative", 19, "initiative_id", json!(1)),
            answered("list_projects", 4, "id", json!(3)),
        ]);
        let sent = [
            argument("initiative_id", json!(1), 19, "json.initiative_id"),
            argument("unlocks_id", json!(3), 4, "json.id"),
        ];
        let error = r#"{"status": "error", "error": "Initiative 3 (target) not found"}"#;
        let needed = needed(&step("add_initiative_dep"), &sent, error, &pool, &|s| {
            s >= 12
        })
        .expect("a second initiative");
        assert_eq!(needed.param, "unlocks_id");
        assert_eq!(needed.maker.step, 19);
    }

    #[test]
    fn nothing_is_made_again_that_no_call_was_seen_to_make() {
        // The id came from a listing, which changed nothing: calling it
        // again makes nothing new.
        let pool = pool(vec![answered("list_memories", 2, "id", json!("m1"))]);
        let sent = [
            argument("id_a", json!("m1"), 2, "json.id"),
            argument("id_b", json!("m1"), 2, "json.id"),
        ];
        assert_eq!(
            needed(&step("memory_link"), &sent, "Error", &pool, &|_| false),
            None
        );
        // Two different values and no error of a kind: nothing needed.
        let pool = pool_of_two();
        let sent = [
            argument("id_a", json!("m1"), 3, "json.id"),
            argument("id_b", json!("m2"), 5, "json.id"),
        ];
        assert_eq!(
            needed(&step("memory_link"), &sent, "Error", &pool, &|_| true),
            None
        );
    }

    fn pool_of_two() -> Pool {
        pool(vec![
            answered("memory_write", 3, "id", json!("m1")),
            answered("memory_write", 5, "id", json!("m2")),
        ])
    }

    #[test]
    fn the_maker_made_again_marks_its_invented_words_and_the_second_is_found() {
        let maker = PlanStep {
            tool: "memory_write".into(),
            args: vec![
                ("content".into(), ArgSpec::Synthesized(json!("witness"))),
                ("type".into(), ArgSpec::Pinned(json!("episode"))),
                ("name".into(), ArgSpec::Fresh(json!("witness-memory_write"))),
                ("file".into(), ArgSpec::Fresh(json!("notes/witness-a.md"))),
            ],
            cues: Default::default(),
        };
        let again = again(&maker);
        assert_eq!(again.args[0].1, ArgSpec::Synthesized(json!("witness")));
        assert_eq!(again.args[1].1, ArgSpec::Pinned(json!("episode")));
        assert_eq!(
            again.args[2].1,
            ArgSpec::Fresh(json!("witness-memory_write-2"))
        );
        assert_eq!(
            again.args[3].1,
            ArgSpec::Fresh(json!("notes/witness-a-2.md"))
        );
        let needed = Needed {
            param: "id_b".into(),
            maker: answered("memory_write", 3, "id", json!("m1")),
        };
        let pool = pool_of_two();
        assert_eq!(
            second(&pool, &needed, 5).map(|h| h.value.clone()),
            Some(json!("m2"))
        );
        assert_eq!(second(&pool, &needed, 6), None);
    }
}
