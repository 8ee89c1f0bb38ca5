//! Evaluate: the ledger judged.
//!
//! Takes the redacted report and whether a probe that can tell authority
//! apart was used. Gives it a finding for every call with late effects, the
//! checks' verdicts ([`crate::checks::evaluate`]), the summary tally and the
//! exit code.

use witness_model::audit::{
    AuditReport, CallRecord, CheckResult, Finding, FindingKind, Op, Summary, Verdict,
};

use crate::checks;

pub(super) fn evaluate(report: &mut AuditReport, probe_active: bool) {
    report
        .findings
        .extend(report.calls.iter().filter_map(late_effect_finding));
    report.checks = checks::evaluate(
        &report.tools,
        &report.calls,
        &report.baseline_probes,
        probe_active,
        &report.planner.skipped,
    );
    let summary = tally(&report.calls, &report.checks);
    report.exit_code = exit_code(report.complete, &summary);
    report.summary = summary;
}

/// Changes that landed after a call had settled are charged to no call, but
/// a reader is told they happened.
fn late_effect_finding(call: &CallRecord) -> Option<Finding> {
    if call.late_effects.is_empty() {
        return None;
    }
    Some(Finding {
        kind: FindingKind::LateEffect,
        detail: format!(
            "{} change(s) appeared after call {} had settled; they are charged to no call",
            call.late_effects.len(),
            call.id
        ),
        call: Some(call.id),
    })
}

/// Verdicts by kind, and the calls' own effects by op. Effects outside the
/// declared stores are counted apart; late and event effects are no call's.
pub(super) fn tally(calls: &[CallRecord], checks: &[CheckResult]) -> Summary {
    let mut summary = Summary {
        calls: calls.len(),
        ..Summary::default()
    };
    for check in checks {
        match check.verdict {
            Verdict::Pass => summary.pass += 1,
            Verdict::Fail => summary.fail += 1,
            Verdict::Skip => summary.skip += 1,
            Verdict::Untestable => summary.untestable += 1,
        }
    }
    for effect in calls.iter().flat_map(|c| &c.effects) {
        if effect.outside_stores() {
            summary.outside_stores += 1;
            continue;
        }
        match effect.op {
            Op::Create => summary.creates += 1,
            Op::Update => summary.updates += 1,
            Op::Delete => summary.deletes += 1,
        }
    }
    summary
}

/// 0 passed, 1 a check failed, 3 incomplete. An audit that could not finish
/// exits 3 even when a check already failed: exit 1 promises a completed
/// audit. The failing verdicts stay in the report as evidence.
pub(super) fn exit_code(complete: bool, summary: &Summary) -> i32 {
    if !complete {
        3
    } else if summary.fail > 0 {
        1
    } else {
        0
    }
}
