//! The study's numbers, read from a server's audits and its ground truth:
//! one row per tool × hint, the server's summary, and the per-hint tallies
//! over every server.

use std::collections::BTreeMap;

use witness_engine::suggest::Suggestions;
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
    let suggestions = witness_engine::suggest::suggest(honest);
    let mut rows = Vec::new();
    for tool in &honest.tools {
        for hint in Hint::ALL {
            let declared = match hint {
                Hint::ReadOnly => tool.hints.read_only,
                Hint::Destructive => tool.hints.destructive,
                Hint::Idempotent => tool.hints.idempotent,
                Hint::OpenWorld => tool.hints.open_world,
            };
            let unset = declared
                .is_none()
                .then(|| unset_outcome(honest, &suggestions, &tool.name, hint));
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
                suggested: unset.as_ref().and_then(|u| u.value),
                suggestion: unset.as_ref().map(|u| u.status.to_owned()),
                suggestion_why: unset.map(|u| u.why),
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

/// What `suggest` made of one unset hint of one tool.
struct Unset {
    status: &'static str,
    value: Option<bool>,
    why: String,
}

/// The one outcome of `suggest` for a tool's unset hint: a suggestion,
/// else not exercised, untestable, kept content, silent, in that order (a
/// tool is not exercised as a whole; a note is on a silent hint).
fn unset_outcome(report: &AuditReport, suggestions: &Suggestions, tool: &str, hint: Hint) -> Unset {
    let suggestion = suggestions
        .tools
        .iter()
        .filter(|t| t.tool == tool)
        .flat_map(|t| &t.suggestions)
        .find(|s| s.hint == hint);
    if let Some(s) = suggestion {
        return Unset {
            status: SUGGESTED,
            value: Some(s.value),
            why: format!("{}: {}", s.check.as_str(), calls_seen(report, &s.calls)),
        };
    }
    let not_judged = |h: Option<Hint>| {
        suggestions
            .not_judged
            .iter()
            .find(|n| n.tool == tool && n.hint == h)
    };
    if let Some(n) = not_judged(None) {
        return Unset {
            status: NOT_EXERCISED,
            value: None,
            why: format!("not exercised: {}", clip(&n.why, MAX_WHY)),
        };
    }
    if let Some(n) = not_judged(Some(hint)) {
        return Unset {
            status: UNTESTABLE,
            value: None,
            why: format!("untestable: {}", clip(&n.why, MAX_WHY)),
        };
    }
    if let Some(n) = suggestions
        .notes
        .iter()
        .find(|n| n.tool == tool && n.hint == hint)
    {
        return Unset {
            status: KEPT_CONTENT,
            value: None,
            why: format!(
                "existing content changed and kept: {}",
                calls_seen(report, &n.calls)
            ),
        };
    }
    match suggestions
        .silent
        .iter()
        .find(|s| s.tool == tool && s.hint == hint)
    {
        Some(s) => Unset {
            status: SILENT,
            value: None,
            why: format!("pass as if claimed: {}", clip(&s.reason, MAX_WHY)),
        },
        None => Unset {
            status: NO_VERDICT,
            value: None,
            why: format!("no {} verdict", check_of(hint).as_str()),
        },
    }
}

/// What the calls a suggestion rests on did, counted by store and kind of
/// change: `call 5 created 1 in db`. The objects themselves are left to the
/// audit: many servers name what they create with fresh ids, and the row
/// must read the same on a rerun. So are the directories a call changed
/// something inside ([`inside_another`]).
fn calls_seen(report: &AuditReport, calls: &[u32]) -> String {
    let mut seen = Vec::new();
    for id in calls {
        let Some(call) = report.calls.iter().find(|c| c.id == *id) else {
            continue;
        };
        let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for effect in &call.effects {
            if inside_another(effect, &call.effects) {
                continue;
            }
            let op = match effect.op {
                witness_model::audit::Op::Create => "created",
                witness_model::audit::Op::Update => "updated",
                witness_model::audit::Op::Delete => "deleted",
            };
            *counts.entry((op, effect.store.as_str())).or_default() += 1;
        }
        let mut parts: Vec<String> = counts
            .into_iter()
            .map(|((op, store), n)| format!("{op} {n} in {store}"))
            .collect();
        if !call.network.is_empty() {
            parts.push(format!("{} outbound attempt(s)", call.network.len()));
        }
        if !call.original_writes.is_empty() {
            parts.push(format!(
                "{} write(s) on a store's original",
                call.original_writes.len()
            ));
        }
        let what = if call.confirms.is_some() {
            "confirmation"
        } else {
            "call"
        };
        seen.push(if parts.is_empty() {
            format!("{what} {id}")
        } else {
            format!("{what} {id} {}", parts.join(", "))
        });
    }
    if seen.is_empty() {
        "no call recorded".to_owned()
    } else {
        seen.join("; ")
    }
}

/// Whether `effect` is a directory (`dir/PATH`) that another effect of the
/// same call changed something inside of (`file/PATH/...`). Such a
/// directory is counted in the thing made inside it, not beside it: whether
/// a new file also makes its directory can turn on a digest of the time (a
/// git object's fan-out directory `objects/3f` is new, or is there from an
/// earlier object, as the commit's timestamp falls), so a count of
/// directories would differ from run to run where the files do not. A
/// directory made empty (`create_directory`) is counted.
fn inside_another(
    effect: &witness_model::audit::Effect,
    all: &[witness_model::audit::Effect],
) -> bool {
    let Some(dir) = effect.object.strip_prefix("dir/") else {
        return false;
    };
    let prefix = format!("{dir}/");
    all.iter().any(|other| {
        other.store == effect.store
            && other
                .object
                .split_once('/')
                .is_some_and(|(_, path)| path.starts_with(&prefix))
    })
}

/// Bound on a reason a row carries; the audit keeps all of it.
const MAX_WHY: usize = 400;

/// At most `max` characters, with an ellipsis when cut: a basis that names
/// many effects stays one readable cell of the CSV.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The unset tally of one hint, from its rows.
fn unset_tally(hint: Hint, rows: &[&FieldRow]) -> FieldUnsetTally {
    let unset: Vec<&FieldRow> = rows
        .iter()
        .copied()
        .filter(|r| r.declared.is_none())
        .collect();
    let with = |status: &str| -> Vec<&FieldRow> {
        unset
            .iter()
            .copied()
            .filter(|r| r.suggestion.as_deref() == Some(status))
            .collect()
    };
    let whys = |status: &str| {
        counted(
            with(status)
                .iter()
                .filter_map(|r| r.suggestion_why.as_deref())
                .map(reason_class)
                .collect(),
        )
    };
    let unsafe_value = !hint.safer_value();
    let truth_unsafe = |r: &&&FieldRow| r.truth == Some(unsafe_value);
    let suggested = with(SUGGESTED);
    let mut silent = with(SILENT);
    silent.extend(with(KEPT_CONTENT));
    FieldUnsetTally {
        tools: unset.len(),
        suggested: suggested.len(),
        silent: with(SILENT).len(),
        kept_content: with(KEPT_CONTENT).len(),
        untestable: with(UNTESTABLE).len(),
        untestable_why: whys(UNTESTABLE),
        not_exercised: with(NOT_EXERCISED).len(),
        not_exercised_why: whys(NOT_EXERCISED),
        no_verdict: with(NO_VERDICT).len(),
        with_truth: unset.iter().filter(|r| r.truth.is_some()).count(),
        truth_unsafe: unset.iter().filter(truth_unsafe).count(),
        suggested_confirmed: suggested
            .iter()
            .filter(|r| r.truth.is_some() && r.truth == r.suggested)
            .count(),
        suggested_contradicted: suggested
            .iter()
            .filter(|r| r.truth.is_some() && r.truth != r.suggested)
            .count(),
        silent_unsafe: silent.iter().filter(truth_unsafe).count(),
    }
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
                // Rows merged from a run before suggestions were recorded
                // carry none: no tally rather than one that misses them.
                unset: rows
                    .iter()
                    .filter(|r| r.declared.is_none())
                    .all(|r| r.suggestion.is_some())
                    .then(|| unset_tally(hint, &rows)),
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

    /// The testbed's phantom-write audit with four tools' annotations
    /// taken away, and `check_credential` never called successfully.
    fn unannotated() -> AuditReport {
        let mut report: AuditReport = serde_json::from_str(include_str!(
            "../../../experiments/results/audits/phantom-write.json"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        for tool in report.tools.iter_mut().filter(|t| {
            ["ping", "delete_note", "list_notes", "check_credential"].contains(&t.name.as_str())
        }) {
            tool.annotations = None;
            tool.hints = Default::default();
            tool.class = tool.hints.class();
        }
        for call in report
            .calls
            .iter_mut()
            .filter(|c| c.tool == "check_credential")
        {
            call.outcome.status = witness_model::audit::CallStatus::ToolError;
        }
        report.coverage = None;
        report
    }

    #[test]
    fn a_directory_is_counted_in_what_was_made_inside_it() {
        use witness_model::audit::{Effect, Op};
        let effect = |op: Op, object: &str| Effect {
            store: "home".into(),
            object: object.into(),
            op,
            overwrite: None,
            before: None,
            after: None,
        };
        let counted = |effects: &[Effect]| -> Vec<String> {
            effects
                .iter()
                .filter(|e| !inside_another(e, effects))
                .map(|e| e.object.clone())
                .collect()
        };
        // cadence-todo commits each change to a git history: the same
        // commit, once with its object's fan-out directory new and once
        // with it already there from an earlier object (the hashes follow
        // the commit's time).
        let new_fan_out = [
            effect(Op::Create, "dir/h/.git/objects/26"),
            effect(Op::Create, "file/h/.git/objects/26/8bbb08"),
            effect(Op::Update, "file/h/.git/index"),
        ];
        let old_fan_out = [
            effect(Op::Create, "file/h/.git/objects/7a/9e02e0"),
            effect(Op::Update, "file/h/.git/index"),
        ];
        assert_eq!(counted(&new_fan_out).len(), counted(&old_fan_out).len());
        // A directory made alone is what the call did.
        let made = [effect(Op::Create, "dir/vault/Projects")];
        assert_eq!(counted(&made), ["dir/vault/Projects"]);
        // Another store's file, or a sibling with the same prefix, is not
        // inside it.
        let beside = [
            effect(Op::Create, "dir/vault/Projects"),
            effect(Op::Create, "file/vault/Projects2/a.md"),
        ];
        assert_eq!(counted(&beside).len(), 2);
    }

    #[test]
    fn unset_hints_are_read_through_suggest_and_held_to_the_truth() {
        // The truth is wrong about ping on purpose (it writes telemetry and
        // every repeat adds a row) and about list_notes (it writes nothing):
        // a suggestion it contradicts, and a writer judged silent.
        let truth = Truth::parse(
            r#"
[[tool]]
name = "ping"
writes = false
deletes_or_overwrites = false
idempotent = true
network = false

[[tool]]
name = "delete_note"
writes = true
deletes_or_overwrites = true
idempotent = true
network = false

[[tool]]
name = "list_notes"
writes = true
deletes_or_overwrites = false
idempotent = true
network = false
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let server = FieldServer {
            id: "x".into(),
            truth: true,
            ..FieldServer::default()
        };
        let (server, rows) = summarize(server, Some(&truth), &unannotated(), &[]);
        let outcome = |tool: &str, hint: &str| {
            rows.iter()
                .find(|r| r.tool == tool && r.hint == hint)
                .map(|r| (r.suggestion.as_deref(), r.suggested))
                .unwrap_or_else(|| panic!("no row {tool} {hint}"))
        };
        assert_eq!(
            outcome("ping", "readOnlyHint"),
            (Some(SUGGESTED), Some(false))
        );
        assert_eq!(
            outcome("ping", "idempotentHint"),
            (Some(SUGGESTED), Some(false))
        );
        assert_eq!(outcome("ping", "destructiveHint"), (Some(SILENT), None));
        assert_eq!(
            outcome("delete_note", "readOnlyHint"),
            (Some(SUGGESTED), Some(false))
        );
        assert_eq!(
            outcome("delete_note", "destructiveHint"),
            (Some(SUGGESTED), Some(true))
        );
        assert_eq!(
            outcome("delete_note", "idempotentHint"),
            (Some(SILENT), None)
        );
        assert_eq!(outcome("list_notes", "readOnlyHint"), (Some(SILENT), None));
        for hint in Hint::ALL {
            assert_eq!(
                outcome("check_credential", hint.key()),
                (Some(NOT_EXERCISED), None),
                "{hint:?}"
            );
        }
        // A declared hint carries no suggestion.
        assert_eq!(outcome("save_note", "readOnlyHint"), (None, None));
        let basis = rows
            .iter()
            .find(|r| r.tool == "ping" && r.hint == "readOnlyHint")
            .and_then(|r| r.suggestion_why.clone())
            .unwrap_or_default();
        assert_eq!(
            basis,
            "EFF-01: call 5 created 1 in db; call 6 created 1 in db; confirmation 19 created 1 in db",
            "the calls and what they did, without the objects' names"
        );

        let tallies = hint_tallies(std::slice::from_ref(&server), &rows);
        let unset = |hint: &str| {
            tallies
                .iter()
                .find(|t| t.hint == hint)
                .and_then(|t| t.unset.clone())
                .unwrap_or_else(|| panic!("no unset tally for {hint}"))
        };
        let ro = unset("readOnlyHint");
        assert_eq!(ro.tools, 4, "four tools leave readOnlyHint unset");
        assert_eq!(
            (
                ro.suggested,
                ro.silent,
                ro.not_exercised,
                ro.untestable,
                ro.no_verdict
            ),
            (2, 1, 1, 0, 0)
        );
        assert_eq!(
            ro.not_exercised_why.iter().map(|c| c.count).sum::<usize>(),
            1
        );
        assert_eq!(
            (ro.with_truth, ro.truth_unsafe),
            (3, 2),
            "delete_note and list_notes write"
        );
        assert_eq!(
            (
                ro.suggested_confirmed,
                ro.suggested_contradicted,
                ro.silent_unsafe
            ),
            (1, 1, 1),
            "delete_note's write is confirmed, ping's contradicted, list_notes' unseen"
        );
        let de = unset("destructiveHint");
        assert_eq!((de.tools, de.suggested, de.suggested_confirmed), (4, 1, 1));
        let idem = unset("idempotentHint");
        assert_eq!(
            (
                idem.suggested,
                idem.suggested_contradicted,
                idem.truth_unsafe
            ),
            (1, 1, 0)
        );
        for t in &tallies {
            let u = t.unset.clone().unwrap_or_default();
            assert_eq!(
                u.suggested
                    + u.silent
                    + u.kept_content
                    + u.untestable
                    + u.not_exercised
                    + u.no_verdict,
                u.tools,
                "{}: every unset tool counted once",
                t.hint
            );
        }
    }

    #[test]
    fn rows_from_before_suggestions_were_recorded_give_no_unset_tally() {
        let row = |suggestion: Option<&str>| FieldRow {
            server: "x".into(),
            tool: "t".into(),
            hint: "readOnlyHint".into(),
            suggestion: suggestion.map(str::to_owned),
            ..FieldRow::default()
        };
        let tally = |rows: &[FieldRow]| hint_tallies(&[], rows)[0].unset.clone();
        assert_eq!(tally(&[row(Some(SILENT)), row(None)]), None);
        let counted = tally(&[row(Some(SILENT)), row(Some(SUGGESTED))]).unwrap_or_default();
        assert_eq!(
            (counted.tools, counted.silent, counted.suggested),
            (2, 1, 1)
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
