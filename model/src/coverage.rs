//! The coverage experiment's document, `mcp-witness.coverage/v1`: published
//! servers audited with no plan file, each on a small store of its own kind,
//! and how much of each the planner exercised.
//!
//! Every number is read from the audits behind it (`audits/coverage-*.json`);
//! a target and which failures are the servers' real behaviour are the only
//! things written by hand, in the lab's table, and both are shown as such.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::audit::ToolCoverage;

pub const COVERAGE_SCHEMA: &str = "mcp-witness.coverage/v1";

/// `mcp-witness.coverage/v1`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageDocument {
    pub schema: String,
    pub generator: String,
    /// How every audit ran: the same options for every server.
    pub method: CoverageMethod,
    pub servers: Vec<ServerCoverage>,
}

/// The options every audit of the experiment shared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageMethod {
    /// Always `none`: the planner chose every call.
    pub plan: String,
    pub timeout_ms: u64,
    pub settle_ms: u64,
    /// Destructive and unknown tools were called (the jail is a copy).
    pub include_destructive: bool,
}

/// One server's audit, summed up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerCoverage {
    /// `filesystem`, `memory`, ...: names the audit file.
    pub name: String,
    pub package: String,
    pub version: String,
    /// `npm` or `pip`: where the pinned package comes from.
    pub installer: String,
    /// The store the experiment made for it, in words (`none` when the
    /// server keeps no state where an observer can read it).
    pub store: String,
    /// The store's kind (`fs`, `jsonl`, `sqlite`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_kind: Option<String>,
    pub tools: usize,
    pub exercised: usize,
    /// Of the listed tools, rounded down.
    pub percent: usize,
    /// The target, as the issue set it (`>= 12/14`, `>= 80%`).
    pub target: String,
    /// The least number of tools exercised that meets it.
    pub target_exercised: usize,
    pub met: bool,
    /// Of the exercised tools, those whose successful call used no
    /// invented value.
    pub on_real_values: usize,
    /// By kind of value (`store`, `harvested`, `synthesized`, `literal`):
    /// how many exercised tools used at least one such value.
    pub values: BTreeMap<String, usize>,
    /// Every tool not exercised, with why.
    pub not_exercised: Vec<ToolCoverage>,
    /// Every failing effect check, with whether the experiment's table
    /// explains it as the server's real behaviour.
    pub failures: Vec<CoverageFailure>,
    /// Failing effect checks nobody explained: false failures until shown
    /// otherwise.
    pub false_failures: usize,
    /// Calls that failed on values that exist (`harvested-value-rejected`,
    /// `store-value-rejected`): evidence by the audit's rule, so each is
    /// either the server's defect or the planner's mistake.
    pub value_rejections: usize,
    pub calls: usize,
    pub restarts: usize,
    /// The audit's own end: 0, 1 or 3 (3 when it concluded nothing).
    pub exit_code: i32,
    pub concluded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_concluded: Option<String>,
    /// The full audit, relative to the output directory.
    pub audit: String,
}

/// One failing effect check.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageFailure {
    /// `EFF-02`.
    pub check: String,
    pub tool: String,
    /// The audit's own sentence.
    pub reason: String,
    /// Why it is the server's real behaviour, and where `docs/` shows it;
    /// absent for a false failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<String>,
}
