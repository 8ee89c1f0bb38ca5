//! The order of the calls: the harvest pass, the plan's other steps, and
//! one retry pass for tools that failed on invented arguments.
//!
//! The decisions are plain functions of the ledger so far ([`retries`],
//! [`failed_on_invention`], [`reharvest_sources`]); [`Runner::run_plan`]
//! only carries them out.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use serde_json::Value;
use witness_model::audit::{CallRecord, CallStatus};

use super::calls::Runner;
use crate::plan::harvest::Pool;
use crate::plan::{ArgSpec, Plan, PlanStep, resolve, satisfiable};

impl Runner<'_> {
    /// Every step of `plan`, in order. Breaks when the audit cannot go on.
    pub(super) fn run_plan(&mut self, plan: &Plan) -> ControlFlow<()> {
        self.expect = plan.expect.clone();
        self.planned = plan.steps.len();
        let harvested = self.harvest_pass(&plan.steps[..plan.harvest])?;
        let mut steps: Vec<PlanStep> = plan.steps[plan.harvest..].to_vec();
        let mut retry_at = plan.retry_at.map(|r| r.saturating_sub(plan.harvest));
        let mut index = 0usize;
        let mut retries_end = 0usize;
        while index < steps.len() || retry_at.is_some() {
            if retry_at == Some(index) {
                retry_at = None;
                let again = self.retry_pass(plan, &harvested)?;
                retries_end = index + again.len();
                steps.splice(index..index, again);
                continue;
            }
            let step = steps[index].clone();
            index += 1;
            let retried = index <= retries_end;
            if !retried && harvested.contains(&step.tool) && !step.writer_shaped() {
                // Already called in the harvest pass, and asked the same way.
                continue;
            }
            self.step(&step)?;
        }
        ControlFlow::Continue(())
    }

    /// Read-only tools, each once every required argument can be filled
    /// without inventing anything, until none can. Gives the tools called.
    fn harvest_pass(&mut self, steps: &[PlanStep]) -> ControlFlow<(), Vec<String>> {
        let mut pending = steps.to_vec();
        let mut harvested = Vec::new();
        while let Some(i) = pending
            .iter()
            .position(|step| satisfiable(step, &self.pool))
        {
            let step = pending.remove(i);
            self.harvest(&step)?;
            harvested.push(step.tool);
        }
        ControlFlow::Continue(harvested)
    }

    /// One more chance for tools that failed on invented arguments, now that
    /// the harvest may hold real ones: the steps to run again.
    fn retry_pass(&mut self, plan: &Plan, harvested: &[String]) -> ControlFlow<(), Vec<PlanStep>> {
        if failed_on_invention(&self.draft.report.calls) {
            // Harvest again first: the writes since the first pass may have
            // made the real values those tools need.
            let sources = reharvest_sources(
                &plan.steps[..plan.harvest],
                harvested,
                &self.draft.report.calls,
            );
            for step in sources {
                self.harvest(step)?;
            }
        }
        ControlFlow::Continue(retries(
            &self.draft.report.calls,
            &plan.steps,
            &self.results,
            &self.pool,
        ))
    }
}

/// The harvest steps asked again before a retry: the sources, listing tools
/// (by name: a name only ever chooses what to ask, never a safety class)
/// that need no harvested value themselves, and only those the first pass
/// called with success (one that failed, or timed out, gave no values the
/// first time and would cost as much again).
pub(super) fn reharvest_sources<'p>(
    harvest: &'p [PlanStep],
    harvested: &[String],
    calls: &[CallRecord],
) -> Vec<&'p PlanStep> {
    harvest
        .iter()
        .filter(|step| {
            let source = step
                .args
                .iter()
                .all(|(_, spec)| matches!(spec, ArgSpec::Pinned(_) | ArgSpec::Literal(_)));
            let answered = calls.iter().any(|c| c.tool == step.tool && c.succeeded());
            source
                && answered
                && crate::plan::lists_by_name(&step.tool)
                && harvested.contains(&step.tool)
        })
        .collect()
}

/// Whether every call of `calls` failed on synthesized arguments.
fn all_failed_on_invention<'c>(mut calls: impl Iterator<Item = &'c CallRecord>) -> bool {
    calls.all(|c| {
        matches!(
            c.outcome.status,
            CallStatus::ToolError | CallStatus::RpcError
        ) && c.used_synthesized()
    })
}

/// Whether some tool has been called and every call of it failed on
/// synthesized arguments.
pub(super) fn failed_on_invention(calls: &[CallRecord]) -> bool {
    let tools: BTreeSet<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    tools
        .into_iter()
        .any(|tool| all_failed_on_invention(calls.iter().filter(|c| c.tool == tool)))
}

