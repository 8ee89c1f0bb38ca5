//! The audit record: the ledger of one execution and the report built on it.
//!
//! Everything a check, a detector or a page says about an audit is read from
//! these types. They serialize to the versioned document
//! `mcp-witness.audit/v1`; `mcp-witness schema audit` prints its JSON Schema.
//!
//! Determinism: field order is declaration order, lists are in execution or
//! id order, and the only wall-clock values live under `volatile`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

// `CallStatus` and `Provenance` live with the other words in `vocab`; they
// are re-exported so `audit::CallStatus` keeps naming the same type.
pub use crate::vocab::{
    CallStatus, CheckId, FindingKind, Hint, IsolationLevel, Op, ProbeStatus, Provenance, ToolClass,
    Verdict,
};

pub const AUDIT_SCHEMA: &str = "mcp-witness.audit/v1";

/// The store name under which the jail-wide observer reports: changes in the
/// jail's HOME, TMPDIR and working directory, outside every declared store.
/// `--store` refuses this name so it can never be mistaken for a declared one.
pub const JAIL_STORE: &str = "jail";

/// Where a harvested value was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Origin {
    /// The plan step whose result held the value (`call 2`): a
    /// [`CallRecord::step`], not a call id.
    pub call: String,
    /// The path inside that result (`json.id`).
    pub path: String,
}

impl Origin {
    /// The step `call` names (`call 2` → 2), if it names one. The word is
    /// `call` because plan files number their `[[call]]` entries that way.
    pub fn step(&self) -> Option<u32> {
        self.call.trim().strip_prefix("call")?.trim().parse().ok()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Argument {
    pub name: String,
    pub value: Value,
    pub source: Provenance,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Origin>,
    /// For a structured argument: the values inside it that were harvested,
    /// by their place in the argument (`[0].entityName`). The argument counts
    /// as `harvested` only when nothing inside it was invented.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ArgumentPart>,
}

/// One harvested value inside a structured argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ArgumentPart {
    /// Where inside the argument (`[0].entityName`).
    pub at: String,
    pub from: Origin,
}

/// One observed change to one object of one store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Effect {
    pub store: String,
    pub object: String,
    pub op: Op,
    /// For updates: whether existing content changed or vanished (destructive)
    /// rather than only new fields appearing. For deletes: `false` only when
    /// the store still keeps the content elsewhere (a git worktree file whose
    /// content the object database holds), so the delete destroys nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl Effect {
    /// Deletes and overwrites: what `destructiveHint` speaks about. A delete
    /// whose content the store still keeps is neither.
    pub fn is_destructive(&self) -> bool {
        match self.op {
            Op::Delete => self.overwrite != Some(false),
            Op::Update => self.overwrite.unwrap_or(true),
            Op::Create => false,
        }
    }

    /// `db:notes/welcome`, for evidence lists.
    pub fn qualified(&self) -> String {
        format!("{}:{}", self.store, self.object)
    }

    /// Seen by the jail-wide observer: outside every declared store.
    pub fn outside_stores(&self) -> bool {
        self.store == JAIL_STORE
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A probe's answer about one object a call created or touched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRecord {
    pub store: String,
    pub object: String,
    pub status: ProbeStatus,
    pub basis: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_digest: Option<String>,
}

/// One tools/call as it was executed and observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallRecord {
    /// Execution order, from 1.
    pub id: u32,
    /// The plan step this call carries out (`call N` in a plan refers to it).
    pub step: u32,
    pub tool: String,
    /// Set on the identical repeat made to test an idempotence claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_of: Option<u32>,
    pub arguments: Vec<Argument>,
    pub outcome: Outcome,
    /// The result as served, with secrets replaced by digests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// First and last transcript frame of this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<[u64; 2]>,
    /// Changes between the snapshot just before and just after the call.
    pub effects: Vec<Effect>,
    /// Changes that appeared after this call's post-snapshot and before the
    /// next call's pre-snapshot: unattributed, charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_effects: Vec<Effect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeRecord>,
    /// Out-of-band events the experiment applied after this call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_after: Vec<String>,
    /// What those events changed: made by the experiment, charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_effects: Vec<Effect>,
}

