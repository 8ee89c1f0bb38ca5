//! Agent runs: a model-driven client against a jailed server, judged from
//! the trace and the store (`mcp-witness.agent-run/v1`).
//!
//! - [`case`]: the golden cases (TOML) a run is held to;
//! - [`trace`]: what one run did, call by call, with the effects observed
//!   around each call: the one input of the verdicts;
//! - [`compare`]: two run documents of the same cases compared, each delta
//!   held to the noise floor reruns alone produce
//!   (`mcp-witness.agent-compare/v1`);
//! - this module: the run document — which driver and models, which tool
//!   definitions the model was handed (and their fingerprint), every run's
//!   trace, model exchanges and verdicts, the judge's batches, and the pass
//!   rates with the gate at the weakest model.
//!
//! A run document is self-contained: cases and their seed SQL travel in it,
//! so `--driver replay RUN.json` can run it again without a model.

pub mod case;
pub mod compare;
pub mod trace;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{AgentCheck, AnswerGrade, DriverKind, RunOutcome, StopReason, Verdict};
pub use case::GoldenCase;
pub use trace::Trace;

/// The versioned id of the run document.
pub const AGENT_RUN_SCHEMA: &str = "mcp-witness.agent-run/v1";

/// One `mcp-witness agent run`: every case, model and repetition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRunDocument {
    pub schema: String,
    pub generator: String,
    pub driver: DriverEntry,
    /// The models under test, in the order they ran.
    pub models: Vec<String>,
    pub server: ServerEntry,
    /// What the model was handed as tools: a separate input of the run.
    pub tools: HandedTools,
    /// The system prompt every conversation started with.
    pub system_prompt: String,
    pub settings: RunSettings,
    pub cases: Vec<CaseEntry>,
    pub runs: Vec<CaseRun>,
    /// The judge's requests, one per slice of answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_batches: Vec<JudgeBatch>,
    pub summary: AgentSummary,
    /// 0 the gate passed, 1 it failed, 3 a run was untestable.
    pub exit_code: i64,
}

/// Which driver spoke to the models.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DriverEntry {
    pub kind: DriverKind,
    /// Replies replayed from a recorded run instead of asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// The server every run launched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerEntry {
    pub command: Vec<String>,
    /// Names of the variables passed with `--env` (values are never kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// The fingerprint (`blake3:` and 16 hex digits) of the catalog the
    /// server listed, as `manifest pin` would pin it: what the server
    /// offered, whatever the model was handed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
}

/// The tool definitions handed to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HandedTools {
    /// Where they came from: `server` (its `tools/list`) or `manifest` (a
    /// pinned manifest, `--manifest`; the calls still went to the server).
    pub source: String,
    /// The pinned manifest they came from, when they came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<HandedManifest>,
    /// Whether each tool's declared annotations were appended to its
    /// description (neither API has a field for them).
    pub annotations_forwarded: bool,
    /// `blake3:` and 64 hex digits over the canonical JSON of `definitions`.
    pub fingerprint: String,
    pub definitions: Vec<ToolDefinition>,
}

/// The pinned manifest (`mcp-witness.manifest/v1`) a run handed its model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandedManifest {
    /// The pin file as it was given.
    pub file: String,
    pub environment: String,
    /// The pin's fingerprint: `blake3:` and 16 hex digits.
    pub fingerprint: String,
}

/// One tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// How the runs were made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSettings {
    /// Repetitions of every case for every model.
    pub runs: u32,
    /// The output bound asked of the model per reply.
    pub max_tokens: u32,
    /// Wait after a call before the post-call snapshot, in milliseconds.
    pub settle_ms: u64,
    /// The pass rate the weakest model must reach.
    pub gate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSettings>,
    /// The seed of a scripted model's drawn replies (`--seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// The judge, when one was asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeSettings {
    pub model: String,
    /// Answers graded per request.
    pub slice: u32,
}

