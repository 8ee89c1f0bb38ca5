//! The case document: counts and verdicts read from one audit.

use std::collections::BTreeMap;
use std::path::Path;

use witness_model::audit::{AuditReport, CallStatus, EffectTally, Verdict};
use witness_model::case::*;

use super::install::package_description;
use super::notes::notes;
use super::table::{CaseSpec, initial_state, observer_description};

/// Counts, verdicts and notes of one case, all read from its audit.
pub fn summarize(dir: &Path, case: &CaseSpec, report: &AuditReport, audit: String) -> CaseReport {
    let description = package_description(dir, case);
    CaseReport {
        schema: CASE_SCHEMA.into(),
        name: case.name.into(),
        server: CaseServer {
            package: case.package.into(),
            version: case.version.into(),
            bin: case.bin.into(),
            publisher: case.publisher.into(),
            description,
            server_info: report.era.server_info.clone(),
            protocol_version: report.era.protocol_version.clone(),
        },
        store: CaseStore {
            kind: case.store_kind.as_str().into(),
            observer: observer_description(case.store_kind).into(),
            how: case.store_how.into(),
            initial: initial_state(case).into(),
        },
        annotations: AnnotationSummary::of(&report.tools),
        observed: observed_summary(report),
        checks: check_summary(report),
        complete: report.complete,
        incomplete_reason: report.incomplete_reason.clone(),
        exit_code: report.exit_code,
        notes: notes(report),
        audit,
    }
}

fn observed_summary(report: &AuditReport) -> ObservedSummary {
    let mut by_tool: BTreeMap<String, ToolObserved> = BTreeMap::new();
    for call in &report.calls {
        let entry = by_tool.entry(call.tool.clone()).or_default();
        if call.outcome.status != CallStatus::NotSent {
            entry.calls += 1;
        }
        if !call.succeeded() {
            entry.failed += 1;
        }
        let tally = EffectTally::of(&call.effects);
        entry.creates += tally.creates;
        entry.updates += tally.updates;
        entry.deletes += tally.deletes;
    }
    ObservedSummary {
        calls: report
            .calls
            .iter()
            .filter(|c| c.outcome.status != CallStatus::NotSent)
            .count(),
        creates: report.summary.creates,
        updates: report.summary.updates,
        deletes: report.summary.deletes,
        outside_stores: report.summary.outside_stores,
        at_startup: report.startup_effects.len(),
        late: report.summary.late,
        by_tool,
    }
}

fn check_summary(report: &AuditReport) -> BTreeMap<String, CheckSummary> {
    let mut out: BTreeMap<String, CheckSummary> = BTreeMap::new();
    for check in &report.checks {
        let entry = out.entry(check.id.to_string()).or_default();
        match check.verdict {
            Verdict::Pass => entry.pass += 1,
            Verdict::Fail => entry.fail += 1,
            Verdict::Skip => entry.skip += 1,
            Verdict::Untestable => entry.untestable += 1,
        }
        entry.tools.insert(check.tool.clone(), check.verdict);
    }
    out
}