impl CallRecord {
    pub fn succeeded(&self) -> bool {
        self.outcome.status == CallStatus::Ok
    }

    pub fn used_synthesized(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.source == Provenance::Synthesized)
    }

    /// Whether any argument (or part of one) came from the server's own answers.
    pub fn used_harvested(&self) -> bool {
        self.arguments
            .iter()
            .any(|a| a.source == Provenance::Harvested || !a.parts.is_empty())
    }
}

/// Declared annotations, as typed booleans (`None`: not declared, or not a boolean).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl Hints {
    pub fn from_annotations(annotations: Option<&Value>) -> Self {
        Self {
            read_only: Hint::ReadOnly.declared(annotations),
            destructive: Hint::Destructive.declared(annotations),
            idempotent: Hint::Idempotent.declared(annotations),
            open_world: Hint::OpenWorld.declared(annotations),
        }
    }

    pub fn declares_anything(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }

    /// Safety class from annotations only; a name never changes it.
    pub fn class(&self) -> ToolClass {
        if self.read_only == Some(true) {
            ToolClass::ReadOnly
        } else if !self.declares_anything() {
            ToolClass::Unknown
        } else if self.destructive == Some(false) {
            ToolClass::Additive
        } else {
            // destructiveHint true, or unset with readOnlyHint false: an
            // unset destructiveHint means true (Hint::default_value).
            ToolClass::Destructive
        }
    }
}

/// A tool as served, with what mcp-witness reads from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `annotations` exactly as served (absent when the server sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    pub hints: Hints,
    pub class: ToolClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    pub has_output_schema: bool,
}

/// What a verdict rests on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// Call ids (execution order) the verdict read.
    pub calls: Vec<u32>,
    /// The observed effects that decided it (store:object op).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<EvidenceEffect>,
    /// Probe basis lines, when a probe decided it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceEffect {
    pub call: u32,
    pub object: String,
    pub op: Op,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    pub id: CheckId,
    pub tool: String,
    pub verdict: Verdict,
    /// One sentence a person can check against the evidence.
    pub reason: String,
    pub evidence: Evidence,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoreEntry {
    pub name: String,
    pub kind: String,
    /// The path as the user gave it (the jailed copy's path is volatile).
    pub path: String,
    /// Whether it existed and was copied in, or started empty.
    pub existed: bool,
    pub observer: String,
    /// Columns (`table.column`) declared as filled by the server from the
    /// clock. The observer digests a clock value there as one stand-in, so
    /// these digests do not depend on when the audit ran; a change from one
    /// clock value to another in them is not seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_columns: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The command as given, placeholders unexpanded (empty for `--url`).
    pub command: Vec<String>,
    /// Names of the `--env` variables passed (values may be secrets: not kept).
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_version: Option<String>,
    /// `http` when the server was audited behind a Streamable HTTP endpoint
    /// (absent for a launched stdio server). The endpoint itself is not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EraEntry {
    /// What was asked for: auto, modern or legacy.
    pub requested: String,
    /// `modern` or `legacy`, when a session was established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// How `server/discover` went, when it was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    pub instructions_present: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IsolationEntry {
    pub level: IsolationLevel,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogEntry {
    pub complete: bool,
    pub pages: u32,
    pub tools: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Something observed that is worth a reader's attention but is not a check verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub kind: FindingKind,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameEntry {
    pub seq: u64,
    /// `out` (to the server) or `in` (from it).
    pub dir: String,
    pub t_us: u64,
    /// The line, secrets replaced by digests.
    pub text: String,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One server process's wire record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessTranscript {
    /// `discover` (a process used only for era detection) or `session`.
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    pub frames: Vec<FrameEntry>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_frames: u64,
    pub stderr_bytes: u64,
    /// The first bytes of stderr (bounded, secrets replaced by digests).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
    pub calls: usize,
    /// Observed in the declared stores, over every call.
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
    /// Observed in the jail outside the declared stores (HOME, TMPDIR, the
    /// working directory), over every call.
    #[serde(default)]
    pub outside_stores: usize,
}

impl Summary {
    /// The summary an audit's calls and verdicts add up to: every call
    /// counted, every verdict, and every effect charged to a call (late,
    /// startup, shutdown and event effects are charged to none).
    pub fn of(calls: &[CallRecord], checks: &[CheckResult]) -> Self {
        let verdicts = VerdictTally::of(checks.iter().map(|c| c.verdict));
        let effects = EffectTally::of(calls.iter().flat_map(|c| &c.effects));
        Self {
            pass: verdicts.pass,
            fail: verdicts.fail,
            skip: verdicts.skip,
            untestable: verdicts.untestable,
            calls: calls.len(),
            creates: effects.creates,
            updates: effects.updates,
            deletes: effects.deletes,
            outside_stores: effects.outside_stores,
        }
    }
}

/// Effects counted the one way every summary counts them: creates, updates
/// and deletes in the declared stores, and apart from them whatever the
/// jail-wide observer saw outside every store (whatever its op).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EffectTally {
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
    pub outside_stores: usize,
}

