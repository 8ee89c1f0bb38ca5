//! The wild experiment's document, `mcp-witness.wild/v1`: published
//! local-state servers the project had never studied, audited with no plan
//! file, honest and with annotation lies planted by a relay that rewrites
//! their `tools/list` answer.
//!
//! Every number is read from the audits behind it. Which tool lies, and
//! how, is written by hand in the lab's table; so is nothing else. The
//! document holds no times, paths or server text, so a rerun writes it byte
//! for byte when the servers behave the same.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const WILD_SCHEMA: &str = "mcp-witness.wild/v1";

/// `mcp-witness.wild/v1`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildDocument {
    pub schema: String,
    pub generator: String,
    /// Always `none`: the planner chose every call.
    pub plan: String,
    pub timeout_ms: u64,
    pub settle_ms: u64,
    pub servers: Vec<WildServer>,
    /// Over every server.
    pub totals: WildTotals,
}

/// The sums the targets are read from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildTotals {
    pub servers: usize,
    pub tools: usize,
    pub exercised: usize,
    /// Servers with at least 90% of their tools exercised.
    pub servers_at_90_percent: usize,
    pub lies_planted: usize,
    pub lies_caught: usize,
    pub false_failures: usize,
}

/// One server: its honest audit and one audit per planted lie.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildServer {
    pub name: String,
    pub package: String,
    pub version: String,
    /// `npm` or `pip`.
    pub installer: String,
    /// The store the experiment made for it, in words.
    pub store: String,
    /// Its kind (`fs`, `sqlite`).
    pub store_kind: String,
    /// Of the honest audit.
    pub tools: usize,
    pub exercised: usize,
    /// Of the listed tools, rounded down.
    pub percent: usize,
    /// Every tool the honest audit left, and why (the audit's own words).
    pub not_exercised: Vec<WildToolLeft>,
    /// The honest audit's exit code.
    pub exit_code: i32,
    pub concluded: bool,
    /// Every failing effect check of every audit of this server that is not
    /// a planted lie being caught.
    pub false_failures: Vec<WildFailure>,
    pub lies: Vec<WildLie>,
}

/// A tool the honest audit never called successfully.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildToolLeft {
    pub tool: String,
    pub why: String,
}

/// A failing check that no planted lie explains.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildFailure {
    /// `honest`, or the lie's variant (`<tool>=read-only`).
    pub variant: String,
    pub check: String,
    pub tool: String,
}

/// One planted lie and whether its audit caught it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WildLie {
    pub tool: String,
    /// `read-only` (a creator claims `readOnlyHint: true`) or
    /// `non-destructive` (a deleter or overwriter claims
    /// `destructiveHint: false`).
    pub lie: String,
    /// A failing check on the lying tool.
    pub caught: bool,
    /// The checks that failed on it (`EFF-01`, `EFF-02`).
    pub checks: Vec<String>,
    /// Whether the lying tool was exercised in that audit.
    pub exercised: bool,
    pub exit_code: i32,
}
