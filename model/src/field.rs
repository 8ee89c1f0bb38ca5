//! The field study's document, `mcp-witness.field/v1` (issue 39): published
//! local-state servers audited as published (no plan file, default
//! options), then once per annotation lie a relay plants in their
//! `tools/list` answer, every verdict held to a ground truth read from the
//! packages' source.
//!
//! Every number is read from the audits and the ground truth behind them.
//! The document holds no times and no machine paths (they are placeholders,
//! as in the audits), so a rerun writes it byte for byte when the servers
//! behave the same. Its rows (one per server × tool × hint) are written
//! beside it as JSON Lines and CSV.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const FIELD_SCHEMA: &str = "mcp-witness.field/v1";

/// `mcp-witness.field/v1`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldDocument {
    pub schema: String,
    pub generator: String,
    /// Always `none`: the planner chose every call.
    pub plan: String,
    pub timeout_ms: u64,
    pub settle_ms: u64,
    /// Which half of the split ran: `development`, `evaluation` or `all`;
    /// `subset` when `--server` chose the servers.
    pub half: String,
    pub servers: Vec<FieldServer>,
    /// Per hint (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`), over every server that ran.
    pub hints: Vec<FieldHintTally>,
    pub totals: FieldTotals,
}

/// The sums over every server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldTotals {
    pub servers: usize,
    /// Servers whose audits ran (the others have an `error`).
    pub servers_run: usize,
    /// Servers with a ground truth file.
    pub servers_with_truth: usize,
    /// Servers that annotate at least one tool.
    pub servers_annotating: usize,
    pub tools: usize,
    pub tools_exercised: usize,
    pub tools_annotated: usize,
    pub lies_planted: usize,
    pub lies_caught: usize,
    /// Failing checks on a claim the ground truth says holds.
    pub false_failures: usize,
    /// Failing checks the ground truth confirms (the claim really is wrong).
    pub confirmed_failures: usize,
    /// Failing checks no ground truth can judge (no truth for the tool, or
    /// a check that tests no hint: EFF-05).
    pub unjudged_failures: usize,
}

/// One hint across the study.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldHintTally {
    /// As MCP spells it: `readOnlyHint`, ...
    pub hint: String,
    /// Tools that declare the hint at all (true or false).
    pub declared: usize,
    /// Of those, declared `true`.
    pub declared_true: usize,
    /// Of those, declared the safer value (`readOnlyHint: true`,
    /// `destructiveHint: false`, `idempotentHint: true`, `openWorldHint:
    /// false`): a claim a client may act on without asking, and the only
    /// value an audit holds a tool to.
    pub claims: usize,
    /// The honest audits' verdicts on those claims (the check that holds a
    /// tool to this hint): holds, broken, not tested.
    pub holds: usize,
    pub broken: usize,
    pub untested: usize,
    /// Why each claim was not tested: the verdict and the audit's
    /// reason, counted.
    pub untested_why: Vec<FieldCount>,
    /// Tools the ground truth says a lie on this hint belongs on (writes,
    /// deletes or overwrites, is not idempotent); `openWorldHint` has no lie.
    pub lies_planted: usize,
    pub lies_caught: usize,
    /// Why each lie that escaped escaped, counted.
    pub missed_why: Vec<FieldCount>,
    /// Failing checks of this hint the ground truth says are wrong.
    pub false_failures: usize,
    /// What the honest audits observed of the tools that leave this hint
    /// unset (`suggest`). Absent from documents written before it was
    /// counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unset: Option<FieldUnsetTally>,
}

/// The tools that leave a hint unset, and what `suggest` made of their
/// honest audit: the value their observed behaviour supports, if any. Only
/// the less safe value is ever suggested (`readOnlyHint: false`: seen to
/// write; `destructiveHint: true`: seen to delete or overwrite;
/// `idempotentHint: false`: the identical repeat changed more;
/// `openWorldHint: true`: seen to reach the network), each from a failing
/// check judged as if the tool had claimed the safer value. Each tool is in
/// exactly one of `suggested`, `silent`, `kept_content`, `untestable`,
/// `not_exercised` and `no_verdict`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldUnsetTally {
    /// Tools that leave the hint unset.
    pub tools: usize,
    /// The behaviour supports the less safe value.
    pub suggested: usize,
    /// Judged, and nothing was seen against the safer value (which silence
    /// never earns: it is not suggested).
    pub silent: usize,
    /// `destructiveHint` only: judged silent, and existing content was
    /// changed and kept (a note for the author, not a suggestion).
    pub kept_content: usize,
    /// Called, but the check could not decide.
    pub untestable: usize,
    pub untestable_why: Vec<FieldCount>,
    /// No successful call.
    pub not_exercised: usize,
    pub not_exercised_why: Vec<FieldCount>,
    /// Called, and the check gave no verdict to judge.
    pub no_verdict: usize,
    /// Of `tools`, those with a ground truth for the tool.
    pub with_truth: usize,
    /// Of those, the ones the truth gives the less safe value (it writes;
    /// deletes or overwrites; is not idempotent; reaches the network).
    pub truth_unsafe: usize,
    /// Suggestions the truth agrees with.
    pub suggested_confirmed: usize,
    /// Suggestions the truth contradicts (it says the safer value holds):
    /// the suggestion's false failures.
    pub suggested_contradicted: usize,
    /// Tools the truth gives the less safe value that were judged silent
    /// or kept content: the behaviour was not seen.
    pub silent_unsafe: usize,
}

