//! `agent compare`: two run documents of the same cases, per case and
//! overall, every delta held to the noise floor reruns alone produce.
//!
//! ```text
//! BEFORE (agent-run.json) ─┐            ┌─ per case and model: pass rate, calls, turns,
//!                          ├─ pairs ────┤  over budget, tokens, first tool ─ noise floor
//! AFTER  (agent-run.json) ─┘  (case,    ├─ overall per model ─────────────── noise floor
//!          --history ...  ─── model)    └─ tools the suite's history never saw called
//! ```
//!
//! Pure: the same two documents always give the same report, byte for
//! byte. Untestable runs are left out of every measure (they say nothing
//! about the client); a case and model with no concluded run on a side
//! cannot be compared, and the compare then cannot conclude.

mod history;
mod noise;

use std::collections::BTreeSet;

use witness_model::agent::compare::*;
use witness_model::agent::{AgentRunDocument, CaseEntry, CaseRun, RunStatus, ToolDefinition};
use witness_model::manifest::canonical;

pub use noise::{Raw, Sample};

/// One side of a compare: a run document and how it was named.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    pub document: &'a AgentRunDocument,
    /// The file as given on the command line.
    pub source: &'a str,
}

/// What a compare reads.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    pub before: Side<'a>,
    pub after: Side<'a>,
    /// More run documents of the suite: their calls join the history.
    pub history: Vec<Side<'a>>,
    /// Tools a person acknowledged as new.
    pub acknowledged: Vec<String>,
}

/// Why there is nothing to compare.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error(
        "the two runs have no case and model in common (the same case, by id and content, run by the same model): nothing to compare"
    )]
    NothingInCommon,
}

/// The rule as the document states it.
pub fn noise_rule() -> NoiseRule {
    NoiseRule {
        z: FLOOR_Z,
        min_runs: MIN_RUNS,
        rule: format!(
            "a delta is real when its size exceeds {FLOOR_Z} standard errors of the difference \
             under rerun noise alone, sqrt(s_before^2/n_before + s_after^2/n_after), each s^2 \
             the sample variance of one side's repetitions of the case (overall: the cases' \
             standard errors combined, sqrt(sum SE^2)/cases); a side with fewer than {MIN_RUNS} \
             concluded runs has no floor"
        ),
    }
}

/// Compares AFTER with BEFORE.
pub fn compare(inputs: &Inputs<'_>) -> Result<AgentCompareDocument, CompareError> {
    let (before, after) = (inputs.before.document, inputs.after.document);
    let history = history::History::of(inputs);
    let mut cases = Vec::new();
    let mut raws = Vec::new();
    let mut not_compared = Vec::new();
    for (case, model) in pairs(before, after) {
        match pair(before, after, &case, &model) {
            Ok((mut compared, raw)) => {
                compared.new_tools = history.new_in(after, &case, &model);
                cases.push(compared);
                raws.push(raw);
            }
            Err(reason) => not_compared.push(NotCompared {
                case,
                model,
                reason,
            }),
        }
    }
    let unconcluded = not_compared
        .iter()
        .any(|n| n.reason == NotComparedReason::NothingConcluded);
    if cases.is_empty() && !unconcluded {
        return Err(CompareError::NothingInCommon);
    }
    let overall = overall(before, after, &cases, &raws);
    let history = history.check(after, &inputs.acknowledged);
    let summary = summary(&cases, &overall, &history);
    let exit_code = exit_code(&cases, &not_compared, &summary);
    Ok(AgentCompareDocument {
        schema: COMPARE_SCHEMA.to_owned(),
        generator: witness_model::GENERATOR.into(),
        before: side(inputs.before),
        after: side(inputs.after),
        noise: noise_rule(),
        handed_changes: handed_changes(&before.tools.definitions, &after.tools.definitions),
        notes: notes(before, after),
        overall,
        cases,
        not_compared,
        history,
        summary,
        exit_code,
    })
}

