//! The suite's history of tool calls: every tool any run of BEFORE (and of
//! each `--history` document) asked for. A tool AFTER called that the
//! history never saw is reported, per case and suite-wide, until a person
//! acknowledges it: a description edit that makes an agent reach for a tool
//! it never used is exactly what a pass rate can hide.

use std::collections::BTreeSet;

use witness_model::agent::AgentRunDocument;
use witness_model::agent::compare::{HistoryCheck, NewTool};

use super::Inputs;

/// Tools ever called, and where that was read from.
pub(super) struct History {
    sources: Vec<String>,
    known: BTreeSet<String>,
}

/// Every tool a run of `document` asked for (sent or not: the model emitted it).
fn called(document: &AgentRunDocument) -> impl Iterator<Item = &str> {
    document
        .runs
        .iter()
        .flat_map(|run| run.trace.calls())
        .map(|call| call.tool.as_str())
}

impl History {
    pub(super) fn of(inputs: &Inputs<'_>) -> Self {
        let sides = std::iter::once(&inputs.before).chain(&inputs.history);
        let mut sources = Vec::new();
        let mut known = BTreeSet::new();
        for side in sides {
            sources.push(side.source.to_owned());
            known.extend(called(side.document).map(str::to_owned));
        }
        Self { sources, known }
    }

    /// The tools AFTER's runs of one case and model called that the history
    /// never saw, sorted.
    pub(super) fn new_in(&self, after: &AgentRunDocument, case: &str, model: &str) -> Vec<String> {
        let tools: BTreeSet<&str> = after
            .runs
            .iter()
            .filter(|r| r.case == case && r.model == model)
            .flat_map(|r| r.trace.calls())
            .map(|c| c.tool.as_str())
            .filter(|tool| !self.known.contains(*tool))
            .collect();
        tools.into_iter().map(str::to_owned).collect()
    }

    /// The suite-wide check: each new tool, the cases and runs that called it.
    pub(super) fn check(self, after: &AgentRunDocument, acknowledged: &[String]) -> HistoryCheck {
        let fresh: BTreeSet<&str> = called(after)
            .filter(|tool| !self.known.contains(*tool))
            .collect();
        let new_tools = fresh
            .into_iter()
            .map(|tool| {
                let runs: Vec<_> = after
                    .runs
                    .iter()
                    .filter(|r| r.trace.calls().any(|c| c.tool == tool))
                    .collect();
                let mut cases: Vec<String> = Vec::new();
                for run in &runs {
                    if !cases.contains(&run.case) {
                        cases.push(run.case.clone());
                    }
                }
                NewTool {
                    tool: tool.to_owned(),
                    cases,
                    runs: u32::try_from(runs.len()).unwrap_or(u32::MAX),
                    acknowledged: acknowledged.iter().any(|a| a == tool),
                }
            })
            .collect();
        let mut acknowledged = acknowledged.to_vec();
        acknowledged.sort();
        acknowledged.dedup();
        HistoryCheck {
            sources: self.sources,
            known: self.known.into_iter().collect(),
            acknowledged,
            new_tools,
        }
    }
}
