//! The sweep documents: many servers audited by one `SWEEP.toml`.
//!
//! - [`TargetResult`] (`mcp-witness.sweep-target/v1`): one target's
//!   `targets/<key>/result.json` — its full definition, how its audit ended
//!   and where the audit is. The key is derived from the definition, so a
//!   result can be trusted to answer for exactly that definition.
//! - [`SweepRow`] (`mcp-witness.sweep-row/v1`): one line of `dataset.jsonl`
//!   and one row of `dataset.csv` — one target × tool × check.
//! - [`SweepDocument`] (`mcp-witness.sweep/v1`): `sweep.json`, the targets
//!   with their outcome, the prevalence tables and where the dataset is.
//!
//! Determinism: everything that differs from run to run by nature (elapsed
//! times, how many attempts a target took) lives under a field named
//! `volatile`; nothing else may differ between two runs of one sweep, whether
//! it ran with several jobs, as shards merged later, or resumed after a kill.

mod prevalence;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::{CheckId, ToolClass, Verdict};

pub use prevalence::{CheckPrevalence, HintPrevalence, Prevalence};

pub const SWEEP_SCHEMA: &str = "mcp-witness.sweep/v1";
pub const SWEEP_ROW_SCHEMA: &str = "mcp-witness.sweep-row/v1";
pub const SWEEP_TARGET_SCHEMA: &str = "mcp-witness.sweep-target/v1";

/// Where a target's server comes from.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    /// A package from the npm registry, installed with npm.
    Npm,
    /// A package from PyPI, installed with pip into a virtual environment.
    Pypi,
    /// A command that is already on the machine; nothing is installed.
    #[default]
    Command,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Npm => "npm",
            Ecosystem::Pypi => "pypi",
            Ecosystem::Command => "command",
        }
    }
}

/// A package at one exact version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Package {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
}

impl Package {
    /// The coordinate as a sweep file writes it: `npm:@scope/name@1.2.3`,
    /// `pypi:name==1.2.3`.
    pub fn coordinate(&self) -> String {
        match self.ecosystem {
            Ecosystem::Pypi => format!("pypi:{}=={}", self.name, self.version),
            _ => format!("{}:{}@{}", self.ecosystem.as_str(), self.name, self.version),
        }
    }
}

/// A file or directory a definition reads, named as the sweep file names it
/// (relative to the sweep file) and pinned by its content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pinned {
    pub path: String,
    /// `blake3:` and 64 hex digits over the content (a directory: every
    /// file's relative path and bytes, in path order).
    pub digest: String,
}

/// A store the target gets, created fresh for every audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoreDefinition {
    pub name: String,
    /// `sqlite`, `jsonl` or `fs`.
    pub kind: String,
    /// The store's file name inside the jail (files only; a fixture keeps
    /// its own name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What the store starts as; absent: it starts empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<Pinned>,
    /// Columns (`table.column`) the server fills from the clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_columns: Vec<String>,
}

/// How the audit itself is run: the options that can change what it finds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditSettings {
    /// `auto`, `modern` or `legacy`.
    #[schemars(with = "String")]
    pub era: crate::vocab::EraChoice,
    pub timeout_ms: u64,
    pub settle_ms: u64,
    pub include_destructive: bool,
    pub isolate_network: bool,
}

/// Everything that decides what a target's audit is. Its canonical JSON is
/// what the target's key is derived from: a changed plan, fixture, lock,
/// command, option or name is a new key, and so a new audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetDefinition {
    pub name: String,
    /// Absent for a command target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<Package>,
    /// The lock the install follows (npm: a directory with `package.json`
    /// and `package-lock.json`; pip: a requirements file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<Pinned>,
    /// The server command; `{install}` is the target's install directory,
    /// `{NAME}` a store's jailed path and `{jail}` the jail.
    pub command: Vec<String>,
    /// Variables for the server, placeholders as in the command.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<StoreDefinition>,
    /// The plan file; absent: the planner chooses the calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Pinned>,
    /// Kinds of clock value the server writes into its answers, written as
    /// `{clock}` in the audit (`js-date`, `sql-datetime`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_text: Vec<String>,
    pub audit: AuditSettings,
}

/// How a target's audit ended.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum TargetStatus {
    /// The audit concluded: its verdicts are rows.
    Audited,
    /// The audit ran and could not conclude (a server that never started,
    /// a lost transport, an incomplete catalog): the reason says which.
    Incomplete,
    /// The package could not be installed.
    InstallFailed,
    /// The audit did not finish within the sweep's time bound.
    TimedOut,
    /// The harness failed (no jail could be made, the worker died).
    // The default: nothing is known of a target until something says so.
    #[default]
    Error,
}

