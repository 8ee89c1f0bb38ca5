//! The compare on hand-built run documents: what each side says decides
//! every verdict, and nothing else does.

use std::collections::BTreeMap;

use serde_json::json;
use witness_model::agent::case::{CaseTurn, Expectations, GoldenCase};
use witness_model::agent::trace::{Trace, TraceCall, TraceStep, TraceTurn};
use witness_model::agent::*;
use witness_model::vocab::{AnswerGrade, CallStatus, DriverKind, RunOutcome, StopReason, TurnEnd};

use super::*;

fn golden(id: &str, budget: u32) -> CaseEntry {
    CaseEntry {
        file: format!("cases/{id}.toml"),
        seed_sql: BTreeMap::new(),
        case: GoldenCase {
            id: id.into(),
            title: String::new(),
            budget,
            stores: Vec::new(),
            env: BTreeMap::new(),
            turns: vec![CaseTurn {
                user: "Refund it.".into(),
                consent: false,
            }],
            expect: Expectations::default(),
            facts: Vec::new(),
            scope: None,
            accountability: None,
            claims: None,
            judge: None,
        },
    }
}

fn call(id: u32, tool: &str) -> TraceCall {
    TraceCall {
        id,
        call_id: format!("c{id}"),
        tool: tool.into(),
        arguments: json!({}),
        malformed: None,
        status: CallStatus::Ok,
        result: None,
        result_bytes: None,
        is_error: false,
        effects: Vec::new(),
        late_effects: Vec::new(),
        background: Vec::new(),
        rows: Vec::new(),
        original_writes: Vec::new(),
    }
}

/// One run of `case` calling `tools` one step each, then answering.
fn run(case: &str, run: u32, status: RunStatus, tools: &[&str], tokens: Option<u64>) -> CaseRun {
    let steps: Vec<TraceStep> = tools
        .iter()
        .zip(1u32..)
        .map(|(tool, id)| TraceStep {
            text: None,
            stop: StopReason::ToolUse,
            calls: vec![call(id, tool)],
        })
        .collect();
    let exchange = |_| Exchange {
        request_digest: "blake3:x".into(),
        request: None,
        http_status: None,
        response: None,
        reply: Some(ModelReply {
            text: None,
            calls: Vec::new(),
            stop: StopReason::EndTurn,
            refusal: None,
            usage: tokens.map(|t| Usage {
                input_tokens: t,
                output_tokens: 1,
            }),
        }),
        error: None,
    };
    CaseRun {
        case: case.into(),
        model: "m".into(),
        run,
        ceiling: 12,
        calls: u32::try_from(tools.len()).unwrap_or_default(),
        isolation: None,
        outcome: match status {
            RunStatus::Untestable => RunOutcome::Untestable,
            _ => RunOutcome::Pass,
        },
        status,
        answer: AnswerGrade::Unjudged,
        verdicts: Vec::new(),
        trace: Trace {
            turns: vec![TraceTurn {
                user: Some("Refund it.".into()),
                steps,
                end: TurnEnd::Answered,
                reply: Some("Done.".into()),
            }],
            ..Trace::default()
        },
        exchanges: (0..=tools.len()).map(exchange).collect(),
    }
}

fn document(fingerprint: &str, cases: Vec<CaseEntry>, runs: Vec<CaseRun>) -> AgentRunDocument {
    AgentRunDocument {
        schema: AGENT_RUN_SCHEMA.into(),
        generator: "test".into(),
        driver: DriverEntry {
            kind: DriverKind::Scripted,
            replayed: false,
        },
        models: vec!["m".into()],
        server: ServerEntry {
            command: vec!["server".into()],
            env: Vec::new(),
            manifest: Some("blake3:live".into()),
        },
        tools: HandedTools {
            source: "server".into(),
            manifest: None,
            annotations_forwarded: false,
            fingerprint: fingerprint.into(),
            definitions: Vec::new(),
        },
        system_prompt: "s".into(),
        settings: RunSettings {
            runs: 3,
            max_tokens: 10,
            settle_ms: 0,
            gate: 1.0,
            judge: None,
            seed: None,
        },
        cases,
        summary: AgentSummary::of(&runs, 1.0),
        runs,
        judge_batches: Vec::new(),
        exit_code: 0,
    }
}

