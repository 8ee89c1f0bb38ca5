//! Confirmation: every effect-lane failure is asked again before it is
//! reported.
//!
//! Once the plan is carried out, and for a synthesized plan also just
//! before its first remover or ender (so a confirmation still finds the
//! object its call changed), the effect lane is judged on the ledger so
//! far ([`crate::checks::evaluate`], with the idle controls' background).
//! The first call behind each failure of a confirmed check
//! ([`crate::checks::CONFIRMED`]) not yet confirmed is made again,
//! recorded with `confirms`:
//! its step resolved anew, so an argument the planner made fresh is fresh
//! again (a one-shot effect, such as creating a new name, is confirmed on a
//! fresh object), while a real object it was sent is sent again as long as
//! it is there (resolved anew, the pool would hand the object made last,
//! on which the effect cannot show), and like every call it waits for its
//! idle control first.
//! An output asked again after a change the audit made
//! ([`crate::plan::strategy::stale_output`]) is confirmed otherwise: the
//! change is made again first (once a pass, however many outputs chose
//! it), and the output is sent the very values it was sent.
//! The checks then hold each failure to its confirmation
//! ([`crate::checks`]'s `confirm`).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use witness_model::audit::{CallRecord, Provenance, Verdict};

use super::calls::{Call, Runner};
use crate::checks::{self, CONFIRMED, Controls};
use crate::plan::{ArgSpec, PlanStep, Resolved, resolve};

impl Runner<'_> {
    /// Makes one confirmation call for every failing call of a confirmed
    /// check that has none yet: asked before the removers for the failures
    /// so far, and once more at the end for the rest. Breaks when the audit
    /// cannot go on.
    pub(super) fn confirm_failures(&mut self) -> ControlFlow<()> {
        let report = &self.draft.report;
        let confirmed: BTreeSet<u32> = report.calls.iter().filter_map(|c| c.confirms).collect();
        let background = self.observed.background();
        let provisional = checks::evaluate(
            &report.tools,
            &report.calls,
            &report.baseline_probes,
            false,
            &report.planner.skipped,
            None,
            Controls {
                background: &background,
                stores: &report.stores,
            },
        );
        let failing: BTreeSet<u32> = provisional
            .iter()
            .filter(|c| c.verdict == Verdict::Fail && CONFIRMED.contains(&c.id))
            .filter_map(|c| c.evidence.effects.first().map(|e| e.call))
            .filter(|id| !confirmed.contains(id))
            .collect();
        // The changes made again in this pass, for the outputs asked again
        // after them: each once, however many outputs chose it.
        let mut remade: BTreeMap<u32, Option<u32>> = BTreeMap::new();
        for id in failing {
            let Some(original) = self.draft.report.calls.iter().find(|c| c.id == id) else {
                continue;
            };
            let step_no = original.step;
            // An output asked for again after a change is confirmed after
            // the change is made once more, on the values it was sent:
            // without the change the output's bytes are the same, and
            // fresh values would make a new output rather than replace one.
            let (step, resolved) = if let Some(change) = self.refreshed.get(&id).copied() {
                let Some(step) = self.steps.get(&step_no).cloned() else {
                    continue;
                };
                let resolved = as_sent(original);
                let tool = original.tool.clone();
                let again = match remade.get(&change) {
                    Some(again) => *again,
                    None => {
                        let again = self.make_change(change, &tool, ANEW)?;
                        remade.insert(change, again);
                        again
                    }
                };
                // Judged by what it shows again alone
                // (`checks::confirm`): a change that could not be made
                // again leaves an output with nothing to replace.
                self.after_change = again.or(Some(change));
                (step, resolved)
            } else {
                let Some(mut step) = self.steps.get(&step_no).map(|s| afresh(s, original, AGAIN))
                else {
                    continue;
                };
                on_the_same_objects(&mut step, original, &self.pool, &|a| self.gone_since(a));
                // A step that cannot be resolved again leaves its failure
                // as observed: unconfirmed, never invented.
                let Ok(resolved) = resolve(&step, &self.results, &self.pool) else {
                    continue;
                };
                (step, resolved)
            };
            let call = Call {
                step: &step,
                step_no,
                resolved: &resolved,
                repeat_of: None,
                page_of: None,
                confirms: Some(id),
                expect: &[],
            };
            self.call(&call)?;
        }
        ControlFlow::Continue(())
    }
}