/// A reason and how often it was given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldCount {
    pub why: String,
    pub count: usize,
}

/// One server: its honest audit and one audit per planted lie.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldServer {
    /// The id under `experiments/field/servers/`.
    pub id: String,
    /// Its kind in the selection (`notes`, `tasks`, `sql`, ...).
    pub kind: String,
    /// `npm` or `pypi`.
    pub registry: String,
    pub package: String,
    pub version: String,
    /// The stores the audit declared, as `NAME=KIND`.
    pub stores: Vec<String>,
    /// How the store was made: the witness.toml's description, and whether
    /// the server's own tools wrote it.
    pub store: String,
    pub seed_calls: usize,
    /// Whether `truth/<id>.toml` was there: without it no lie is planted and
    /// no failure is judged.
    pub truth: bool,
    /// Why the server's audits did not run (install, seed, launch), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Of the honest audit.
    pub tools: usize,
    pub exercised: usize,
    pub annotated: usize,
    pub exit_code: i32,
    pub complete: bool,
    pub lies: Vec<FieldLie>,
    /// Every failing effect check of every audit of this server that is not
    /// a planted lie being caught, judged against the ground truth.
    pub failures: Vec<FieldFailure>,
}

/// One planted lie and what its audit made of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldLie {
    pub tool: String,
    /// `read-only`, `non-destructive` or `idempotent`.
    pub lie: String,
    pub caught: bool,
    /// The failing checks of the lied hint on the lying tool (EFF-01, EFF-02
    /// or EFF-06 for read-only, EFF-02 for non-destructive, EFF-03 for
    /// idempotent): what caught it.
    pub checks: Vec<String>,
    /// Whether the lie's audit called the tool successfully.
    pub exercised: bool,
    /// When not caught: the verdict and reason of the check that holds the
    /// tool to the lied hint, or why the tool was not exercised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_why: Option<String>,
    pub exit_code: i32,
}

/// A failing check no planted lie explains.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldFailure {
    /// `honest`, or the lie's variant (`TOOL=KIND`).
    pub variant: String,
    pub check: String,
    pub tool: String,
    /// `false` (the ground truth says the claim holds), `confirmed` (the
    /// ground truth says it does not) or `unjudged`.
    pub judged: String,
}

/// One row of the dataset: a server × tool × hint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldRow {
    pub server: String,
    pub tool: String,
    pub hint: String,
    /// As the server declared it, absent when it did not.
    pub declared: Option<bool>,
    /// What the ground truth says the hint's value is, absent without one.
    pub truth: Option<bool>,
    /// The honest audit's verdict of the check that holds the tool to this
    /// hint (`pass`, `fail`, `skip`, `untestable`), absent when it has none.
    pub honest: Option<String>,
    /// Its reason when the verdict is not pass or fail.
    pub why_untested: Option<String>,
    /// Whether a lie on this hint was planted on this tool.
    pub lie_planted: bool,
    /// Whether its audit caught it (absent when none was planted).
    pub caught: Option<bool>,
    /// Why the lie escaped, when it did.
    pub why_missed: Option<String>,
    /// When the hint is unset (`declared` absent): what `suggest` made of
    /// the honest audit, one of `suggested`, `silent`, `kept content`,
    /// `untestable`, `not exercised`, `no verdict`. Absent when the hint is
    /// declared.
    #[serde(default)]
    pub suggestion: Option<String>,
    /// The value suggested (always the less safe one), when `suggestion`
    /// is `suggested`.
    #[serde(default)]
    pub suggested: Option<bool>,
    /// What was observed (the calls and their effects) for a suggestion or
    /// kept content; the verdict and reason otherwise.
    #[serde(default)]
    pub suggestion_why: Option<String>,
}

/// The words of [`FieldRow::suggestion`].
pub const SUGGESTED: &str = "suggested";
pub const SILENT: &str = "silent";
pub const KEPT_CONTENT: &str = "kept content";
pub const UNTESTABLE: &str = "untestable";
pub const NOT_EXERCISED: &str = "not exercised";
pub const NO_VERDICT: &str = "no verdict";

/// The stem of an audit the study writes under `audits/`: `field-<id>` for
/// a server's honest audit, `field-<id>-<tool>-<lie>` for a planted lie
/// (`lie` as [`FieldLie::lie`] spells it). The study names its files and the
/// evaluation page its links by it.
pub fn audit_stem(id: &str, lie: Option<(&str, &str)>) -> String {
    match lie {
        None => format!("field-{id}"),
        Some((tool, kind)) => format!("field-{id}-{tool}-{kind}"),
    }
}