impl EffectTally {
    pub fn of<'a>(effects: impl IntoIterator<Item = &'a Effect>) -> Self {
        let mut tally = Self::default();
        for effect in effects {
            let count = if effect.outside_stores() {
                &mut tally.outside_stores
            } else {
                match effect.op {
                    Op::Create => &mut tally.creates,
                    Op::Update => &mut tally.updates,
                    Op::Delete => &mut tally.deletes,
                }
            };
            *count += 1;
        }
        tally
    }
}

/// Verdicts counted by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerdictTally {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
}

impl VerdictTally {
    pub fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Self {
        let mut tally = Self::default();
        for verdict in verdicts {
            *tally.count_mut(verdict) += 1;
        }
        tally
    }

    pub fn get(&self, verdict: Verdict) -> usize {
        match verdict {
            Verdict::Pass => self.pass,
            Verdict::Fail => self.fail,
            Verdict::Skip => self.skip,
            Verdict::Untestable => self.untestable,
        }
    }

    fn count_mut(&mut self, verdict: Verdict) -> &mut usize {
        match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::Fail => &mut self.fail,
            Verdict::Skip => &mut self.skip,
            Verdict::Untestable => &mut self.untestable,
        }
    }
}

/// A tool the planner left out, and why; its checks are `skip` with this reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedTool {
    pub tool: String,
    pub reason: String,
}

/// How the calls were chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannerEntry {
    /// `file` (a `--plan`) or `synthesized` (the planner).
    pub origin: String,
    /// Call ids made in the harvest pass (read-only tools, before anything else).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub harvest_calls: Vec<u32>,
    /// Whether destructive and unknown tools were allowed outside a
    /// network-isolated jail (`--include-destructive`).
    pub include_destructive: bool,
    /// Tools left out of the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedTool>,
}

/// What the jail-wide observer watched (EFF-05).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JailScope {
    /// The observer kind (`fs`).
    pub observer: String,
    /// Directories of the jail it watched, relative to the jail.
    pub watched: Vec<String>,
    /// Directories it left to the declared stores' own observers.
    pub excluded: Vec<String>,
}

/// Values that differ from run to run by nature; nothing else may.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Volatile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// Values the server took from the clock and wrote into what it answered
    /// (file times, row timestamps). They were replaced in this document by a
    /// token, so that a rerun writes the same bytes; the values themselves are
    /// not kept. Each entry says what kind of value was replaced and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock: Vec<ClockReplaced>,
}

/// Server clock values of one kind, replaced by a token.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClockReplaced {
    /// What kind of value (`JavaScript Date string`).
    pub kind: String,
    /// What stands in each value's place (`{clock}`).
    pub token: String,
    /// How many values were replaced.
    pub count: usize,
    /// JSON pointers of the strings that held them, in document order. A
    /// replaced frame keeps its `bytes`, the size that crossed the wire.
    pub at: Vec<String>,
}