impl TargetStatus {
    pub const ALL: [TargetStatus; 5] = [
        TargetStatus::Audited,
        TargetStatus::Incomplete,
        TargetStatus::InstallFailed,
        TargetStatus::TimedOut,
        TargetStatus::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TargetStatus::Audited => "audited",
            TargetStatus::Incomplete => "incomplete",
            TargetStatus::InstallFailed => "install-failed",
            TargetStatus::TimedOut => "timed-out",
            TargetStatus::Error => "error",
        }
    }
}

impl std::fmt::Display for TargetStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Values of one target's result that differ from run to run by nature.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetVolatile {
    /// Attempts made so far (a target that did not conclude is retried up
    /// to the sweep's limit).
    pub attempts: u32,
    /// Wall time of the last attempt, install included.
    pub elapsed_ms: u64,
}

/// `targets/<key>/result.json`: one target's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetResult {
    /// Always `mcp-witness.sweep-target/v1`.
    pub schema: String,
    pub generator: String,
    pub key: String,
    pub definition: TargetDefinition,
    pub status: TargetStatus,
    /// Why the target did not conclude (absent when audited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The audit, relative to this file (`audit.json`), when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
    pub volatile: TargetVolatile,
}

/// One target × tool × check: a line of `dataset.jsonl`, a row of
/// `dataset.csv`. A target with no tool to report (it was never installed,
/// never started, timed out) has one row whose tool fields are empty.
// `Default` is that empty frame, which every row is built from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepRow {
    /// The target's name in the sweep file.
    pub target: String,
    pub key: String,
    pub ecosystem: Ecosystem,
    pub package: Option<String>,
    pub version: Option<String>,
    pub status: TargetStatus,
    /// Why the target did not conclude.
    pub reason: Option<String>,
    /// `file` (the target has a plan) or `planner`.
    pub plan: String,
    pub tool: Option<String>,
    pub class: Option<ToolClass>,
    /// The declared annotations (absent: not declared).
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    pub check: Option<CheckId>,
    pub verdict: Option<Verdict>,
    pub verdict_reason: Option<String>,
    /// Coverage of the tool: its calls and how many succeeded, from the
    /// ledger; whether it was exercised, whether the call that exercised it
    /// used real values only (literal, harvested or from a store: nothing
    /// invented), and when it was not exercised, why — the audit's own
    /// coverage (`coverage.by_tool`).
    pub calls: Option<usize>,
    pub calls_ok: Option<usize>,
    pub exercised: Option<bool>,
    pub on_real_values: Option<bool>,
    pub not_exercised: Option<String>,
    /// Effects charged to the tool's calls, in the declared stores and
    /// outside them.
    pub creates: Option<usize>,
    pub updates: Option<usize>,
    pub deletes: Option<usize>,
    pub outside_stores: Option<usize>,
    /// The audit and its evidence page, relative to the dataset.
    pub audit: Option<String>,
    pub report: Option<String>,
}

/// Counts of verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerdictCounts {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
}

/// One target in `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetSummary {
    pub key: String,
    pub name: String,
    pub ecosystem: Ecosystem,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<Package>,
    pub status: TargetStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The audit's exit code, when there is an audit (0 passed, 1 a check
    /// failed, 3 incomplete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub tools: usize,
    pub verdicts: VerdictCounts,
    /// `targets/<key>/audit.json` and its evidence page, when there is an audit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

/// Which slice of a sweep a run audited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShardEntry {
    /// From 0.
    pub index: u32,
    pub count: u32,
}

/// `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepDocument {
    /// Always `mcp-witness.sweep/v1`.
    pub schema: String,
    pub generator: String,
    pub name: String,
    /// `blake3:` over the sorted keys of every target of the sweep: shards
    /// of one sweep share it, and only they can be merged.
    pub digest: String,
    /// The slice this directory holds; absent for a whole sweep (run at
    /// once, or merged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardEntry>,
    /// Every target key of the sweep, sorted.
    pub keys: Vec<String>,
    /// Keys of the sweep (of this shard, for a shard) with no result here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The targets this directory holds, by name then key.
    pub targets: Vec<TargetSummary>,
    /// Targets by status.
    pub statuses: BTreeMap<TargetStatus, usize>,
    pub prevalence: Prevalence,
    /// The dataset files, relative to this document.
    pub dataset: DatasetFiles,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DatasetFiles {
    pub jsonl: String,
    pub csv: String,
    pub rows: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_written_as_sweep_files_write_them() {
        let npm = Package {
            ecosystem: Ecosystem::Npm,
            name: "@scope/name".into(),
            version: "1.2.3".into(),
        };
        assert_eq!(npm.coordinate(), "npm:@scope/name@1.2.3");
        let pypi = Package {
            ecosystem: Ecosystem::Pypi,
            name: "mcp-server-time".into(),
            version: "2026.10.19".into(),
        };
        assert_eq!(pypi.coordinate(), "pypi:mcp-server-time==2026.10.19");
    }

    #[test]
    fn statuses_serialize_to_their_names() {
        for status in TargetStatus::ALL {
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(serde_json::json!(status.as_str()))
            );
        }
    }
}
