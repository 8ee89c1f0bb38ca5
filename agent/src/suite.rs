//! Every case for every model, `runs` times, into one run document.
//!
//! Each run gets a fresh jail seeded from its case, a fresh server and a
//! fresh conversation; the verdicts are derived from its trace; then the
//! judge grades the answers in slices; then the pass rates per case and
//! model, and the gate at the weakest model.

use std::time::Duration;

use witness_jail::JailSpec;
use witness_jail::observe::Settle;
use witness_model::agent::trace::{Trace, TraceTurn};
use witness_model::agent::*;
use witness_model::manifest::{DEFAULT_ENVIRONMENT, Pin};
use witness_model::vocab::{AgentCheck, RunOutcome, TurnEnd, Verdict};
use witness_wire::session::EraChoice;

use crate::client::{Conversation, Transcript, converse};
use crate::driver::{Driver, RunKey};
use crate::judge::{self, Item};
use crate::runner::{JailedServer, Launch};
use crate::seed::seed;
use crate::tools;

/// How the runs are made.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// The server command (`{NAME}` is store NAME's jailed path).
    pub command: Vec<String>,
    /// `--env` pairs for the server: values are never recorded.
    pub env: Vec<(String, String)>,
    pub isolate_network: bool,
    pub era: EraChoice,
    /// Timeout of every MCP request.
    pub timeout: Duration,
    /// How long each call's effects are given to land (`--settle-ms`,
    /// `--quiet-ms`), as an audit gives them.
    pub settle: Settle,
    pub runs: u32,
    pub max_tokens: u32,
    pub gate: f64,
    pub forward_annotations: bool,
    pub judge: Option<JudgeSettings>,
    pub system_prompt: String,
    /// The seed of a scripted model's drawn replies, recorded with the run.
    pub seed: Option<u64>,
}

/// What one suite runs.
pub struct Suite<'a> {
    pub cases: &'a [CaseEntry],
    pub models: &'a [String],
    pub options: &'a SuiteOptions,
    /// The tool definitions to hand the model (a pinned manifest's, a
    /// recording's); `None` hands the server's own. A pinned manifest's
    /// (`manifest` set) are handed in the order the server lists its tools,
    /// unless the run is a replay (a recording keeps the order it used).
    pub handed: Option<HandedTools>,
    /// The replies are a recording's.
    pub replayed: bool,
}

/// Runs the suite. `Err` (one line) only when no tool definitions could be
/// had; every other failure is an untestable run in the document.
pub fn run(
    suite: Suite<'_>,
    driver: &mut dyn Driver,
    progress: &mut dyn FnMut(&CaseRun),
) -> Result<AgentRunDocument, String> {
    let options = suite.options;
    // The catalog is read even when other definitions are handed: the
    // document says what the server offered beside what the model saw.
    let catalog = preflight(suite.cases, options)?;
    let served = Pin::from_catalog(&catalog, DEFAULT_ENVIRONMENT, None);
    let handed = match suite.handed {
        Some(handed) if handed.manifest.is_some() && !suite.replayed => {
            tools::in_served_order(handed, &catalog)
        }
        Some(handed) => handed,
        None => tools::from_catalog(&catalog, options.forward_annotations),
    };
    let mut runs = Vec::new();
    for model in suite.models {
        for entry in suite.cases {
            for run in 1..=options.runs {
                let done = run_one(entry, model, run, driver, &handed, options);
                progress(&done);
                runs.push(done);
            }
        }
    }
    let mut judge_batches = Vec::new();
    if let Some(settings) = &options.judge {
        judge_batches = grade_answers(&mut runs, suite.cases, driver, settings);
    }
    let summary = AgentSummary::of(&runs, options.gate);
    let exit_code = if runs.iter().any(|r| r.status == RunStatus::Untestable) {
        3
    } else if summary.gate.passed {
        0
    } else {
        1
    };
    Ok(AgentRunDocument {
        schema: AGENT_RUN_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        driver: DriverEntry {
            kind: driver.kind(),
            replayed: suite.replayed,
        },
        models: suite.models.to_vec(),
        server: ServerEntry {
            command: options.command.clone(),
            env: options.env.iter().map(|(k, _)| k.clone()).collect(),
            manifest: Some(served.fingerprint.short),
        },
        tools: handed,
        system_prompt: options.system_prompt.clone(),
        settings: RunSettings {
            runs: options.runs,
            max_tokens: options.max_tokens,
            settle_ms: u64::try_from(options.settle.bound.as_millis()).unwrap_or(u64::MAX),
            gate: options.gate,
            judge: options.judge.clone(),
            seed: options.seed,
        },
        cases: suite.cases.to_vec(),
        runs,
        judge_batches,
        summary,
        exit_code,
    })
}