/// One golden case as run, with the seed it started from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseEntry {
    /// The case file as it was given.
    pub file: String,
    /// Per store, its seed SQL (every file, in order, joined).
    pub seed_sql: BTreeMap<String, String>,
    pub case: GoldenCase,
}

/// How one run ended overall.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every check passed or skipped.
    Pass,
    /// A check failed.
    Fail,
    /// The run could not conclude; never evidence against the client.
    Untestable,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pass => "pass",
            RunStatus::Fail => "fail",
            RunStatus::Untestable => "untestable",
        }
    }
}

/// One repetition of one case with one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseRun {
    pub case: String,
    pub model: String,
    /// 1-based repetition.
    pub run: u32,
    /// The loop's call ceiling: above the case's budget, so going over it is
    /// observed rather than cut off.
    pub ceiling: u32,
    /// Tool calls the model asked for.
    pub calls: u32,
    /// How the server was isolated, as the jail achieved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    pub outcome: RunOutcome,
    pub status: RunStatus,
    pub answer: AnswerGrade,
    pub verdicts: Vec<CheckVerdict>,
    pub trace: Trace,
    /// Every request to the model and what came back.
    pub exchanges: Vec<Exchange>,
}

/// One check's verdict on one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckVerdict {
    pub check: AgentCheck,
    pub verdict: Verdict,
    /// Why, in one sentence, naming what decided it.
    pub detail: String,
    #[serde(default, skip_serializing_if = "AgentEvidence::is_empty")]
    pub evidence: AgentEvidence,
}

/// What a verdict rests on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentEvidence {
    /// 1-based turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<u32>,
    /// Call ids (`TraceCall::id`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
    /// Observed objects, `store:object op`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
}

impl AgentEvidence {
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.calls.is_empty() && self.objects.is_empty()
    }
}

/// One request to a model and its answer, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exchange {
    /// blake3 over the canonical JSON of the request in the drivers' common
    /// form (system prompt, tools, messages): a replay must send the same.
    pub request_digest: String,
    /// The HTTP request body as sent (HTTP drivers; never a header, so never
    /// a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The HTTP response body as received (bounded; a body that is not JSON
    /// is kept as a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The reply, read into the drivers' common form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<ModelReply>,
    /// Why there is no reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A model's reply in the drivers' common form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<RequestedCall>,
    pub stop: StopReason,
    /// The refusal's own text, when the model refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A tool call as the model asked for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestedCall {
    pub id: String,
    pub tool: String,
    /// The arguments (an object), or `null` when malformed.
    pub arguments: Value,
    /// The raw arguments and what was wrong with them, when they were not a
    /// JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<String>,
}

/// Tokens, as the endpoint reported them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One request to the judge: a slice of answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeBatch {
    pub items: Vec<JudgeItem>,
    pub exchange: Exchange,
    /// Why the batch left its items unjudged, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One answer the judge was asked about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeItem {
    /// Its number in the request.
    pub item: u32,
    pub case: String,
    pub model: String,
    pub run: u32,
    pub grade: AnswerGrade,
}

/// Pass rates and the gate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSummary {
    /// Per case and model.
    pub rates: Vec<PassRate>,
    /// Per model, over every case.
    pub models: Vec<PassRate>,
    pub gate: Gate,
}

/// Runs counted by status. `rate` is passed over concluded runs (passed and
/// failed); untestable runs are not in it, and `None` means none concluded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PassRate {
    /// The case (absent in a per-model row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    pub model: String,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub untestable: u32,
    pub rate: Option<f64>,
}

impl PassRate {
    fn add(&mut self, status: RunStatus) {
        self.runs += 1;
        match status {
            RunStatus::Pass => self.passed += 1,
            RunStatus::Fail => self.failed += 1,
            RunStatus::Untestable => self.untestable += 1,
        }
        let concluded = self.passed + self.failed;
        self.rate = (concluded > 0).then(|| f64::from(self.passed) / f64::from(concluded));
    }
}

