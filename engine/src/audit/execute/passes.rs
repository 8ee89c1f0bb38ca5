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
            if !retried && harvested.contains(&step.tool) {
                // Already called in the harvest pass.
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
            for step in reharvest_sources(&plan.steps[..plan.harvest], harvested) {
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
/// that need no harvested value themselves, and only those the first pass
/// could call.
pub(super) fn reharvest_sources<'p>(
    harvest: &'p [PlanStep],
    harvested: &[String],
) -> Vec<&'p PlanStep> {
    harvest
        .iter()
        .filter(|step| {
            let source = step
                .args
                .iter()
                .all(|(_, spec)| matches!(spec, ArgSpec::Pinned(_) | ArgSpec::Literal(_)));
            source && harvested.contains(&step.tool)
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
        let Ok((_, now)) = resolve(step, results, pool) else {
            continue;
        };
        if mine.iter().any(|c| c.arguments == now) {
            continue;
        }
        out.push(step.clone());
    }
    out
}
