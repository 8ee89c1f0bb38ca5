//! Confirmation: every effect-lane failure is asked again before it is
//! reported.
//!
//! Once the plan is carried out, the effect lane is judged on the ledger so
//! far ([`crate::checks::evaluate`], with the idle controls' background).
//! The first call behind each failure of a confirmed check
//! ([`crate::checks::CONFIRMED`]) is made again, recorded with `confirms`:
//! its step resolved anew, so an argument the planner made fresh is fresh
//! again (a one-shot effect, such as creating a new name, is confirmed on a
//! fresh object), and like every call it waits for its idle control first.
//! The checks then hold each failure to its confirmation
//! ([`crate::checks`]'s `confirm`).

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use witness_model::audit::Verdict;

use super::calls::{Call, Runner};
use crate::checks::{self, CONFIRMED, Controls};
use crate::plan::{ArgSpec, PlanStep, resolve};

impl Runner<'_> {
    /// Makes one confirmation call for every failing call of a confirmed
    /// check. Breaks when the audit cannot go on.
    pub(super) fn confirm_failures(&mut self) -> ControlFlow<()> {
        let report = &self.draft.report;
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
            .collect();
        for id in failing {
            let Some(step_no) = self
                .draft
                .report
                .calls
                .iter()
                .find(|c| c.id == id)
                .map(|c| c.step)
            else {
                continue;
            };
            let Some(step) = self.steps.get(&step_no).map(afresh) else {
                continue;
            };
            // A step that cannot be resolved again leaves its failure as
            // observed: unconfirmed, never invented.
            let Ok(resolved) = resolve(&step, &self.results, &self.pool) else {
                continue;
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

/// `step` with every fresh name made anew (`witness-note` becomes
/// `witness-note-again`): what the first call made exists now, and a
/// one-shot effect is only reproduced on a fresh object.
fn afresh(step: &PlanStep) -> PlanStep {
    let mut step = step.clone();
    for (_, spec) in &mut step.args {
        if let ArgSpec::Fresh(serde_json::Value::String(name)) = spec {
            name.push_str("-again");
        }
    }
    step
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
        let again = afresh(&step);
        assert_eq!(
            again.args[0].1,
            ArgSpec::Fresh(json!("witness-create_note-again"))
        );
        assert_eq!(again.args[1].1, step.args[1].1);
    }
}
