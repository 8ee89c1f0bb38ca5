//! Evaluate: the ledger judged.
//!
//! [`respond`] takes the report before redaction and the measured
//! latencies, and gives it its metadata findings and the response lane.
//! [`evaluate`] takes the redacted report, whether a probe that can tell
//! authority apart was used, and `--min-coverage`. Gives it a finding for
//! every call with late effects, the effect lane's verdicts
//! ([`crate::checks::evaluate`]) — none of them a pass when nothing could be
//! observed — the summary tally of both lanes, the coverage and the exit code.

use std::collections::BTreeMap;

use witness_model::audit::{
    AuditReport, CallRecord, CheckResult, Coverage, Finding, FindingKind, JAIL_STORE, Lane,
    Summary, ToolEntry,
};
use witness_model::exit::ExitStatus;

use crate::audit::options::MIN_COVERAGE_PERCENT;
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
        network_unobserved: None,
        controls: checks::Controls::default(),
    };
    report.response = checks::evaluate_lane(Lane::Response, &ledger);
    scan.secrets
}

pub(super) fn evaluate(report: &mut AuditReport, probe_active: bool, min_coverage: Option<u8>) {
    report
        .findings
        .extend(report.calls.iter().filter_map(late_effect_finding));
    report.checks = effect_lane(report, &report.tools, probe_active);
    let summary = Summary::of(
        &report.calls,
        &report.checks,
        &report.response,
        &report.metadata,
    );
    let min_coverage = min_coverage.or_else(|| default_min_coverage(report));
    let coverage = Coverage::of(report, min_coverage);
    report.exit_code = exit_code(report.complete, &summary, &coverage);
    report.summary = summary;
    report.coverage = worth_recording(report, min_coverage).then_some(coverage);
}

/// The effect lane of `report`'s ledger judged against `tools`: the
/// recorded catalog, or one whose declarations differ (what the verdicts
/// would have been had the tools declared otherwise, `crate::suggest`).
/// The controls, the network observer's state and "nothing observed" are
/// the report's own.
pub(crate) fn effect_lane(
    report: &AuditReport,
    tools: &[ToolEntry],
    probe_active: bool,
) -> Vec<CheckResult> {
    let network_unobserved = network_unobserved(report);
    let mut lane = checks::evaluate(
        tools,
        &report.calls,
        &report.baseline_probes,
        probe_active,
        &report.planner.skipped,
        network_unobserved.as_deref(),
        checks::Controls {
            background: &report.background,
            stores: &report.stores,
        },
    );
    if let Some(why) = unobserved(report) {
        checks::without_observation(&mut lane, why);
    }
    lane
}

/// The coverage floor when none was asked: the planner's audits are held
/// to [`MIN_COVERAGE_PERCENT`] of the listed tools (docs/coverage.md says
/// why that figure); a plan file names its own scope and has none.
fn default_min_coverage(report: &AuditReport) -> Option<u8> {
    (report.planner.origin != "file").then_some(MIN_COVERAGE_PERCENT)
}

/// Why the network was not observed, when it was not: EFF-04 is then
/// untestable, never passed.
fn network_unobserved(report: &AuditReport) -> Option<String> {
    match &report.isolation.network_observer {
        Some(observer) if observer.observed => None,
        Some(observer) => Some(observer.detail.clone()),
        None => Some("the network was not observed: no server was launched in a jail".into()),
    }
}

/// Why nothing could have been observed, when nothing could: no store was
/// declared, and the rest of the jail (a launched server's HOME, TMPDIR and
/// working directory) saw no change either — or there is no jail at all.
fn unobserved(report: &AuditReport) -> Option<&'static str> {
    if !report.stores.is_empty() {
        return None;
    }
    if report.target.transport.is_some() {
        return Some("the server runs behind --url, and no store was declared to observe");
    }
    let seen = report
        .startup_effects
        .iter()
        .chain(&report.shutdown_effects)
        .chain(report.restarts.iter().flat_map(|r| &r.effects))
        .chain(
            report
                .calls
                .iter()
                .flat_map(|c| c.effects.iter().chain(&c.late_effects)),
        )
        .any(|e| e.store == JAIL_STORE);
    (!seen).then_some("no store was declared, and nothing changed in the jail's scope")
}