/// The whole audit document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditReport {
    /// Always `mcp-witness.audit/v1`.
    pub schema: String,
    pub generator: String,
    pub target: Target,
    pub era: EraEntry,
    pub isolation: IsolationEntry,
    pub stores: Vec<StoreEntry>,
    /// The jail-wide observer beside the declared stores.
    #[serde(default)]
    pub jail_scope: JailScope,
    pub probe: String,
    /// False when the audit could not conclude (lost transport, incomplete catalog).
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    pub catalog: CatalogEntry,
    pub tools: Vec<ToolEntry>,
    #[serde(default)]
    pub planner: PlannerEntry,
    /// Changes made while the server started, before any call.
    pub startup_effects: Vec<Effect>,
    /// Probes of the objects already in the stores when the session began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_probes: Vec<ProbeRecord>,
    pub calls: Vec<CallRecord>,
    /// Changes that appeared while the server shut down.
    pub shutdown_effects: Vec<Effect>,
    pub checks: Vec<CheckResult>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// 0 passed, 1 a check failed, 3 incomplete.
    pub exit_code: i32,
    pub transcripts: Vec<ProcessTranscript>,
    pub volatile: Volatile,
}

impl AuditReport {
    pub fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn check(&self, id: CheckId, tool: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == id && c.tool == tool)
    }

    /// The call that carried out plan step `step` (its first call: an
    /// idempotence repeat shares the step, and a harvested value is read
    /// from the first call's result).
    pub fn call_for_step(&self, step: u32) -> Option<&CallRecord> {
        self.calls.iter().find(|c| c.step == step)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::case::{CaseReport, ToolObserved};

    fn results() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/results")
    }

    fn read<T: serde::de::DeserializeOwned>(path: &Path) -> T {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The tallies must count exactly as the engine and the lab counted the
    /// committed results, so either can switch to them without changing a
    /// byte of what they write.
    #[test]
    fn the_tallies_reproduce_every_committed_summary() {
        let mut audits: Vec<PathBuf> = std::fs::read_dir(results().join("audits"))
            .expect("experiments/results/audits")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        audits.sort();
        assert!(audits.len() > 10, "{audits:?}");
        for path in &audits {
            let report: AuditReport = read(path);
            assert_eq!(
                Summary::of(&report.calls, &report.checks),
                report.summary,
                "{}",
                path.display()
            );
        }
        for name in ["case-filesystem", "case-memory", "case-sqlite"] {
            let case: CaseReport = read(&results().join(format!("{name}.json")));
            let report: AuditReport = read(&results().join(&case.audit));
            let mut by_tool: BTreeMap<String, EffectTally> = BTreeMap::new();
            for call in &report.calls {
                let tally = EffectTally::of(&call.effects);
                let entry = by_tool.entry(call.tool.clone()).or_default();
                entry.creates += tally.creates;
                entry.updates += tally.updates;
                entry.deletes += tally.deletes;
            }
            for (tool, observed) in &case.observed.by_tool {
                let tally = by_tool.get(tool).copied().unwrap_or_default();
                let counted = ToolObserved {
                    creates: tally.creates,
                    updates: tally.updates,
                    deletes: tally.deletes,
                    ..observed.clone()
                };
                assert_eq!(&counted, observed, "{name}: {tool}");
            }
            for (id, summary) in &case.checks {
                let tally = VerdictTally::of(summary.tools.values().copied());
                assert_eq!(
                    [tally.pass, tally.fail, tally.skip, tally.untestable],
                    [summary.pass, summary.fail, summary.skip, summary.untestable],
                    "{name}: {id}"
                );
            }
        }
    }

    #[test]
    fn effects_outside_the_stores_are_counted_apart_whatever_their_op() {
        let effect = |store: &str, op| Effect {
            store: store.into(),
            object: "x".into(),
            op,
            overwrite: None,
            before: None,
            after: None,
        };
        let effects = [
            effect("db", Op::Create),
            effect("db", Op::Create),
            effect("db", Op::Update),
            effect(JAIL_STORE, Op::Delete),
            effect(JAIL_STORE, Op::Create),
        ];
        assert_eq!(
            EffectTally::of(&effects),
            EffectTally {
                creates: 2,
                updates: 1,
                deletes: 0,
                outside_stores: 2
            }
        );
        let verdicts = VerdictTally::of([Verdict::Fail, Verdict::Pass, Verdict::Fail]);
        assert_eq!(verdicts.get(Verdict::Fail), 2);
        assert_eq!(verdicts.get(Verdict::Skip), 0);
    }
}
