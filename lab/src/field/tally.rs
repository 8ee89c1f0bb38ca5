//! The study's numbers, read from a server's audits and its ground truth:
//! one row per tool × hint, the server's summary, and the per-hint tallies
//! over every server.

use std::collections::BTreeMap;

use witness_model::audit::{AuditReport, CheckResult, Coverage, Verdict};
use witness_model::field::*;
use witness_model::vocab::{CheckId, Hint};

use super::entry::{ToolTruth, Truth};
use super::lies::{Lie, LieKind};

/// The name of the honest variant.
pub const HONEST: &str = "honest";

/// The check that holds a tool to a hint: a read-only claim by EFF-01, a
/// non-destructive one by EFF-02, an idempotent one by EFF-03, a closed
/// world by EFF-04.
pub fn check_of(hint: Hint) -> CheckId {
    match hint {
        Hint::ReadOnly => CheckId::Eff01,
        Hint::Destructive => CheckId::Eff02,
        Hint::Idempotent => CheckId::Eff03,
        Hint::OpenWorld => CheckId::Eff04,
    }
}

/// What the ground truth says a hint's value is for a tool.
pub fn truth_value(truth: &ToolTruth, hint: Hint) -> bool {
    match hint {
        Hint::ReadOnly => !truth.writes,
        Hint::Destructive => truth.deletes_or_overwrites,
        Hint::Idempotent => truth.idempotent,
        Hint::OpenWorld => truth.network,
    }
}

/// Whether the ground truth says the claim a failing check held a tool to
/// is really false (confirmed), really true (a false failure), or cannot
/// say (no truth, or EFF-05, whose claim is the audit's own).
pub fn judge(check: CheckId, truth: Option<&ToolTruth>) -> &'static str {
    let Some(t) = truth else {
        return "unjudged";
    };
    let wrong = match check {
        CheckId::Eff01 | CheckId::Eff06 => t.writes,
        CheckId::Eff02 => t.deletes_or_overwrites,
        CheckId::Eff03 => !t.idempotent,
        CheckId::Eff04 => t.network,
        _ => return "unjudged",
    };
    if wrong { "confirmed" } else { "false" }
}

fn check_on<'a>(report: &'a AuditReport, tool: &str, id: CheckId) -> Option<&'a CheckResult> {
    report.checks.iter().find(|c| c.tool == tool && c.id == id)
}

fn coverage(report: &AuditReport) -> Coverage {
    report
        .coverage
        .clone()
        .unwrap_or_else(|| Coverage::of(report, None))
}

fn exercised(report: &AuditReport, tool: &str) -> bool {
    coverage(report)
        .by_tool
        .iter()
        .any(|t| t.tool == tool && t.call.is_some())
}

/// Why a tool's check on a hint has no pass or fail: its verdict and
/// reason, or why the tool was not exercised.
fn why_not_decided(report: &AuditReport, tool: &str, hint: Hint) -> String {
    if let Some(c) = check_on(report, tool, check_of(hint)) {
        return format!("{}: {}", c.verdict.as_str(), c.reason);
    }
    if !exercised(report, tool) {
        let why = coverage(report)
            .by_tool
            .into_iter()
            .find(|t| t.tool == tool)
            .and_then(|t| t.why)
            .unwrap_or_else(|| "not called".to_owned());
        return format!("not exercised: {why}");
    }
    format!("no {} verdict", check_of(hint).as_str())
}