/// Steps to try again: tools none of whose calls succeeded, that failed on
/// synthesized arguments, and for which the harvest now offers other values.
pub(super) fn retries(
    calls: &[CallRecord],
    steps: &[PlanStep],
    results: &BTreeMap<u32, Value>,
    pool: &Pool,
) -> Vec<PlanStep> {
    let mut out = Vec::new();
    for step in steps {
        if out.iter().any(|s: &PlanStep| s.tool == step.tool) {
            continue;
        }
        let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == step.tool).collect();
        if mine.is_empty() || !all_failed_on_invention(mine.iter().copied()) {
            continue;
        }
        let Ok(now) = resolve(step, results, pool) else {
            continue;
        };
        if mine.iter().any(|c| c.arguments == now.recorded) {
            continue;
        }
        out.push(step.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::Provenance;

    use super::*;
    use crate::audit::fakes;

    fn auto(tool: &str, param: &str) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: vec![(param.into(), ArgSpec::Auto(json!("witness")))],
            ..Default::default()
        }
    }

    /// A call of `step` as it was made before anything was harvested.
    fn made(id: u32, step: &PlanStep, status: CallStatus) -> CallRecord {
        let mut call = fakes::call(id, &step.tool, status, Provenance::Synthesized, vec![]);
        if let Ok(resolved) = resolve(step, &BTreeMap::new(), &Pool::default()) {
            call.arguments = resolved.recorded;
        }
        call
    }

    #[test]
    fn retried_are_tools_that_only_failed_on_invention_and_now_resolve_otherwise() {
        let open = auto("open_note", "note_id");
        let stuck = auto("open_thing", "widget_id");
        let fine = auto("show_note", "note_id");
        let uncalled = auto("close_note", "note_id");
        let literal = PlanStep {
            tool: "pin_note".into(),
            args: vec![("note_id".into(), ArgSpec::Literal(json!("x")))],
            ..Default::default()
        };
        let calls = [
            made(1, &open, CallStatus::ToolError),
            made(2, &open, CallStatus::RpcError),
            // No harvested value fits a widget: it would fail the same way.
            made(3, &stuck, CallStatus::ToolError),
            made(4, &fine, CallStatus::ToolError),
            made(5, &fine, CallStatus::Ok),
            // A failure on a person's value is not the planner's to retry.
            made(6, &literal, CallStatus::ToolError),
        ];
        let mut pool = Pool::default();
        pool.absorb(
            "list_notes",
            7,
            &json!({"structuredContent": {"notes": [{"id": "note_0001"}]}}),
        );
        let steps = [open.clone(), stuck, fine, uncalled, literal, open.clone()];
        let again = retries(&calls, &steps, &BTreeMap::new(), &pool);
        assert_eq!(again, [open], "once, though planned twice");
        assert!(retries(&calls, &steps, &BTreeMap::new(), &Pool::default()).is_empty());
    }

    #[test]
    fn failed_on_invention_needs_every_call_of_some_tool_to_fail_on_invented_values() {
        let open = auto("open_note", "note_id");
        let fine = auto("show_note", "note_id");
        assert!(!failed_on_invention(&[]));
        assert!(failed_on_invention(&[
            made(1, &fine, CallStatus::Ok),
            made(2, &open, CallStatus::ToolError),
        ]));
        assert!(!failed_on_invention(&[
            made(1, &open, CallStatus::ToolError),
            made(2, &open, CallStatus::Ok),
        ]));
        assert!(!failed_on_invention(&[made(
            1,
            &open,
            CallStatus::TransportError
        )]));
        let mut person = made(1, &open, CallStatus::ToolError);
        person.arguments[0].source = Provenance::Literal;
        assert!(!failed_on_invention(&[person]));
    }

    #[test]
    fn reharvested_are_the_sources_the_first_pass_called() {
        let list = PlanStep {
            tool: "list_notes".into(),
            args: vec![("limit".into(), ArgSpec::Pinned(json!(10)))],
            ..Default::default()
        };
        let search = PlanStep {
            tool: "search_notes".into(),
            args: vec![("q".into(), ArgSpec::Literal(json!("a")))],
            ..Default::default()
        };
        let never = PlanStep {
            tool: "list_tags".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let stats = PlanStep {
            tool: "stats".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let get = auto("get_note", "note_id");
        let slow = PlanStep {
            tool: "list_slowly".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let harvest = [
            list.clone(),
            get,
            never,
            search.clone(),
            slow.clone(),
            stats.clone(),
        ];
        let harvested = [
            "get_note".to_owned(),
            "search_notes".to_owned(),
            "list_notes".to_owned(),
            "list_slowly".to_owned(),
            "stats".to_owned(),
        ];
        let calls = [
            made(1, &list, CallStatus::Ok),
            made(2, &search, CallStatus::Ok),
            made(3, &slow, CallStatus::TransportError),
            made(4, &stats, CallStatus::Ok),
        ];
        let sources: Vec<&str> = reharvest_sources(&harvest, &harvested, &calls)
            .into_iter()
            .map(|s| s.tool.as_str())
            .collect();
        assert_eq!(
            sources,
            ["list_notes", "search_notes"],
            "in plan order; not the one that never answered, nor one that lists nothing"
        );
    }
}
