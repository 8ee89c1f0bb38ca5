//! Evaluate: the ledger judged.
//!
//! Takes the redacted report and whether a probe that can tell authority
//! apart was used. Gives it a finding for every call with late effects, the
//! checks' verdicts ([`crate::checks::evaluate`]), the summary tally and the
//! exit code.

use witness_model::audit::{AuditReport, CallRecord, Finding, FindingKind, Summary};
use witness_model::exit::ExitStatus;

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
    let summary = Summary::of(&report.calls, &report.checks);
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

/// 0 passed, 1 a check failed, 3 incomplete. An audit that could not finish
/// exits 3 even when a check already failed: exit 1 promises a completed
/// audit. The failing verdicts stay in the report as evidence.
pub(super) fn exit_code(complete: bool, summary: &Summary) -> i32 {
    ExitStatus::of_run(complete, summary.fail > 0).into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::*;

    use super::*;
    use crate::audit::execute::tool_entry;
    use crate::audit::fakes;

    fn check(verdict: Verdict) -> CheckResult {
        CheckResult {
            id: CheckId::Eff01,
            tool: "t".into(),
            verdict,
            reason: String::new(),
            evidence: Evidence::default(),
        }
    }

    #[test]
    fn the_tally_counts_verdicts_and_only_the_calls_own_effects() {
        let mut first = fakes::call(
            1,
            "a",
            CallStatus::Ok,
            Provenance::Literal,
            vec![
                fakes::effect("db", "n/1", Op::Create),
                fakes::effect("db", "n/2", Op::Update),
                fakes::effect(JAIL_STORE, "file/home/.cache", Op::Create),
            ],
        );
        first.late_effects = vec![fakes::effect("db", "n/9", Op::Create)];
        first.event_effects = vec![fakes::effect("db", "n/8", Op::Delete)];
        let second = fakes::call(
            2,
            "b",
            CallStatus::ToolError,
            Provenance::Synthesized,
            vec![fakes::effect("db", "n/1", Op::Delete)],
        );
        let checks = [
            check(Verdict::Pass),
            check(Verdict::Pass),
            check(Verdict::Fail),
            check(Verdict::Skip),
            check(Verdict::Untestable),
        ];
        let summary = Summary::of(&[first, second], &checks);
        let expected = Summary {
            pass: 2,
            fail: 1,
            skip: 1,
            untestable: 1,
            calls: 2,
            creates: 1,
            updates: 1,
            deletes: 1,
            outside_stores: 1,
        };
        assert_eq!(summary, expected);
    }

    #[test]
    fn exit_codes_promise_a_completed_audit_before_anything_else() {
        let failing = Summary {
            fail: 1,
            ..Summary::default()
        };
        assert_eq!(exit_code(true, &Summary::default()), 0);
        assert_eq!(exit_code(true, &failing), 1);
        assert_eq!(exit_code(false, &Summary::default()), 3);
        assert_eq!(exit_code(false, &failing), 3);
    }

    /// A read-only tool that wrote: EFF-01 fails.
    fn lying_read_only() -> AuditReport {
        let mut report = fakes::report();
        report.tools = vec![tool_entry(&fakes::listed(
            "peek",
            json!({"readOnlyHint": true}),
            &[],
        ))];
        let mut call = fakes::call(
            1,
            "peek",
            CallStatus::Ok,
            Provenance::Literal,
            vec![fakes::effect("db", "n/1", Op::Create)],
        );
        call.late_effects = vec![
            fakes::effect("db", "n/2", Op::Create),
            fakes::effect("db", "n/3", Op::Create),
        ];
        report.calls = vec![call];
        report
    }

    #[test]
    fn a_failing_check_exits_1_but_an_incomplete_audit_exits_3_and_keeps_the_failure() {
        let mut report = lying_read_only();
        evaluate(&mut report, false);
        let eff01 = report.check(CheckId::Eff01, "peek").map(|c| c.verdict);
        assert_eq!(eff01, Some(Verdict::Fail));
        assert_eq!(report.summary.fail, 1);
        assert_eq!(report.summary.calls, 1);
        assert_eq!(report.exit_code, 1);
        let late: Vec<(&str, Option<u32>)> = report
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::LateEffect)
            .map(|f| (f.detail.as_str(), f.call))
            .collect();
        assert_eq!(
            late,
            [(
                "2 change(s) appeared after call 1 had settled; they are charged to no call",
                Some(1)
            )]
        );

        let mut report = lying_read_only();
        report.complete = false;
        evaluate(&mut report, false);
        assert_eq!(report.exit_code, 3);
        assert_eq!(report.summary.fail, 1, "the failure stays as evidence");
    }

    #[test]
    fn a_clean_audit_exits_0_and_a_quiet_call_adds_no_finding() {
        let mut report = lying_read_only();
        report.calls[0].effects.clear();
        report.calls[0].late_effects.clear();
        evaluate(&mut report, false);
        assert_eq!(report.exit_code, 0);
        assert_eq!(report.summary.fail, 0);
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert_eq!(
            report.checks.len(),
            crate::checks::REGISTRY.len(),
            "every registered check, once for the one tool"
        );
    }
}