/// The launch of one case's server.
fn launch(
    entry: &CaseEntry,
    options: &SuiteOptions,
) -> Result<(crate::seed::Seeded, Launch), String> {
    let seeded = seed(entry)?;
    // The case says who the client is; --env may add to it or override it.
    let mut env: Vec<(String, String)> = entry
        .case
        .env
        .iter()
        .filter(|(k, _)| !options.env.iter().any(|(o, _)| o == *k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.extend(options.env.iter().cloned());
    let launch = Launch {
        jail: JailSpec {
            command: options.command.clone(),
            stores: seeded.stores.clone(),
            env,
            keep: false,
            isolate_network: options.isolate_network,
        },
        facts: entry.case.facts.clone(),
        era: options.era,
        timeout: options.timeout,
        settle: options.settle,
    };
    Ok((seeded, launch))
}

/// The server's own catalog, read once from a server started on the first
/// case's seed.
fn preflight(
    cases: &[CaseEntry],
    options: &SuiteOptions,
) -> Result<Vec<serde_json::Value>, String> {
    let first = cases.first().ok_or("no case to run")?;
    let (_seeded, launch) = launch(first, options)?;
    let mut server = JailedServer::start(launch).map_err(|e| format!("no tool catalog: {e}"))?;
    let catalog = std::mem::take(&mut server.catalog);
    server.finish();
    Ok(catalog)
}

/// One repetition of one case with one model, to its verdicts.
fn run_one(
    entry: &CaseEntry,
    model: &str,
    run: u32,
    driver: &mut dyn Driver,
    handed: &HandedTools,
    options: &SuiteOptions,
) -> CaseRun {
    let case = &entry.case;
    let ceiling = witness_trace::ceiling(case.budget);
    let key = RunKey::Case {
        case: case.id.clone(),
        model: model.to_owned(),
        run,
    };
    let mut isolation = None;
    let (trace, exchanges) = match driver
        .begin(&key)
        .map_err(|e| format!("the driver cannot start this run: {e}"))
        .and_then(|()| launch(entry, options))
        .and_then(|(seeded, launch)| Ok((seeded, JailedServer::start(launch)?)))
    {
        Err(error) => (not_run(case, error), Vec::new()),
        Ok((_seeded, mut server)) => {
            isolation = server.isolation.clone();
            let conversation = Conversation {
                driver,
                model,
                system: &options.system_prompt,
                tools: &handed.definitions,
                max_tokens: options.max_tokens,
                ceiling,
            };
            let turns: Vec<String> = case.turns.iter().map(|t| t.user.clone()).collect();
            let transcript = converse(conversation, &turns, &mut server);
            let tools = tools::declared(&server.catalog);
            let startup = std::mem::take(&mut server.startup);
            trace_of(transcript, server, tools, startup)
        }
    };
    let evaluation = witness_trace::evaluate(case, &trace);
    CaseRun {
        case: case.id.clone(),
        model: model.to_owned(),
        run,
        ceiling,
        calls: evaluation.calls,
        isolation,
        outcome: evaluation.outcome,
        status: witness_trace::status(evaluation.outcome, &evaluation.verdicts),
        answer: witness_model::vocab::AnswerGrade::Unjudged,
        verdicts: evaluation.verdicts,
        trace,
        exchanges,
    }
}

/// The trace of a finished conversation, with what the server did after it.
fn trace_of(
    mut transcript: Transcript,
    server: JailedServer,
    tools: Vec<witness_model::agent::trace::DeclaredTool>,
    mut startup: Vec<witness_model::audit::Effect>,
) -> (Trace, Vec<Exchange>) {
    let finish = server.finish();
    match transcript.last_call_mut() {
        Some(last) => {
            last.late_effects.extend(finish.late);
            last.rows.extend(finish.late_rows);
        }
        None => startup.extend(finish.late),
    }
    startup.extend(std::mem::take(&mut transcript.startup));
    let trace = Trace {
        tools,
        startup_effects: startup,
        turns: transcript.turns,
        shutdown_effects: finish.shutdown,
        harness_error: transcript.harness_error,
        warnings: finish.warnings,
    };
    (trace, transcript.exchanges)
}

/// The trace of a run that never reached its first turn.
fn not_run(case: &witness_model::agent::case::GoldenCase, error: String) -> Trace {
    Trace {
        turns: case
            .turns
            .iter()
            .map(|t| TraceTurn {
                user: Some(t.user.clone()),
                steps: Vec::new(),
                end: TurnEnd::NotRun,
                reply: None,
            })
            .collect(),
        harness_error: Some(error),
        ..Trace::default()
    }
}

/// Grades every answered run whose case has an expectation; the others'
/// answer check stays `skip` and says why.
fn grade_answers(
    runs: &mut [CaseRun],
    cases: &[CaseEntry],
    driver: &mut dyn Driver,
    settings: &JudgeSettings,
) -> Vec<JudgeBatch> {
    let case_of = |id: &str| cases.iter().find(|e| e.case.id == id).map(|e| &e.case);
    let mut asked = Vec::new();
    let mut skipped = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        if run.outcome == RunOutcome::Untestable {
            continue;
        }
        if case_of(&run.case).is_none_or(|c| c.judge.is_none()) {
            skipped.push((
                index,
                "not judged: the case sets no expectation for the judge",
            ));
        } else if run.trace.turns.iter().any(|t| t.end != TurnEnd::Answered) {
            skipped.push((index, "not judged: a turn has no final answer to grade"));
        } else {
            asked.push(index);
        }
    }
    for (index, why) in skipped {
        if let Some(answer) = runs[index]
            .verdicts
            .iter_mut()
            .find(|v| v.check == AgentCheck::Answer && v.verdict == Verdict::Skip)
        {
            answer.detail = why.to_owned();
        }
    }
    let (grades, batches) = {
        let items: Vec<Item<'_>> = asked
            .iter()
            .filter_map(|&index| {
                let run = &runs[index];
                Some(Item {
                    case: case_of(&run.case)?,
                    model: &run.model,
                    run: run.run,
                    answers: run.trace.turns.iter().map(|t| t.reply.clone()).collect(),
                })
            })
            .collect();
        judge::judge(driver, &settings.model, settings.slice, &items)
    };
    for (index, (grade, why)) in asked.into_iter().zip(grades) {
        let run = &mut runs[index];
        witness_trace::grade(&mut run.verdicts, grade, &why);
        run.answer = grade;
        run.status = witness_trace::status(run.outcome, &run.verdicts);
    }
    batches
}