fn side(side: Side<'_>) -> CompareSide {
    let document = side.document;
    CompareSide {
        source: side.source.to_owned(),
        driver: document.driver.kind,
        models: document.models.clone(),
        runs: document.settings.runs,
        seed: document.settings.seed,
        tools_source: document.tools.source.clone(),
        manifest: document.tools.manifest.clone(),
        tools_fingerprint: document.tools.fingerprint.clone(),
        server: document.server.command.clone(),
        server_manifest: document.server.manifest.clone(),
    }
}

/// Every (case, model) of either side: BEFORE's in its run order, then
/// AFTER's own.
fn pairs(before: &AgentRunDocument, after: &AgentRunDocument) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for run in before.runs.iter().chain(&after.runs) {
        let key = (run.case.clone(), run.model.clone());
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

fn entry<'a>(document: &'a AgentRunDocument, case: &str) -> Option<&'a CaseEntry> {
    document.cases.iter().find(|e| e.case.id == case)
}

fn runs_of<'a>(document: &'a AgentRunDocument, case: &str, model: &str) -> Vec<&'a CaseRun> {
    document
        .runs
        .iter()
        .filter(|r| r.case == case && r.model == model)
        .collect()
}

/// One case and model on both sides (with each metric's delta before
/// rounding, for the overall means), or why it cannot be compared.
fn pair(
    before: &AgentRunDocument,
    after: &AgentRunDocument,
    case: &str,
    model: &str,
) -> Result<(CaseComparison, Vec<Raw>), NotComparedReason> {
    let (b_runs, a_runs) = (runs_of(before, case, model), runs_of(after, case, model));
    if a_runs.is_empty() {
        return Err(NotComparedReason::OnlyBefore);
    }
    if b_runs.is_empty() {
        return Err(NotComparedReason::OnlyAfter);
    }
    let (Some(b_entry), Some(a_entry)) = (entry(before, case), entry(after, case)) else {
        return Err(NotComparedReason::CaseDiffers);
    };
    // The same case, judged the same way, from the same seed: the file's
    // path may differ, nothing else may.
    if b_entry.case != a_entry.case || b_entry.seed_sql != a_entry.seed_sql {
        return Err(NotComparedReason::CaseDiffers);
    }
    let budget = b_entry.case.budget;
    let b_values: Vec<RunValues> = b_runs.iter().filter_map(|r| values(r, budget)).collect();
    let a_values: Vec<RunValues> = a_runs.iter().filter_map(|r| values(r, budget)).collect();
    if b_values.is_empty() || a_values.is_empty() {
        return Err(NotComparedReason::NothingConcluded);
    }
    let raws: Vec<Raw> = (0..Metric::ALL.len())
        .map(|i| {
            // A measure some run lacks (tokens) is not measured at all.
            let sample = |runs: &[RunValues]| -> Sample {
                let values: Option<Vec<f64>> = runs.iter().map(|r| r.values[i]).collect();
                Sample::new(values.unwrap_or_default())
            };
            Raw::of(&sample(&b_values), &sample(&a_values))
        })
        .collect();
    let compared = CaseComparison {
        case: case.to_owned(),
        model: model.to_owned(),
        budget,
        before: counts(&b_runs),
        after: counts(&a_runs),
        metrics: Metric::ALL
            .iter()
            .zip(&raws)
            .map(|(&metric, raw)| raw.judged(metric))
            .collect(),
        first_tools: first_tools(&b_values, &a_values),
        new_tools: Vec::new(),
    };
    Ok((compared, raws))
}

fn counts(runs: &[&CaseRun]) -> RunCounts {
    let untestable = runs
        .iter()
        .filter(|r| r.status == RunStatus::Untestable)
        .count();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    RunCounts {
        runs: count(runs.len()),
        concluded: count(runs.len() - untestable),
        untestable: count(untestable),
    }
}

/// One concluded run's measures, in [`Metric::ALL`]'s order, and its first tool.
struct RunValues {
    values: [Option<f64>; 6],
    first: Option<String>,
}

