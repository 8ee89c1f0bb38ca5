//! Two agent runs of the same cases compared (`mcp-witness.agent-compare/v1`):
//! what changed between BEFORE and AFTER, per case and overall, and whether
//! each change is bigger than what reruns alone produce.
//!
//! The usual pair is one suite run twice against the same live server —
//! once handed a pinned manifest (`agent run --manifest PIN`), once handed
//! the live one — so the difference between the sides is the tool
//! definitions the model read. Each side's repetitions (`--runs N`) had no
//! manifest change between them: how much they differ among themselves is
//! the rerun noise, and a delta is called real only when it exceeds the
//! noise floor drawn from it ([`NoiseRule`]; `docs/agent-compare.md`).
//!
//! The computation is `witness_agent::compare`'s; this module is the
//! document and its vocabulary.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::HandedManifest;
use crate::vocab::DriverKind;

/// The versioned id of the compare document.
pub const COMPARE_SCHEMA: &str = "mcp-witness.agent-compare/v1";

/// Standard errors of rerun noise a delta must exceed to be called real.
pub const FLOOR_Z: f64 = 3.0;

/// Concluded runs a side needs before its rerun noise can be estimated.
pub const MIN_RUNS: u32 = 2;

/// The compare report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentCompareDocument {
    /// Always `mcp-witness.agent-compare/v1`.
    pub schema: String,
    pub generator: String,
    pub before: CompareSide,
    pub after: CompareSide,
    /// How the noise floor is drawn and used.
    pub noise: NoiseRule,
    /// How the tool definitions handed to the model differ between the
    /// sides, tool by tool: what the deltas are to be attributed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handed_changes: Vec<HandedChange>,
    /// What differs between the sides besides the runs themselves, and what
    /// that means for reading the deltas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Per model, over the cases compared.
    pub overall: Vec<ModelComparison>,
    /// Per case and model, in BEFORE's order.
    pub cases: Vec<CaseComparison>,
    /// Cases and models that were not compared, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<NotCompared>,
    /// Tools AFTER called that the suite's history never saw called.
    pub history: HistoryCheck,
    pub summary: CompareSummary,
    /// 0 nothing real got worse and no unacknowledged new tool, 1 something
    /// did, 3 the compare could not conclude (too few runs, nothing concluded).
    pub exit_code: i64,
}

/// One side: a run document and what it was run with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompareSide {
    /// The run document as it was given.
    pub source: String,
    pub driver: DriverKind,
    pub models: Vec<String>,
    /// Repetitions of every case (`--runs`).
    pub runs: u32,
    /// The seed of a scripted model's draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Where the handed definitions came from: `server` or `manifest`.
    pub tools_source: String,
    /// The pinned manifest handed, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<HandedManifest>,
    /// The handed definitions' fingerprint (`blake3:` and 64 hex digits).
    pub tools_fingerprint: String,
    /// The server command the calls went to.
    pub server: Vec<String>,
    /// The catalog the server listed, as a pin fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_manifest: Option<String>,
}

/// One tool whose handed definition differs between the sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandedChange {
    pub tool: String,
    /// `added` (AFTER only), `removed` (BEFORE only), or the parts that
    /// differ: `description`, `input schema`, `position` (the order tools
    /// were handed in).
    pub what: Vec<String>,
}

/// The statistic, as applied: the floor of a delta is `z` standard errors
/// of the difference of two means under rerun noise alone,
/// `sqrt(s_before^2 / n_before + s_after^2 / n_after)`, each `s^2` the
/// sample variance (n - 1) of one side's repetitions of the case; overall,
/// the per-case standard errors combine as `sqrt(sum of SE^2) / cases`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoiseRule {
    pub z: f64,
    /// Concluded runs per side below which there is no floor.
    pub min_runs: u32,
    /// The rule in one sentence.
    pub rule: String,
}

/// What is measured per run (each run counts once, untestable runs never).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// 1 when the run passed, 0 when it failed.
    PassRate,
    /// Tool calls the model asked for.
    Calls,
    /// Requests to the model (a turn of the model, with or without calls).
    Turns,
    /// 1 when the calls exceeded the case's budget.
    OverBudget,
    /// Input tokens the endpoint reported, over the run.
    InputTokens,
    /// Output tokens the endpoint reported, over the run.
    OutputTokens,
    /// 1 when the run's first call was of the tool named beside it.
    FirstTool,
}

impl Metric {
    /// The metrics every case and model are compared on, in report order.
    pub const ALL: [Metric; 6] = [
        Metric::PassRate,
        Metric::Calls,
        Metric::Turns,
        Metric::OverBudget,
        Metric::InputTokens,
        Metric::OutputTokens,
    ];