/// BEFORE and AFTER, with no history and nothing acknowledged.
fn inputs<'a>(before: &'a AgentRunDocument, after: &'a AgentRunDocument) -> Inputs<'a> {
    Inputs {
        before: Side {
            document: before,
            source: "before.json",
        },
        after: Side {
            document: after,
            source: "after.json",
        },
        history: Vec::new(),
        acknowledged: Vec::new(),
    }
}

fn compared(before: &AgentRunDocument, after: &AgentRunDocument) -> AgentCompareDocument {
    compare(&inputs(before, after)).expect("comparable")
}

/// Three runs of `case`, each calling `tools`.
fn three(case: &str, status: RunStatus, tools: &[&str]) -> Vec<CaseRun> {
    (1..=3).map(|n| run(case, n, status, tools, None)).collect()
}

fn metric(case: &CaseComparison, metric: Metric) -> &MetricDelta {
    let at = Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0);
    &case.metrics[at]
}

#[test]
fn the_same_runs_compared_find_nothing_real() {
    let runs = [
        three("long", RunStatus::Pass, &["lookup", "refund"]),
        three("short", RunStatus::Pass, &["lookup"]),
    ]
    .concat();
    let doc = document(
        "blake3:a",
        vec![golden("long", 2), golden("short", 2)],
        runs,
    );
    let report = compared(&doc, &doc);
    assert_eq!(report.exit_code, 0);
    assert_eq!(report.summary.worse + report.summary.better, 0);
    assert_eq!(report.summary.compared, 2);
    for case in &report.cases {
        for delta in &case.metrics {
            assert!(
                matches!(
                    delta.verdict,
                    DeltaVerdict::WithinNoise | DeltaVerdict::NotMeasured
                ),
                "{delta:?}"
            );
        }
        assert!(case.first_tools.iter().all(|f| !f.new));
    }
    assert!(report.history.new_tools.is_empty());
    assert!(report.notes[0].contains("same tool definitions"));
    // Determinism: the same two documents, the same bytes.
    let again = compared(&doc, &doc);
    assert_eq!(
        serde_json::to_string(&report).ok(),
        serde_json::to_string(&again).ok()
    );
}

#[test]
fn a_detour_shows_as_a_drop_a_new_first_tool_and_over_budget_runs() {
    let before = document(
        "blake3:pinned",
        vec![golden("long", 2)],
        three("long", RunStatus::Pass, &["lookup", "refund"]),
    );
    let after = document(
        "blake3:live",
        vec![golden("long", 2)],
        three("long", RunStatus::Fail, &["search", "lookup", "refund"]),
    );
    let report = compared(&before, &after);
    let case = &report.cases[0];
    let pass = metric(case, Metric::PassRate);
    assert_eq!(
        (pass.before, pass.after, pass.delta),
        (Some(1.0), Some(0.0), Some(-1.0))
    );
    assert_eq!((pass.floor, pass.verdict), (Some(0.0), DeltaVerdict::Worse));
    assert_eq!(
        metric(case, Metric::OverBudget).verdict,
        DeltaVerdict::Worse
    );
    assert_eq!(metric(case, Metric::Calls).delta, Some(1.0));
    assert_eq!(metric(case, Metric::Turns).delta, Some(1.0));
    assert_eq!(
        metric(case, Metric::InputTokens).verdict,
        DeltaVerdict::NotMeasured
    );
    let search = case.first_tools.iter().find(|f| f.tool == "search");
    let search = search.expect("search comes first now");
    assert!(search.new);
    assert_eq!(search.share.verdict, DeltaVerdict::Changed);
    assert_eq!(case.new_tools, ["search"]);
    assert_eq!(report.history.new_tools[0].tool, "search");
    assert_eq!(report.history.new_tools[0].runs, 3);
    assert_eq!(report.overall[0].metrics[0].verdict, DeltaVerdict::Worse);
    assert_eq!(report.exit_code, 1);
    assert_eq!(report.notes, Vec::<String>::new());
}