/// The measures of a concluded run; `None` for an untestable one.
fn values(run: &CaseRun, budget: u32) -> Option<RunValues> {
    let passed = match run.status {
        RunStatus::Pass => 1.0,
        RunStatus::Fail => 0.0,
        RunStatus::Untestable => return None,
    };
    // Tokens only when the endpoint reported them for every request.
    let usage: Option<Vec<_>> = run
        .exchanges
        .iter()
        .map(|e| e.reply.as_ref().and_then(|r| r.usage))
        .collect();
    let usage = usage.filter(|u| !u.is_empty());
    let tokens = |pick: fn(&witness_model::agent::Usage) -> u64| {
        usage
            .as_ref()
            .map(|u| u.iter().map(pick).sum::<u64>() as f64)
    };
    Some(RunValues {
        values: [
            Some(passed),
            Some(f64::from(run.calls)),
            Some(run.exchanges.len() as f64),
            Some(if run.calls > budget { 1.0 } else { 0.0 }),
            tokens(|u| u.input_tokens),
            tokens(|u| u.output_tokens),
        ],
        first: run.trace.calls().next().map(|c| c.tool.clone()),
    })
}

/// Every tool some run started with, by name: its share of runs on each side.
fn first_tools(before: &[RunValues], after: &[RunValues]) -> Vec<FirstTool> {
    let tools: BTreeSet<&str> = before
        .iter()
        .chain(after)
        .filter_map(|r| r.first.as_deref())
        .collect();
    tools
        .into_iter()
        .map(|tool| {
            let sample = |runs: &[RunValues]| {
                Sample::new(
                    runs.iter()
                        .map(|r| f64::from(u8::from(r.first.as_deref() == Some(tool))))
                        .collect(),
                )
            };
            let new = !before.iter().any(|r| r.first.as_deref() == Some(tool));
            FirstTool {
                tool: tool.to_owned(),
                new,
                share: Raw::of(&sample(before), &sample(after)).judged(Metric::FirstTool),
            }
        })
        .collect()
}

/// Per model: every metric's mean over the cases compared, its floor
/// combined from theirs.
fn overall(
    before: &AgentRunDocument,
    after: &AgentRunDocument,
    cases: &[CaseComparison],
    raws: &[Vec<Raw>],
) -> Vec<ModelComparison> {
    let mut models: Vec<&str> = Vec::new();
    for model in before.models.iter().chain(&after.models) {
        if cases.iter().any(|c| &c.model == model) && !models.contains(&model.as_str()) {
            models.push(model);
        }
    }
    models
        .into_iter()
        .map(|model| {
            let of_model: Vec<&Vec<Raw>> = cases
                .iter()
                .zip(raws)
                .filter(|(c, _)| c.model == model)
                .map(|(_, r)| r)
                .collect();
            let metrics = Metric::ALL
                .iter()
                .enumerate()
                .map(|(i, &metric)| {
                    let per_case: Vec<Raw> = of_model.iter().map(|r| r[i]).collect();
                    Raw::overall(&per_case).judged(metric)
                })
                .collect();
            ModelComparison {
                model: model.to_owned(),
                cases: u32::try_from(of_model.len()).unwrap_or(u32::MAX),
                metrics,
            }
        })
        .collect()
}