/// One server's audits summed up: its lies, its failures judged against
/// the truth, and its dataset rows.
pub fn summarize(
    server: FieldServer,
    truth: Option<&Truth>,
    honest: &AuditReport,
    lies: &[(Lie, AuditReport)],
) -> (FieldServer, Vec<FieldRow>) {
    let cov = coverage(honest);
    let tool_truth = |tool: &str| truth.and_then(|t| t.tool(tool));
    let mut failures = Vec::new();
    let effect_fails = |r: &AuditReport| -> Vec<CheckResult> {
        r.checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .cloned()
            .collect()
    };
    for c in effect_fails(honest) {
        failures.push(FieldFailure {
            variant: HONEST.into(),
            check: c.id.as_str().into(),
            judged: judge(c.id, tool_truth(&c.tool)).into(),
            tool: c.tool,
        });
    }
    let mut planted = Vec::new();
    for (lie, report) in lies {
        let mut checks = Vec::new();
        for c in effect_fails(report) {
            // A lie is caught by a check of the hint it is about; any other
            // failure on the lying tool (EFF-05: an effect outside the
            // declared stores) is judged like every other failure.
            if c.tool == lie.tool && c.id.hints().contains(&lie.kind.hint()) {
                checks.push(c.id.as_str().to_owned());
            } else {
                failures.push(FieldFailure {
                    variant: lie.variant(),
                    check: c.id.as_str().into(),
                    judged: judge(c.id, tool_truth(&c.tool)).into(),
                    tool: c.tool,
                });
            }
        }
        checks.sort();
        checks.dedup();
        let caught = !checks.is_empty();
        planted.push(FieldLie {
            tool: lie.tool.clone(),
            lie: lie.kind.as_str().into(),
            caught,
            checks,
            exercised: exercised(report, &lie.tool),
            missed_why: (!caught).then(|| why_not_decided(report, &lie.tool, lie.kind.hint())),
            exit_code: report.exit_code,
        });
    }
    let mut rows = Vec::new();
    for tool in &honest.tools {
        for hint in Hint::ALL {
            let declared = match hint {
                Hint::ReadOnly => tool.hints.read_only,
                Hint::Destructive => tool.hints.destructive,
                Hint::Idempotent => tool.hints.idempotent,
                Hint::OpenWorld => tool.hints.open_world,
            };
            let verdict = check_on(honest, &tool.name, check_of(hint)).map(|c| c.verdict);
            let decided = matches!(verdict, Some(Verdict::Pass | Verdict::Fail));
            let lie = planted
                .iter()
                .find(|l| l.tool == tool.name && lie_hint(&l.lie) == Some(hint));
            rows.push(FieldRow {
                server: server.id.clone(),
                tool: tool.name.clone(),
                hint: hint.key().into(),
                declared,
                truth: tool_truth(&tool.name).map(|t| truth_value(t, hint)),
                honest: verdict.map(|v| v.as_str().to_owned()),
                why_untested: (!decided).then(|| why_not_decided(honest, &tool.name, hint)),
                lie_planted: lie.is_some(),
                caught: lie.map(|l| l.caught),
                why_missed: lie.and_then(|l| l.missed_why.clone()),
            });
        }
    }
    let summary = FieldServer {
        tools: cov.tools,
        exercised: cov.exercised,
        annotated: honest
            .tools
            .iter()
            .filter(|t| t.annotations.is_some())
            .count(),
        exit_code: honest.exit_code,
        complete: honest.complete,
        lies: planted,
        failures,
        ..server
    };
    (summary, rows)
}

fn lie_hint(kind: &str) -> Option<Hint> {
    LieKind::ALL
        .into_iter()
        .find(|k| k.as_str() == kind)
        .map(LieKind::hint)
}

fn counted(whys: Vec<String>) -> Vec<FieldCount> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for why in whys {
        *counts.entry(why).or_default() += 1;
    }
    let mut counts: Vec<FieldCount> = counts
        .into_iter()
        .map(|(why, count)| FieldCount { why, count })
        .collect();
    counts.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.why.cmp(&b.why)));
    counts
}

/// Per hint, over every row and server.
pub fn hint_tallies(servers: &[FieldServer], rows: &[FieldRow]) -> Vec<FieldHintTally> {
    Hint::ALL
        .into_iter()
        .map(|hint| {
            let rows: Vec<&FieldRow> = rows.iter().filter(|r| r.hint == hint.key()).collect();
            let declared: Vec<&&FieldRow> = rows.iter().filter(|r| r.declared.is_some()).collect();
            // Only the safer value is a claim a client may act on without
            // asking, and so the only one the audit holds a tool to.
            let claims: Vec<&&FieldRow> = declared
                .iter()
                .filter(|r| r.declared == Some(hint.safer_value()))
                .copied()
                .collect();
            let verdict = |v: &str| {
                claims
                    .iter()
                    .filter(|r| r.honest.as_deref() == Some(v))
                    .count()
            };
            let untested: Vec<String> = claims
                .iter()
                .filter_map(|r| r.why_untested.clone())
                .map(|w| reason_class(&w))
                .collect();
            let lies: Vec<&FieldLie> = servers
                .iter()
                .flat_map(|s| &s.lies)
                .filter(|l| lie_hint(&l.lie) == Some(hint))
                .collect();
            let checks: Vec<&str> = [check_of(hint)]
                .into_iter()
                .chain(if hint == Hint::ReadOnly {
                    Some(CheckId::Eff06)
                } else {
                    None
                })
                .map(CheckId::as_str)
                .collect();
            FieldHintTally {
                hint: hint.key().into(),
                declared: declared.len(),
                declared_true: declared.iter().filter(|r| r.declared == Some(true)).count(),
                claims: claims.len(),
                holds: verdict("pass"),
                broken: verdict("fail"),
                untested: untested.len(),
                untested_why: counted(untested),
                lies_planted: lies.len(),
                lies_caught: lies.iter().filter(|l| l.caught).count(),
                missed_why: counted(
                    lies.iter()
                        .filter_map(|l| l.missed_why.as_deref())
                        .map(reason_class)
                        .collect(),
                ),
                false_failures: servers
                    .iter()
                    .flat_map(|s| &s.failures)
                    .filter(|f| f.judged == "false" && checks.contains(&f.check.as_str()))
                    .count(),
            }
        })
        .collect()
}