/// The arguments `call` was sent, as they were sent and recorded: what
/// asks the same again, where resolving its step anew might choose
/// another value (the thing made last).
pub(super) fn as_sent(call: &CallRecord) -> Resolved {
    Resolved {
        arguments: super::calls::sent_object(&call.arguments),
        recorded: call.arguments.clone(),
        creates: Vec::new(),
    }
}

/// Gives `step` the real objects `original` was sent, for each parameter
/// the pool fills, where the pool still holds the object and it is not
/// `gone` (deleted or taken away since): resolved anew, the pool would
/// hand the object made last (an empty list the audit made since), on
/// which the effect being confirmed cannot show again. An object gone
/// since is filled anew, as before.
fn on_the_same_objects(
    step: &mut PlanStep,
    original: &CallRecord,
    pool: &crate::plan::harvest::Pool,
    gone: &dyn Fn(&witness_model::audit::Argument) -> bool,
) {
    for (name, spec) in &mut step.args {
        if !matches!(spec, ArgSpec::Auto(_) | ArgSpec::IfReal(_)) {
            continue;
        }
        let Some(sent) = original
            .arguments
            .iter()
            .find(|a| a.name == *name && a.source.is_real())
        else {
            continue;
        };
        if gone(sent) {
            continue;
        }
        if let Some(held) = pool.holding(&sent.value) {
            *spec = ArgSpec::Chosen(Box::new(held.clone()));
        }
    }
}

impl Runner<'_> {
    /// Whether what `argument` named is gone since: its store object was
    /// deleted by a call, or a tool named to take things away did its job
    /// on its value.
    fn gone_since(&self, argument: &witness_model::audit::Argument) -> bool {
        let deleted = argument.object.as_ref().is_some_and(|o| {
            self.draft.report.calls.iter().any(|c| {
                c.effects.iter().any(|e| {
                    e.op == witness_model::audit::Op::Delete
                        && e.store == o.store
                        && e.object == o.object
                })
            })
        });
        deleted || self.taken_away(&argument.value)
    }
}

/// What a confirmation adds to a fresh name.
const AGAIN: &str = "-again";

/// What a change made for an output's refresh adds to a fresh name
/// ([`crate::plan::strategy::stale_output`]).
pub(super) const MORE: &str = "-more";

/// What the same change, made again before the output's confirmation,
/// adds instead: a name no confirmation of the change itself makes.
const ANEW: &str = "-more-anew";