/// The gate: the weakest model's pass rate against the threshold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gate {
    pub threshold: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weakest_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weakest_rate: Option<f64>,
    pub passed: bool,
}

impl AgentSummary {
    /// Rates per case and model (in the order runs appear), per model, and
    /// the gate at the weakest model. A model with no concluded run is the
    /// weakest of all: the gate cannot pass on what was never measured.
    pub fn of(runs: &[CaseRun], threshold: f64) -> Self {
        let mut rates: Vec<PassRate> = Vec::new();
        let mut models: Vec<PassRate> = Vec::new();
        for run in runs {
            let row = match rates
                .iter()
                .position(|r| r.case.as_deref() == Some(&run.case) && r.model == run.model)
            {
                Some(at) => &mut rates[at],
                None => {
                    rates.push(PassRate {
                        case: Some(run.case.clone()),
                        model: run.model.clone(),
                        ..PassRate::default()
                    });
                    let last = rates.len() - 1;
                    &mut rates[last]
                }
            };
            row.add(run.status);
            let row = match models.iter().position(|r| r.model == run.model) {
                Some(at) => &mut models[at],
                None => {
                    models.push(PassRate {
                        model: run.model.clone(),
                        ..PassRate::default()
                    });
                    let last = models.len() - 1;
                    &mut models[last]
                }
            };
            row.add(run.status);
        }
        let weakest = models
            .iter()
            .min_by(|a, b| {
                let (x, y) = (a.rate.unwrap_or(-1.0), b.rate.unwrap_or(-1.0));
                x.total_cmp(&y)
            })
            .cloned();
        let gate = Gate {
            threshold,
            passed: weakest
                .as_ref()
                .and_then(|w| w.rate)
                .is_some_and(|rate| rate >= threshold),
            weakest_model: weakest.as_ref().map(|w| w.model.clone()),
            weakest_rate: weakest.and_then(|w| w.rate),
        };
        Self {
            rates,
            models,
            gate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(case: &str, model: &str, status: RunStatus) -> CaseRun {
        CaseRun {
            case: case.into(),
            model: model.into(),
            run: 1,
            ceiling: 8,
            calls: 0,
            isolation: None,
            outcome: RunOutcome::Pass,
            status,
            answer: AnswerGrade::Unjudged,
            verdicts: Vec::new(),
            trace: Trace::default(),
            exchanges: Vec::new(),
        }
    }

    #[test]
    fn the_gate_is_the_weakest_model_and_untestable_runs_are_not_counted() {
        let runs = [
            run("a", "strong", RunStatus::Pass),
            run("b", "strong", RunStatus::Pass),
            run("a", "weak", RunStatus::Pass),
            run("b", "weak", RunStatus::Fail),
            run("b", "weak", RunStatus::Untestable),
        ];
        let summary = AgentSummary::of(&runs, 0.5);
        assert_eq!(summary.rates.len(), 4);
        let weak_b = &summary.rates[3];
        assert_eq!(
            (weak_b.runs, weak_b.passed, weak_b.failed, weak_b.untestable),
            (2, 0, 1, 1)
        );
        assert_eq!(weak_b.rate, Some(0.0));
        assert_eq!(summary.gate.weakest_model.as_deref(), Some("weak"));
        assert_eq!(summary.gate.weakest_rate, Some(0.5));
        assert!(summary.gate.passed);
        assert!(!AgentSummary::of(&runs, 0.75).gate.passed);
    }

    #[test]
    fn a_model_with_nothing_concluded_fails_the_gate() {
        let runs = [
            run("a", "strong", RunStatus::Pass),
            run("a", "silent", RunStatus::Untestable),
        ];
        let summary = AgentSummary::of(&runs, 0.0);
        assert_eq!(summary.gate.weakest_model.as_deref(), Some("silent"));
        assert!(!summary.gate.passed);
        assert!(!AgentSummary::of(&[], 0.0).gate.passed);
    }
}