/// Tool by tool, how AFTER's handed definitions differ from BEFORE's: in
/// BEFORE's order, then AFTER's new tools.
fn handed_changes(before: &[ToolDefinition], after: &[ToolDefinition]) -> Vec<HandedChange> {
    let position = |list: &[ToolDefinition], name: &str| list.iter().position(|d| d.name == name);
    let mut out = Vec::new();
    for (at, old) in before.iter().enumerate() {
        let Some(now) = after.iter().find(|d| d.name == old.name) else {
            out.push(HandedChange {
                tool: old.name.clone(),
                what: vec!["removed".into()],
            });
            continue;
        };
        let mut what = Vec::new();
        if old.description != now.description {
            what.push("description".to_owned());
        }
        if canonical(&old.input_schema) != canonical(&now.input_schema) {
            what.push("input schema".to_owned());
        }
        if position(after, &old.name) != Some(at) {
            what.push("position".to_owned());
        }
        if !what.is_empty() {
            out.push(HandedChange {
                tool: old.name.clone(),
                what,
            });
        }
    }
    for new in after.iter().filter(|d| position(before, &d.name).is_none()) {
        out.push(HandedChange {
            tool: new.name.clone(),
            what: vec!["added".into()],
        });
    }
    out
}

/// What differs between the sides besides their runs.
fn notes(before: &AgentRunDocument, after: &AgentRunDocument) -> Vec<String> {
    let mut notes = Vec::new();
    let (bt, at) = (&before.tools, &after.tools);
    if bt.fingerprint == at.fingerprint {
        notes.push(
            "both sides handed the model the same tool definitions: a delta here is not a \
             manifest's; it is noise or a change elsewhere"
                .to_owned(),
        );
    }
    match (&before.server.manifest, &after.server.manifest) {
        (Some(b), Some(a)) if b != a => notes.push(format!(
            "the server listed different tools on each side ({b}, {a}): the delta mixes the \
             handed definitions with what the server does"
        )),
        _ => {}
    }
    let mut differs = |what: &str, same: bool| {
        if !same {
            notes.push(format!("the sides differ in {what}"));
        }
    };
    differs(
        "the system prompt",
        before.system_prompt == after.system_prompt,
    );
    differs("the driver", before.driver.kind == after.driver.kind);
    differs(
        "whether annotations were forwarded",
        bt.annotations_forwarded == at.annotations_forwarded,
    );
    differs(
        "the output bound per reply (--max-tokens)",
        before.settings.max_tokens == after.settings.max_tokens,
    );
    differs(
        "the judge (its grades decide the answer check)",
        before.settings.judge == after.settings.judge,
    );
    differs(
        "the server command",
        before.server.command == after.server.command,
    );
    notes
}

fn summary(
    cases: &[CaseComparison],
    overall: &[ModelComparison],
    history: &HistoryCheck,
) -> CompareSummary {
    let mut summary = CompareSummary {
        compared: u32::try_from(cases.len()).unwrap_or(u32::MAX),
        ..CompareSummary::default()
    };
    let deltas = cases
        .iter()
        .flat_map(|c| {
            c.metrics
                .iter()
                .chain(c.first_tools.iter().map(|f| &f.share))
        })
        .chain(overall.iter().flat_map(|m| &m.metrics));
    for delta in deltas {
        match delta.verdict {
            DeltaVerdict::Worse => summary.worse += 1,
            DeltaVerdict::Better => summary.better += 1,
            DeltaVerdict::Changed => summary.changed += 1,
            DeltaVerdict::WithinNoise => summary.within_noise += 1,
            DeltaVerdict::NoFloor => summary.no_floor += 1,
            DeltaVerdict::NotMeasured => {}
        }
    }
    summary.unacknowledged_tools =
        u32::try_from(history.new_tools.iter().filter(|t| !t.acknowledged).count())
            .unwrap_or(u32::MAX);
    summary
}

/// 3 when the compare cannot conclude (a case with nothing concluded, or
/// too few runs for a floor), else 1 when something real got worse or a
/// new tool went unacknowledged, else 0.
fn exit_code(cases: &[CaseComparison], not: &[NotCompared], summary: &CompareSummary) -> i64 {
    let short = |c: &RunCounts| c.concluded < MIN_RUNS;
    let incomplete = not
        .iter()
        .any(|n| n.reason == NotComparedReason::NothingConcluded)
        || cases.iter().any(|c| short(&c.before) || short(&c.after));
    if incomplete {
        3
    } else if summary.worse > 0 || summary.unacknowledged_tools > 0 {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