/// `step` with every fresh name made anew, `suffix` added to it
/// (`witness-note` becomes `witness-note-again`): what the first call made exists now, and a
/// one-shot effect is only reproduced on a fresh object. The name the
/// planner invented for the tool counts as fresh wherever `original` (the
/// call confirmed) sent it, synthesized, to any parameter but content: a rename's
/// `new_name` sent again as it was would rename the thing to the name it
/// already has. For a confirmation, content is left as it was: the same
/// bytes written again over what they replaced is what a repeat cannot
/// redo. For a change made before an output is asked again (any other
/// `suffix`), the text the audit invented is made anew too, content
/// included: a field set again to the value it holds (`license:
/// witness`) changes nothing the output is made from. A path keeps its
/// text, as a suffix would change its extension or its place.
pub(super) fn afresh(step: &PlanStep, original: &CallRecord, suffix: &str) -> PlanStep {
    let mut step = step.clone();
    let invented = crate::plan::synth::fresh_name(&step.tool);
    let change = suffix != AGAIN;
    let PlanStep { args, cues, .. } = &mut step;
    for (name, spec) in args.iter_mut() {
        if let ArgSpec::Fresh(serde_json::Value::String(fresh)) = spec {
            fresh.push_str(suffix);
            continue;
        }
        let Some(text) = original
            .arguments
            .iter()
            .find(|a| a.name == *name && a.source == Provenance::Synthesized)
            .and_then(|a| a.value.as_str())
        else {
            continue;
        };
        // The invented name, or the one a change made for an output gave
        // it: confirming that change sends a name the thing does not have
        // yet, never the one it was just given.
        let named = text == invented
            || [ANEW, MORE]
                .iter()
                .any(|made| text.strip_suffix(made) == Some(invented.as_str()));
        let renames = named && !crate::plan::synth::is_content(&name.to_ascii_lowercase());
        // Text the audit made up, not a value the schema pins, SQL, or
        // JSON written into a string, which a suffix would break.
        let rewrites = change
            && matches!(spec, ArgSpec::Synthesized(_) | ArgSpec::Auto(_))
            && cues.path_kind(name).is_none()
            && text.contains("witness")
            && !text.trim_start().starts_with(['[', '{']);
        if renames || rewrites {
            *spec = ArgSpec::Synthesized(serde_json::Value::String(format!("{text}{suffix}")));
        }
    }
    step
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A call that sent `args`, synthesized.
    fn sent(args: &[(&str, &str)]) -> CallRecord {
        let mut call = crate::audit::fakes::call(
            1,
            "t",
            witness_model::audit::CallStatus::Ok,
            Provenance::Synthesized,
            vec![],
        );
        call.arguments = args
            .iter()
            .map(|(name, value)| witness_model::audit::Argument {
                name: (*name).into(),
                value: json!(value),
                source: Provenance::Synthesized,
                from: None,
                object: None,
                parts: vec![],
            })
            .collect();
        call
    }

    #[test]
    fn a_confirmation_makes_fresh_names_anew_and_keeps_every_other_argument() {
        let step = PlanStep {
            tool: "create_note".into(),
            args: vec![
                ("title".into(), ArgSpec::Fresh(json!("witness-create_note"))),
                ("body".into(), ArgSpec::Synthesized(json!("text"))),
            ],
            ..PlanStep::default()
        };
        let again = afresh(&step, &sent(&[("body", "text")]), AGAIN);
        assert_eq!(
            again.args[0].1,
            ArgSpec::Fresh(json!("witness-create_note-again"))
        );
        assert_eq!(again.args[1].1, step.args[1].1);
    }

    #[test]
    fn a_confirmation_renames_to_a_new_name_not_the_one_the_first_call_gave() {
        let step = PlanStep {
            tool: "rename_category".into(),
            args: vec![
                ("old_name".into(), ArgSpec::Auto(json!("witness"))),
                (
                    "new_name".into(),
                    ArgSpec::Auto(json!("witness-rename_category")),
                ),
                ("note".into(), ArgSpec::Synthesized(json!("witness"))),
                (
                    "content".into(),
                    ArgSpec::Auto(json!("witness-rename_category")),
                ),
            ],
            ..PlanStep::default()
        };
        let original = sent(&[
            ("old_name", "witness-create_category"),
            ("new_name", "witness-rename_category"),
            ("note", "witness"),
            ("content", "witness-rename_category"),
        ]);
        let again = afresh(&step, &original, AGAIN);
        assert_eq!(
            again.args[1].1,
            ArgSpec::Synthesized(json!("witness-rename_category-again"))
        );
        assert_eq!(again.args[0].1, step.args[0].1);
        assert_eq!(again.args[2].1, step.args[2].1);
        // Content that happens to be the invented name is content.
        assert_eq!(again.args[3].1, step.args[3].1);
    }

    #[test]
    fn a_confirmation_is_sent_the_real_objects_its_call_was_sent_while_they_exist() {
        let mut pool = crate::plan::harvest::Pool::default();
        pool.absorb(
            "show_lists",
            1,
            &json!({"structuredContent": {"lists": [{"name": "groceries"}]}}),
        );
        // Made since: the pool would hand it first.
        pool.created("make_list", 2, "list", &json!("witness-make_list"), None);
        let step = PlanStep {
            tool: "export_list".into(),
            args: vec![
                ("list".into(), ArgSpec::Auto(json!("witness"))),
                ("note".into(), ArgSpec::Auto(json!("witness"))),
                ("save".into(), ArgSpec::Pinned(json!(true))),
            ],
            ..PlanStep::default()
        };
        let mut original = sent(&[
            ("list", "groceries"),
            ("note", "gone"),
            ("save", "groceries"),
        ]);
        for argument in &mut original.arguments {
            argument.source = Provenance::Harvested;
        }
        let mut again = step.clone();
        let never = |_: &witness_model::audit::Argument| false;
        on_the_same_objects(&mut again, &original, &pool, &never);
        assert!(
            matches!(&again.args[0].1, ArgSpec::Chosen(h) if h.value == json!("groceries")),
            "{:?}",
            again.args[0]
        );
        // Not held any more: filled anew; a pinned value stays.
        assert_eq!(again.args[1].1, step.args[1].1);
        assert_eq!(again.args[2].1, step.args[2].1);
        // Taken away since: filled anew.
        let mut after = step.clone();
        let list_gone = |a: &witness_model::audit::Argument| a.name == "list";
        on_the_same_objects(&mut after, &original, &pool, &list_gone);
        assert_eq!(after.args[0].1, step.args[0].1);
    }

    #[test]
    fn a_change_made_for_an_output_writes_new_text_where_a_confirmation_keeps_it() {
        let step = PlanStep {
            tool: "bulk_update_metadata".into(),
            args: vec![
                ("field".into(), ArgSpec::Pinned(json!("license"))),
                ("value".into(), ArgSpec::Synthesized(json!("witness"))),
                ("items".into(), ArgSpec::Synthesized(json!("[\"witness\"]"))),
                ("when".into(), ArgSpec::Synthesized(json!("2024-01-01"))),
                (
                    "file_path".into(),
                    ArgSpec::Synthesized(json!("/j/witness.md")),
                ),
            ],
            ..PlanStep::default()
        };
        let original = sent(&[
            ("field", "license"),
            ("value", "witness"),
            ("items", "[\"witness\"]"),
            ("when", "2024-01-01"),
            ("file_path", "/j/witness.md"),
        ]);
        let more = afresh(&step, &original, MORE);
        assert_eq!(more.args[1].1, ArgSpec::Synthesized(json!("witness-more")));
        for kept in [0, 2, 3, 4] {
            assert_eq!(more.args[kept].1, step.args[kept].1, "argument {kept}");
        }
        let anew = afresh(&step, &original, ANEW);
        assert_eq!(
            anew.args[1].1,
            ArgSpec::Synthesized(json!("witness-more-anew"))
        );
        // A confirmation sends the same text.
        assert_eq!(afresh(&step, &original, AGAIN).args[1].1, step.args[1].1);
    }

    #[test]
    fn a_confirmation_of_a_change_made_for_an_output_renames_to_a_new_name() {
        let step = PlanStep {
            tool: "rename_list".into(),
            args: vec![(
                "new_name".into(),
                ArgSpec::Synthesized(json!("witness-rename_list-more")),
            )],
            ..PlanStep::default()
        };
        let change = sent(&[("new_name", "witness-rename_list-more")]);
        let again = afresh(&step, &change, AGAIN);
        assert_eq!(
            again.args[0].1,
            ArgSpec::Synthesized(json!("witness-rename_list-more-again"))
        );
    }
}