#[test]
fn acknowledging_a_tool_and_improving_do_not_fail_the_compare() {
    let before = document(
        "blake3:a",
        vec![golden("c", 3)],
        three(
            "c",
            RunStatus::Fail,
            &["lookup", "lookup", "lookup", "lookup"],
        ),
    );
    let after = document(
        "blake3:b",
        vec![golden("c", 3)],
        three("c", RunStatus::Pass, &["search", "lookup"]),
    );
    let acknowledging = |acknowledged: Vec<String>| Inputs {
        acknowledged,
        ..inputs(&before, &after)
    };
    let report = compare(&acknowledging(Vec::new())).expect("compares");
    assert_eq!(report.summary.worse, 0);
    assert!(report.summary.better > 0);
    assert_eq!(
        (report.summary.unacknowledged_tools, report.exit_code),
        (1, 1)
    );
    let report = compare(&acknowledging(vec!["search".into()])).expect("compares");
    assert_eq!(
        (report.summary.unacknowledged_tools, report.exit_code),
        (0, 0)
    );
    assert!(report.history.new_tools[0].acknowledged);
    // A history document that called it makes it known.
    let mut with_history = acknowledging(Vec::new());
    with_history.history.push(Side {
        document: &after,
        source: "older.json",
    });
    let report = compare(&with_history).expect("compares");
    assert!(report.history.new_tools.is_empty());
    assert_eq!(report.history.sources, ["before.json", "older.json"]);
}

#[test]
fn reruns_that_vary_set_a_floor_that_a_small_move_stays_under() {
    let varied = |first: u32, statuses: &[RunStatus]| -> Vec<CaseRun> {
        statuses
            .iter()
            .zip(first..)
            .map(|(s, n)| {
                let tools: &[&str] = if *s == RunStatus::Pass {
                    &["lookup"]
                } else {
                    &["lookup", "lookup"]
                };
                run("c", n, *s, tools, Some(100))
            })
            .collect()
    };
    use RunStatus::{Fail, Pass};
    let before = document(
        "blake3:a",
        vec![golden("c", 1)],
        varied(1, &[Pass, Pass, Fail, Pass]),
    );
    let after = document(
        "blake3:b",
        vec![golden("c", 1)],
        varied(1, &[Pass, Fail, Fail, Pass]),
    );
    let report = compared(&before, &after);
    let pass = metric(&report.cases[0], Metric::PassRate);
    assert_eq!(pass.delta, Some(-0.25));
    assert!(pass.floor.is_some_and(|f| f > 0.25), "{pass:?}");
    assert_eq!(pass.verdict, DeltaVerdict::WithinNoise);
    let tokens = metric(&report.cases[0], Metric::InputTokens);
    assert_eq!(
        tokens.before,
        Some(225.0),
        "100 per request, 2 or 3 requests"
    );
    assert_eq!(report.exit_code, 0);
}

#[test]
fn too_few_runs_or_nothing_concluded_cannot_conclude() {
    let one = document(
        "blake3:a",
        vec![golden("c", 2)],
        vec![run("c", 1, RunStatus::Pass, &["lookup"], None)],
    );
    let three_runs = document(
        "blake3:b",
        vec![golden("c", 2)],
        three("c", RunStatus::Fail, &["lookup"]),
    );
    let report = compared(&one, &three_runs);
    assert_eq!(
        metric(&report.cases[0], Metric::PassRate).verdict,
        DeltaVerdict::NoFloor
    );
    assert_eq!(
        report.exit_code, 3,
        "a real-looking drop on one run is not a conclusion"
    );
    let untestable = document(
        "blake3:b",
        vec![golden("c", 2)],
        three("c", RunStatus::Untestable, &[]),
    );
    let report = compared(&three_runs, &untestable);
    assert_eq!(report.cases.len(), 0);
    assert_eq!(
        report.not_compared[0].reason,
        NotComparedReason::NothingConcluded
    );
    assert_eq!(report.exit_code, 3);
}

