//! The page and the text summary of an agent run
//! (`mcp-witness.agent-run/v1`): the pass rates and the gate, then every
//! run — its verdicts with their evidence, and the conversation with each
//! call, its result and the effects observed around it.
//!
//! Everything a model or a server sent is text to escape: replies, tool
//! arguments and results, descriptions. The formatter escapes it and makes
//! invisible characters visible; anchors are built here from our own
//! numbers and names only.

use serde::Serialize;
use serde_json::Value;
use witness_model::agent::trace::{RowFacts, TraceCall};
use witness_model::agent::{AgentRunDocument, CaseRun, PassRate};
use witness_model::audit::Effect;

use crate::anchor_part;

/// Characters of a result or an argument shown on the page (the JSON has all).
const SHOWN: usize = 4_000;

/// The page of one agent run.
pub fn render(document: &AgentRunDocument) -> anyhow::Result<String> {
    crate::render("agent-run.html.j2", view(document))
}

#[derive(Serialize)]
struct View {
    schema: String,
    generator: String,
    driver: String,
    models: Vec<String>,
    command: String,
    env: Vec<String>,
    tools: ToolsView,
    system_prompt: String,
    settings: Vec<(String, String)>,
    rates: Vec<RateView>,
    model_rates: Vec<RateView>,
    gate: String,
    gate_passed: bool,
    exit_code: i64,
    runs: Vec<RunView>,
    judge: Vec<String>,
}

#[derive(Serialize)]
struct ToolsView {
    fingerprint: String,
    forwarded: bool,
    /// Where the definitions came from, in words.
    source: String,
    /// The catalog's fingerprint as the server listed it.
    served: Option<String>,
    definitions: Vec<(String, String, String)>,
}

#[derive(Serialize)]
struct RateView {
    case: Option<String>,
    model: String,
    runs: u32,
    passed: u32,
    failed: u32,
    untestable: u32,
    rate: String,
}

#[derive(Serialize)]
pub(crate) struct RunView {
    anchor: String,
    case: String,
    model: String,
    run: u32,
    status: String,
    outcome: String,
    calls: u32,
    budget: Option<u32>,
    ceiling: u32,
    answer: String,
    isolation: Option<String>,
    harness_error: Option<String>,
    warnings: Vec<String>,
    verdicts: Vec<VerdictView>,
    turns: Vec<TurnView>,
    startup: Vec<EffectView>,
    shutdown: Vec<EffectView>,
    exchanges: usize,
    tokens: Option<(u64, u64)>,
}

#[derive(Serialize)]
struct VerdictView {
    check: String,
    verdict: String,
    detail: String,
    calls: Vec<(u32, String)>,
    turns: Vec<(u32, String)>,
    objects: Vec<String>,
}

#[derive(Serialize)]
struct TurnView {
    anchor: String,
    number: u32,
    user: Option<String>,
    steps: Vec<StepView>,
    end: String,
    reply: Option<String>,
}

#[derive(Serialize)]
struct StepView {
    text: Option<String>,
    stop: String,
    calls: Vec<CallView>,
}

#[derive(Serialize)]
struct CallView {
    anchor: String,
    id: u32,
    tool: String,
    arguments: String,
    malformed: Option<String>,
    status: String,
    is_error: bool,
    result: Option<String>,
    effects: Vec<EffectView>,
    late_effects: Vec<EffectView>,
}

#[derive(Serialize)]
struct EffectView {
    object: String,
    op: String,
    facts: String,
}

fn view(document: &AgentRunDocument) -> View {
    let driver = if document.driver.replayed {
        format!("{} (replayed from a recording)", document.driver.kind)
    } else {
        document.driver.kind.to_string()
    };
    let gate = &document.summary.gate;
    View {
        schema: document.schema.clone(),
        generator: document.generator.clone(),
        driver,
        models: document.models.clone(),
        command: document.server.command.join(" "),
        env: document.server.env.clone(),
        tools: ToolsView {
            fingerprint: document.tools.fingerprint.clone(),
            forwarded: document.tools.annotations_forwarded,
            source: handed_source(&document.tools),
            served: document.server.manifest.clone(),
            definitions: document
                .tools
                .definitions
                .iter()
                .map(|d| {
                    (
                        d.name.clone(),
                        d.description.clone(),
                        pretty(&d.input_schema),
                    )
                })
                .collect(),
        },
        system_prompt: document.system_prompt.clone(),
        settings: settings_view(&document.settings),
        rates: document.summary.rates.iter().map(rate).collect(),
        model_rates: document.summary.models.iter().map(rate).collect(),
        gate: match (&gate.weakest_model, gate.weakest_rate) {
            (Some(model), rate) => format!(
                "weakest model {model} at {} against a threshold of {}",
                percent(rate),
                percent(Some(gate.threshold))
            ),
            (None, _) => "no run concluded".to_owned(),
        },
        gate_passed: gate.passed,
        exit_code: document.exit_code,
        runs: document
            .runs
            .iter()
            .map(|r| run_view(r, budget(document, &r.case)))
            .collect(),
        judge: judge_lines(document),
    }
}

