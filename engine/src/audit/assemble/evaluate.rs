//! Evaluate: the ledger judged.
//!
//! [`respond`] takes the report before redaction and the measured
//! latencies, and gives it its metadata findings and the response lane.
//! [`evaluate`] takes the redacted report and whether a probe that can tell
//! authority apart was used. Gives it a finding for every call with late
//! effects, the effect lane's verdicts ([`crate::checks::evaluate`]), the
//! summary tally of both lanes and the exit code.

use std::collections::BTreeMap;

use witness_model::audit::{AuditReport, CallRecord, Finding, FindingKind, Lane, Summary};
use witness_model::exit::ExitStatus;

use crate::checks;

/// The metadata findings and the response lane, read from what the server
/// really sent. Gives the secret-shaped strings the metadata holds, for
/// redaction to learn.
pub(super) fn respond(report: &mut AuditReport, latency: &BTreeMap<u32, u64>) -> Vec<String> {
    let scan = crate::metadata::scan(&report.tools);
    report.metadata = scan.findings;
    let ledger = checks::Ledger {
        tools: &report.tools,
        calls: &report.calls,
        baseline: &report.baseline_probes,
        probe_active: false,
        skipped: &report.planner.skipped,
        latency,
    };
    report.response = checks::evaluate_lane(Lane::Response, &ledger);
    scan.secrets
}

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
    let summary = Summary::of(
        &report.calls,
        &report.checks,
        &report.response,
        &report.metadata,
    );
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

/// 0 passed, 1 a check of either lane failed, 3 incomplete. An audit that
/// could not finish exits 3 even when a check already failed: exit 1
/// promises a completed audit. The failing verdicts stay in the report as
/// evidence. Metadata findings are not verdicts and never fail an audit.
pub(super) fn exit_code(complete: bool, summary: &Summary) -> i32 {
    ExitStatus::of_run(complete, summary.failed()).into()
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
        let summary = Summary::of(&[first, second], &checks, &[], &[]);
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
            ..Summary::default()
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
            CheckId::evaluated_in(Lane::Effect).len(),
            "every registered effect check, once for the one tool"
        );
    }

    #[test]
    fn a_response_failure_exits_1_and_is_counted_apart_from_the_effect_lane() {
        let mut report = lying_read_only();
        report.calls[0].effects.clear();
        report.calls[0].late_effects.clear();
        report.calls[0].expect = vec![Expectation::IsError];
        report.calls[0].response = Some(json!({"content": [{"type": "text", "text": "x"}]}));
        let secrets = respond(&mut report, &Default::default());
        assert!(secrets.is_empty());
        evaluate(&mut report, false);
        let rsp02 = report.check(CheckId::Rsp02, "peek").map(|c| c.verdict);
        assert_eq!(rsp02, Some(Verdict::Fail), "{:#?}", report.response);
        assert_eq!(report.summary.fail, 0, "the effect lane's count is its own");
        assert_eq!(report.summary.response.fail, 1);
        assert_eq!(report.exit_code, 1);
        // The four checks every audit runs, and the one the plan attached.
        let ids: Vec<CheckId> = report.response.iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                CheckId::Rsp02,
                CheckId::Rsp04,
                CheckId::Rsp07,
                CheckId::Rsp10,
                CheckId::Rsp11
            ]
        );
    }
}