    /// Words for a person.
    pub fn label(self) -> &'static str {
        match self {
            Metric::PassRate => "pass rate",
            Metric::Calls => "calls per run",
            Metric::Turns => "model turns per run",
            Metric::OverBudget => "over budget",
            Metric::InputTokens => "input tokens per run",
            Metric::OutputTokens => "output tokens per run",
            Metric::FirstTool => "runs starting with it",
        }
    }

    /// A share of runs (shown as a percentage) rather than a count.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Metric::PassRate | Metric::OverBudget | Metric::FirstTool
        )
    }

    /// Which way is worse: `Some(true)` when a rise is, `None` when neither.
    pub fn rise_is_worse(self) -> Option<bool> {
        match self {
            Metric::PassRate => Some(false),
            Metric::FirstTool => None,
            _ => Some(true),
        }
    }
}

/// What a delta is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeltaVerdict {
    /// Real, and in the worse direction.
    Worse,
    /// Real, and in the better direction.
    Better,
    /// Real, for a measure with no better direction (which tool comes first).
    Changed,
    /// No bigger than the noise floor: reruns alone move it this much.
    WithinNoise,
    /// No floor: a side has fewer than `min_runs` concluded runs.
    NoFloor,
    /// Not measured on both sides (the driver reported no tokens).
    NotMeasured,
}

impl DeltaVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaVerdict::Worse => "worse",
            DeltaVerdict::Better => "better",
            DeltaVerdict::Changed => "changed",
            DeltaVerdict::WithinNoise => "within noise",
            DeltaVerdict::NoFloor => "no floor",
            DeltaVerdict::NotMeasured => "not measured",
        }
    }

    /// Called real: bigger than the floor.
    pub fn is_real(self) -> bool {
        matches!(
            self,
            DeltaVerdict::Worse | DeltaVerdict::Better | DeltaVerdict::Changed
        )
    }
}

/// One measure on both sides. Values are rounded to four decimals, and the
/// verdict is drawn from the rounded values, so it agrees with what is shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricDelta {
    pub metric: Metric,
    /// The mean over BEFORE's concluded runs (a share for a rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<f64>,
    /// `after - before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// The noise floor: how far reruns alone move this delta.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
    pub verdict: DeltaVerdict,
}

/// Runs of one case and model on one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunCounts {
    pub runs: u32,
    /// Passed or failed: the runs every measure is taken over.
    pub concluded: u32,
    pub untestable: u32,
}

/// One case with one model, both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseComparison {
    pub case: String,
    pub model: String,
    /// The case's call budget.
    pub budget: u32,
    pub before: RunCounts,
    pub after: RunCounts,
    /// One per [`Metric::ALL`], in that order.
    pub metrics: Vec<MetricDelta>,
    /// Every tool some run of either side called first, by name.
    pub first_tools: Vec<FirstTool>,
    /// Tools AFTER's runs of this case called that the suite's history
    /// never saw called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_tools: Vec<String>,
}

/// How often runs started with one tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FirstTool {
    pub tool: String,
    /// No BEFORE run of this case started with it; some AFTER run did.
    pub new: bool,
    /// Its share of runs ([`Metric::FirstTool`]).
    pub share: MetricDelta,
}

/// One model over every case compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelComparison {
    pub model: String,
    /// Cases compared for this model.
    pub cases: u32,
    /// One per [`Metric::ALL`]: the mean over cases of each case's mean.
    pub metrics: Vec<MetricDelta>,
}

/// Why a case and model were left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NotComparedReason {
    /// Run on BEFORE only.
    OnlyBefore,
    /// Run on AFTER only.
    OnlyAfter,
    /// The case file differs between the sides (budget, turns, checks).
    CaseDiffers,
    /// A side has no concluded run of it: the compare cannot conclude.
    NothingConcluded,
}

/// A case and model not compared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotCompared {
    pub case: String,
    pub model: String,
    pub reason: NotComparedReason,
}

/// The standing check: a run introduces no tool the suite never called
/// unless a person acknowledged it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryCheck {
    /// The run documents the history is read from: BEFORE and every `--history`.
    pub sources: Vec<String>,
    /// Every tool the history saw called, sorted.
    pub known: Vec<String>,
    /// Tools acknowledged with `--acknowledge`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acknowledged: Vec<String>,
    /// Tools AFTER called that the history never saw, sorted.
    pub new_tools: Vec<NewTool>,
}

/// A tool new to the suite's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewTool {
    pub tool: String,
    /// The cases whose AFTER runs called it.
    pub cases: Vec<String>,
    /// AFTER runs that called it.
    pub runs: u32,
    pub acknowledged: bool,
}

/// Counts, for a summary line and a gate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CompareSummary {
    /// Cases and models compared.
    pub compared: u32,
    /// Real deltas in the worse direction (per case and overall).
    pub worse: u32,
    /// Real deltas in the better direction.
    pub better: u32,
    /// Real changes of which tool comes first.
    pub changed: u32,
    /// Deltas within the noise floor.
    pub within_noise: u32,
    /// Deltas with no floor.
    pub no_floor: u32,
    /// New tools nobody acknowledged.
    pub unacknowledged_tools: u32,
}