/// `the server's tools/list`, or `the pinned manifest FILE (environment E, blake3:…)`.
pub fn handed_source(tools: &witness_model::agent::HandedTools) -> String {
    match &tools.manifest {
        Some(pin) => format!(
            "the pinned manifest {} (environment {}, {})",
            pin.file, pin.environment, pin.fingerprint
        ),
        None if tools.source == "server" => "the server's tools/list".to_owned(),
        None => tools.source.clone(),
    }
}

fn settings_view(settings: &witness_model::agent::RunSettings) -> Vec<(String, String)> {
    let seed = settings
        .seed
        .map(|seed| ("seed of the scripted draws".to_owned(), seed.to_string()));
    let mut rows = vec![
        (
            "runs per case and model".to_owned(),
            settings.runs.to_string(),
        ),
        (
            "max tokens per reply".to_owned(),
            settings.max_tokens.to_string(),
        ),
        (
            "settle after each call".to_owned(),
            format!("{} ms", settings.settle_ms),
        ),
        ("gate".to_owned(), percent(Some(settings.gate))),
        (
            "judge".to_owned(),
            settings.judge.as_ref().map_or("none".to_owned(), |j| {
                format!("{}, {} answers per request", j.model, j.slice)
            }),
        ),
    ];
    rows.extend(seed);
    rows
}

/// One line per judge batch: what it graded, and why it could not.
fn judge_lines(document: &AgentRunDocument) -> Vec<String> {
    document
        .judge_batches
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let graded: Vec<String> = b
                .items
                .iter()
                .map(|it| format!("{} · {} · run {}: {}", it.case, it.model, it.run, it.grade))
                .collect();
            let problem = b
                .problem
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p})"));
            format!("Batch {}{problem}: {}", i + 1, graded.join("; "))
        })
        .collect()
}

fn budget(document: &AgentRunDocument, case: &str) -> Option<u32> {
    document
        .cases
        .iter()
        .find(|c| c.case.id == case)
        .map(|c| c.case.budget)
}

fn rate(r: &PassRate) -> RateView {
    RateView {
        case: r.case.clone(),
        model: r.model.clone(),
        runs: r.runs,
        passed: r.passed,
        failed: r.failed,
        untestable: r.untestable,
        rate: percent(r.rate),
    }
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_owned(), |r| format!("{:.0}%", r * 100.0))
}

fn pretty(value: &Value) -> String {
    witness_text::clip_raw(
        &serde_json::to_string_pretty(value).unwrap_or_default(),
        SHOWN,
    )
}

/// `run-<case>-<model>-<n>`, every part made anchor-safe.
fn run_anchor(run: &CaseRun) -> String {
    format!(
        "run-{}-{}-{}",
        anchor_part(&run.case),
        anchor_part(&run.model),
        run.run
    )
}

pub(crate) fn run_view(run: &CaseRun, budget: Option<u32>) -> RunView {
    let anchor = run_anchor(run);
    RunView {
        verdicts: verdict_views(run, &anchor),
        turns: turn_views(run, &anchor),
        anchor,
        case: run.case.clone(),
        model: run.model.clone(),
        run: run.run,
        status: run.status.as_str().to_owned(),
        outcome: run.outcome.to_string(),
        calls: run.calls,
        budget,
        ceiling: run.ceiling,
        answer: run.answer.to_string(),
        isolation: run.isolation.clone(),
        harness_error: run.trace.harness_error.clone(),
        warnings: run.trace.warnings.clone(),
        startup: effects(&run.trace.startup_effects, &[]),
        shutdown: effects(&run.trace.shutdown_effects, &[]),
        exchanges: run.exchanges.len(),
        tokens: run
            .exchanges
            .iter()
            .filter_map(|e| e.reply.as_ref().and_then(|r| r.usage))
            .fold(None, |sum: Option<(u64, u64)>, u| {
                let (i, o) = sum.unwrap_or_default();
                Some((i + u.input_tokens, o + u.output_tokens))
            }),
    }
}