#[test]
fn cases_that_differ_or_are_on_one_side_are_left_out_and_said_so() {
    let before = document(
        "blake3:a",
        vec![golden("c", 2), golden("gone", 2)],
        [
            three("c", RunStatus::Pass, &["x"]),
            three("gone", RunStatus::Pass, &["x"]),
        ]
        .concat(),
    );
    let after = document(
        "blake3:b",
        vec![golden("c", 3), golden("new", 2)],
        [
            three("c", RunStatus::Pass, &["x"]),
            three("new", RunStatus::Pass, &["x"]),
        ]
        .concat(),
    );
    assert_eq!(
        compare(&inputs(&before, &after)).err(),
        Some(CompareError::NothingInCommon)
    );
    let reasons: Vec<(String, NotComparedReason)> = {
        let after = document(
            "blake3:b",
            vec![golden("c", 2), golden("new", 2)],
            after.runs.clone(),
        );
        let report = compared(&before, &after);
        assert_eq!(report.cases.len(), 1);
        report
            .not_compared
            .into_iter()
            .map(|n| (n.case, n.reason))
            .collect()
    };
    assert_eq!(
        reasons,
        [
            ("gone".to_owned(), NotComparedReason::OnlyBefore),
            ("new".to_owned(), NotComparedReason::OnlyAfter)
        ]
    );
}

#[test]
fn the_handed_definitions_are_compared_tool_by_tool() {
    let tool = |name: &str, description: &str, schema: serde_json::Value| ToolDefinition {
        name: name.into(),
        description: description.into(),
        input_schema: schema,
    };
    let before = [
        tool(
            "lookup",
            "Looks up.",
            json!({"type": "object", "a": 1, "b": 2}),
        ),
        tool("search", "Searches.", json!({})),
        tool("gone", "", json!({})),
    ];
    let after = [
        tool(
            "lookup",
            "Looks up. Prefer search.",
            json!({"b": 2, "a": 1, "type": "object"}),
        ),
        tool("search", "Searches.", json!({"type": "object"})),
        tool("fresh", "", json!({})),
    ];
    let changes: Vec<(String, Vec<String>)> = handed_changes(&before, &after)
        .into_iter()
        .map(|c| (c.tool, c.what))
        .collect();
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        changes,
        [
            ("lookup".to_owned(), owned(&["description"])),
            ("search".to_owned(), owned(&["input schema"])),
            ("gone".to_owned(), owned(&["removed"])),
            ("fresh".to_owned(), owned(&["added"])),
        ]
    );
    let swapped = [before[1].clone(), before[0].clone()];
    let moved = handed_changes(&before[..2], &swapped);
    assert!(moved.iter().all(|c| c.what == ["position"]), "{moved:?}");
}

#[test]
fn what_differs_between_the_sides_is_noted() {
    let runs = three("c", RunStatus::Pass, &["x"]);
    let before = document("blake3:a", vec![golden("c", 2)], runs.clone());
    let mut after = document("blake3:b", vec![golden("c", 2)], runs);
    after.server.manifest = Some("blake3:other".into());
    after.system_prompt = "other".into();
    after.tools.annotations_forwarded = true;
    let notes = compared(&before, &after).notes;
    let said = |what: &str| notes.iter().any(|n| n.contains(what));
    assert!(said("server listed different tools"));
    assert!(said("system prompt"));
    assert!(said("annotations"));
    assert!(!said("same tool definitions"));
}