/// Whether the report carries its coverage: always, except for a plan file
/// carried out in full (every tool it names exercised) that concluded with
/// no `--min-coverage` asked. There the plan's own scope is the whole story,
/// and [`Coverage::of`] gives the numbers to whoever wants them.
fn worth_recording(report: &AuditReport, min_coverage: Option<u8>) -> bool {
    let planned_in_full = report.calls.iter().all(|call| {
        report
            .calls
            .iter()
            .any(|c| c.tool == call.tool && c.succeeded())
    });
    report.planner.origin != "file"
        || min_coverage.is_some()
        || !planned_in_full
        || report.exit_code == i32::from(ExitStatus::Incomplete.code())
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

/// 0 passed, 1 a check of either lane failed, 3 incomplete or nothing
/// concluded. An audit that could not finish exits 3 even when a check
/// already failed: exit 1 promises a completed audit. The failing verdicts
/// stay in the report as evidence. A finished audit that concluded nothing
/// (no effect check rests on an observation, or fewer tools exercised than
/// `--min-coverage`) exits 3 too: it never claims to have passed. Metadata
/// findings are not verdicts and never fail an audit.
pub(super) fn exit_code(complete: bool, summary: &Summary, coverage: &Coverage) -> i32 {
    ExitStatus::of_audit(complete, summary.failed(), coverage.concluded).into()
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
            late: 1,
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
        let concluded = Coverage {
            concluded: true,
            ..Coverage::default()
        };
        let nothing = Coverage::default();
        assert_eq!(exit_code(true, &Summary::default(), &concluded), 0);
        assert_eq!(exit_code(true, &failing, &concluded), 1);
        assert_eq!(exit_code(false, &Summary::default(), &concluded), 3);
        assert_eq!(exit_code(false, &failing, &concluded), 3);
        assert_eq!(exit_code(true, &Summary::default(), &nothing), 3);
        assert_eq!(
            exit_code(true, &failing, &nothing),
            1,
            "a failure concludes"
        );
    }

    fn declared_store() -> StoreEntry {
        StoreEntry {
            name: "db".into(),
            kind: "sqlite".into(),
            path: "/x.db".into(),
            existed: true,
            observer: "sqlite".into(),
            clock_columns: Vec::new(),
        }
    }

    /// A read-only tool that wrote: EFF-01 fails.
    fn lying_read_only() -> AuditReport {
        let mut report = fakes::report();
        report.stores = vec![declared_store()];
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
        evaluate(&mut report, false, None);
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
        evaluate(&mut report, false, None);
        assert_eq!(report.exit_code, 3);
        assert_eq!(report.summary.fail, 1, "the failure stays as evidence");
    }

    #[test]
    fn a_clean_audit_exits_0_and_a_quiet_call_adds_no_finding() {
        let mut report = lying_read_only();
        report.calls[0].effects.clear();
        report.calls[0].late_effects.clear();
        evaluate(&mut report, false, None);
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
        evaluate(&mut report, false, None);
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
        let coverage = report.coverage.as_ref();
        assert_eq!(coverage.map(|c| (c.tools, c.exercised)), Some((1, 1)));
    }

    #[test]
    fn with_nothing_observed_no_effect_check_passes_and_nothing_is_concluded() {
        let mut report = lying_read_only();
        report.stores.clear();
        report.calls[0].effects.clear();
        report.calls[0].late_effects.clear();
        evaluate(&mut report, false, None);
        assert!(
            report.checks.iter().all(|c| c.verdict != Verdict::Pass),
            "{:?}",
            report.checks
        );
        let eff01 = report.check(CheckId::Eff01, "peek");
        assert_eq!(eff01.map(|c| c.verdict), Some(Verdict::Untestable));
        assert_eq!(
            eff01.map(|c| c.reason.as_str()),
            Some(
                "nothing was observed: no store was declared, and nothing changed in the jail's scope"
            )
        );
        assert_eq!(report.exit_code, 3);
        let coverage = report.coverage.clone().unwrap_or_default();
        assert!(!coverage.concluded);
        assert_eq!(
            coverage.not_concluded.as_deref(),
            Some(
                "no effect check rests on an observation: nothing was observed: no store was declared, and nothing changed in the jail's scope"
            )
        );
        // Over HTTP, with no store, there is no jail to see anything in.
        let mut remote = lying_read_only();
        remote.stores.clear();
        remote.target.transport = Some("http".into());
        remote.calls[0].effects.clear();
        remote.calls[0].late_effects.clear();
        evaluate(&mut remote, false, None);
        assert_eq!(remote.exit_code, 3);
        assert!(
            remote.checks.iter().any(|c| c.reason
                == "nothing was observed: the server runs behind --url, and no store was declared to observe")
        );
        // Something seen in the jail is an observation: the checks stand.
        let mut jailed = lying_read_only();
        jailed.stores.clear();
        jailed.calls[0].late_effects.clear();
        jailed.calls[0].effects = vec![fakes::effect(JAIL_STORE, "file/home/x", Op::Create)];
        evaluate(&mut jailed, false, None);
        assert_eq!(
            jailed.exit_code, 1,
            "EFF-01 and EFF-05 fail on what was seen"
        );
    }

    #[test]
    fn min_coverage_is_counted_exactly_and_an_unmet_one_concludes_nothing() {
        // One quiet call of two listed tools, judged against `minimum`.
        let half_exercised = |minimum: u8| {
            let mut report = lying_read_only();
            report.calls[0].effects.clear();
            report.calls[0].late_effects.clear();
            report.tools.push(tool_entry(&fakes::listed(
                "never",
                json!({"readOnlyHint": true}),
                &[],
            )));
            evaluate(&mut report, false, Some(minimum));
            report
        };
        assert_eq!(half_exercised(50).exit_code, 0, "1 of 2 is 50%");
        let report = half_exercised(51);
        assert_eq!(report.exit_code, 3);
        let coverage = report.coverage.unwrap_or_default();
        assert_eq!(
            coverage.not_concluded.as_deref(),
            Some("1 of 2 tools exercised (50%), below --min-coverage 51%; not exercised: never")
        );
        let never = coverage.by_tool.iter().find(|t| t.tool == "never");
        assert_eq!(
            never.and_then(|t| t.why.as_deref()),
            Some("not called: the audit ended before it")
        );
    }
}