fn verdict_views(run: &CaseRun, anchor: &str) -> Vec<VerdictView> {
    run.verdicts
        .iter()
        .map(|v| VerdictView {
            check: v.check.to_string(),
            verdict: v.verdict.to_string(),
            detail: v.detail.clone(),
            calls: v
                .evidence
                .calls
                .iter()
                .map(|&c| (c, format!("{anchor}-call-{c}")))
                .collect(),
            turns: v
                .evidence
                .turns
                .iter()
                .map(|&t| (t, format!("{anchor}-turn-{t}")))
                .collect(),
            objects: v.evidence.objects.clone(),
        })
        .collect()
}

fn turn_views(run: &CaseRun, anchor: &str) -> Vec<TurnView> {
    run.trace
        .turns
        .iter()
        .zip(1u32..)
        .map(|(turn, number)| TurnView {
            anchor: format!("{anchor}-turn-{number}"),
            number,
            user: turn.user.clone(),
            steps: turn
                .steps
                .iter()
                .map(|s| StepView {
                    text: s.text.clone(),
                    stop: s.stop.to_string(),
                    calls: s
                        .calls
                        .iter()
                        .map(|c| call_view(c, format!("{anchor}-call-{}", c.id)))
                        .collect(),
                })
                .collect(),
            end: turn.end.to_string(),
            reply: turn.reply.clone(),
        })
        .collect()
}

fn call_view(call: &TraceCall, anchor: String) -> CallView {
    CallView {
        anchor,
        id: call.id,
        tool: call.tool.clone(),
        arguments: pretty(&call.arguments),
        malformed: call.malformed.clone(),
        status: call.status.phrase().to_owned(),
        is_error: call.is_error,
        result: call
            .result
            .as_ref()
            .map(|r| witness_text::clip_raw(r, SHOWN)),
        effects: effects(&call.effects, &call.rows),
        late_effects: effects(&call.late_effects, &call.rows),
    }
}

fn effects(list: &[Effect], rows: &[RowFacts]) -> Vec<EffectView> {
    list.iter()
        .map(|e| EffectView {
            object: e.qualified(),
            op: e.op.to_string(),
            facts: rows
                .iter()
                .find(|r| r.store == e.store && r.object == e.object)
                .and_then(RowFacts::latest)
                .map(|f| serde_json::to_string(f).unwrap_or_default())
                .unwrap_or_default(),
        })
        .collect()
}

/// The run in a few lines for a terminal: each run's status and failing
/// checks, the pass rates, and the gate. Model and server text is clipped
/// and made printable.
pub fn text_summary(document: &AgentRunDocument) -> String {
    let mut out = format!(
        "agent run: driver {}{}, {} model(s), {} case(s) × {} run(s)\n",
        document.driver.kind,
        if document.driver.replayed {
            " (replayed)"
        } else {
            ""
        },
        document.models.len(),
        document.cases.len(),
        document.settings.runs
    );
    out.push_str(&format!(
        "tools: {} definition(s) from {}, {}{}\n",
        document.tools.definitions.len(),
        witness_text::clip(&handed_source(&document.tools), 200),
        document.tools.fingerprint,
        document
            .server
            .manifest
            .as_ref()
            .map_or(String::new(), |m| format!("; the server lists {m}"))
    ));
    for run in &document.runs {
        let failed: Vec<String> = run
            .verdicts
            .iter()
            .filter(|v| v.verdict == witness_model::vocab::Verdict::Fail)
            .map(|v| v.check.to_string())
            .collect();
        let why = match (&run.trace.harness_error, failed.is_empty()) {
            (Some(error), _) => format!(": {}", witness_text::clip(error, 160)),
            (None, false) => format!(": {} failed", failed.join(", ")),
            (None, true) => String::new(),
        };
        out.push_str(&format!(
            "  {} · {} · run {}: {} (outcome {}, {} call(s)){why}\n",
            witness_text::clip(&run.case, 60),
            witness_text::clip(&run.model, 60),
            run.run,
            run.status.as_str(),
            run.outcome,
            run.calls
        ));
    }
    for rate in &document.summary.models {
        out.push_str(&format!(
            "model {}: {} of {} concluded run(s) passed ({}), {} untestable\n",
            witness_text::clip(&rate.model, 60),
            rate.passed,
            rate.passed + rate.failed,
            percent(rate.rate),
            rate.untestable
        ));
    }
    let gate = &document.summary.gate;
    out.push_str(&format!(
        "gate: {} (weakest model {} at {}, threshold {})\n",
        if gate.passed { "passed" } else { "failed" },
        gate.weakest_model
            .as_deref()
            .map_or("none".to_owned(), |m| witness_text::clip(m, 60)),
        percent(gate.weakest_rate),
        percent(Some(gate.threshold))
    ));
    out
}