/// A reason cut to its kind, so that reasons that differ only in a tool's
/// name or a value count together: the verdict, and the text up to its
/// first colon or parenthesis.
pub fn reason_class(why: &str) -> String {
    let cut = why
        .char_indices()
        .skip_while(|(_, c)| *c != ':')
        .skip(1)
        .find(|(_, c)| matches!(c, ':' | '(' | ';' | '.'))
        .map_or(why.len(), |(i, _)| i);
    let class: String = why[..cut].chars().take(120).collect();
    class.trim().to_owned()
}

/// The sums over every server.
pub fn totals(servers: &[FieldServer]) -> FieldTotals {
    let judged = |j: &str| {
        servers
            .iter()
            .flat_map(|s| &s.failures)
            .filter(|f| f.judged == j)
            .count()
    };
    FieldTotals {
        servers: servers.len(),
        servers_run: servers.iter().filter(|s| s.error.is_none()).count(),
        servers_with_truth: servers.iter().filter(|s| s.truth).count(),
        servers_annotating: servers.iter().filter(|s| s.annotated > 0).count(),
        tools: servers.iter().map(|s| s.tools).sum(),
        tools_exercised: servers.iter().map(|s| s.exercised).sum(),
        tools_annotated: servers.iter().map(|s| s.annotated).sum(),
        lies_planted: servers.iter().map(|s| s.lies.len()).sum(),
        lies_caught: servers
            .iter()
            .map(|s| s.lies.iter().filter(|l| l.caught).count())
            .sum(),
        false_failures: judged("false"),
        confirmed_failures: judged("confirmed"),
        unjudged_failures: judged("unjudged"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An audit of two tools: `save` (declared read-only, and it writes:
    /// EFF-01 fails) and `list` (declared read-only and idempotent: EFF-01
    /// passes, EFF-03 untestable).
    fn honest() -> AuditReport {
        let value = json!({
            "tools": [
                {"name": "save", "annotations": {"readOnlyHint": true}, "hints": {"read_only": true}, "class": "read-only", "has_output_schema": false},
                {"name": "list", "annotations": {"readOnlyHint": true, "idempotentHint": true},
                 "hints": {"read_only": true, "idempotent": true}, "class": "read-only", "has_output_schema": false}
            ],
            "checks": [
                {"id": "EFF-01", "tool": "save", "verdict": "fail", "reason": "created notes/a.md", "evidence": {"calls": [1]}},
                {"id": "EFF-01", "tool": "list", "verdict": "pass", "reason": "no change", "evidence": {"calls": [2]}},
                {"id": "EFF-03", "tool": "list", "verdict": "untestable", "reason": "the repeat failed: timeout", "evidence": {"calls": [2]}}
            ]
        });
        report(value)
    }

    /// A lie's audit: `save` said idempotent; EFF-03 fails on it, and
    /// EFF-01 fails on `list` (the truth says it writes nothing).
    fn lie_audit() -> AuditReport {
        report(json!({
            "tools": [],
            "checks": [
                {"id": "EFF-03", "tool": "save", "verdict": "fail", "reason": "the repeat made b.md", "evidence": {"calls": [1]}},
                {"id": "EFF-05", "tool": "save", "verdict": "fail", "reason": "wrote ~/.cache/x", "evidence": {"calls": [1]}},
                {"id": "EFF-01", "tool": "list", "verdict": "fail", "reason": "touched a.md", "evidence": {"calls": [2]}}
            ]
        }))
    }

    /// A committed audit with its tools and checks replaced: the fields
    /// the tallies read.
    fn report(parts: serde_json::Value) -> AuditReport {
        let mut base: serde_json::Value = serde_json::from_str(include_str!(
            "../../../experiments/results/audits/wild-obsidian.json"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        for key in ["tools", "checks"] {
            base[key] = parts[key].clone();
        }
        base["calls"] = json!([]);
        base["coverage"] = serde_json::Value::Null;
        serde_json::from_value(base).unwrap_or_else(|e| panic!("{e}"))
    }

    fn truth() -> Truth {
        Truth::parse(
            r#"
[[tool]]
name = "save"
writes = true
deletes_or_overwrites = false
idempotent = false
network = false

[[tool]]
name = "list"
writes = false
deletes_or_overwrites = false
idempotent = true
network = false
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_pair_of_audits_gives_rows_lies_failures_and_tallies() {
        let truth = truth();
        let lie = Lie {
            tool: "save".into(),
            kind: LieKind::Idempotent,
        };
        let server = FieldServer {
            id: "x".into(),
            truth: true,
            ..FieldServer::default()
        };
        let (server, rows) = summarize(server, Some(&truth), &honest(), &[(lie, lie_audit())]);
        assert_eq!(rows.len(), 8, "2 tools × 4 hints");
        assert_eq!(server.annotated, 2);
        assert_eq!(server.lies.len(), 1);
        assert!(server.lies[0].caught);
        assert_eq!(server.lies[0].checks, ["EFF-03"]);
        let judged: Vec<(&str, &str, &str)> = server
            .failures
            .iter()
            .map(|f| (f.variant.as_str(), f.tool.as_str(), f.judged.as_str()))
            .collect();
        assert_eq!(
            judged,
            [
                ("honest", "save", "confirmed"),
                ("save=idempotent", "save", "unjudged"),
                ("save=idempotent", "list", "false"),
            ],
            "the published read-only claim on save is really wrong; list's failure is not; \
             an effect outside the stores does not catch an idempotency lie"
        );
        let save_idem = rows
            .iter()
            .find(|r| r.tool == "save" && r.hint == "idempotentHint")
            .unwrap_or_else(|| panic!("row"));
        assert_eq!(save_idem.declared, None);
        assert_eq!(save_idem.truth, Some(false));
        assert!(save_idem.lie_planted);
        assert_eq!(save_idem.caught, Some(true));

        let tallies = hint_tallies(std::slice::from_ref(&server), &rows);
        let ro = &tallies[0];
        assert_eq!(ro.hint, "readOnlyHint");
        assert_eq!((ro.declared, ro.declared_true), (2, 2));
        assert_eq!((ro.holds, ro.broken, ro.untested), (1, 1, 0));
        assert_eq!(ro.false_failures, 1, "list's EFF-01 in the lie's audit");
        let idem = &tallies[2];
        assert_eq!((idem.declared, idem.untested), (1, 1));
        assert_eq!(idem.untested_why[0].count, 1);
        assert!(
            idem.untested_why[0].why.starts_with("untestable"),
            "{:?}",
            idem.untested_why
        );
        assert_eq!((idem.lies_planted, idem.lies_caught), (1, 1));

        let t = totals(&[server]);
        assert_eq!(
            (t.false_failures, t.confirmed_failures, t.unjudged_failures),
            (1, 1, 1)
        );
        assert_eq!(
            (t.lies_planted, t.lies_caught, t.servers_annotating),
            (1, 1, 1)
        );
    }

    #[test]
    fn without_truth_a_failure_is_unjudged_and_eff05_always_is() {
        let t = truth();
        assert_eq!(judge(CheckId::Eff01, None), "unjudged");
        assert_eq!(judge(CheckId::Eff05, t.tool("save")), "unjudged");
        assert_eq!(judge(CheckId::Eff03, t.tool("list")), "false");
    }

    #[test]
    fn reasons_count_by_their_kind() {
        assert_eq!(
            reason_class("untestable: the call failed: invalid path x"),
            "untestable: the call failed"
        );
        assert_eq!(reason_class("skip"), "skip");
    }
}
