//! The case-study document, `mcp-witness.case/v1`: one published server at
//! a pinned version, its declarations summarised, what was observed, the
//! verdicts, and notes generated from the observations.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{ToolEntry, Verdict};

pub const CASE_SCHEMA: &str = "mcp-witness.case/v1";

/// `mcp-witness.case/v1`. `Default` is the empty frame pages read a case
/// file of another shape into, field by field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseReport {
    pub schema: String,
    pub name: String,
    pub server: CaseServer,
    pub store: CaseStore,
    pub annotations: AnnotationSummary,
    pub observed: ObservedSummary,
    /// By check id: counts of verdicts and each tool's verdict.
    pub checks: BTreeMap<String, CheckSummary>,
    /// Whether the audit concluded; when not, why.
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    pub exit_code: i32,
    /// Sentences generated from what was observed.
    pub notes: Vec<String>,
    /// The full audit, relative to the output directory.
    pub audit: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseServer {
    pub package: String,
    pub version: String,
    pub bin: String,
    pub publisher: String,
    /// The package's own description, from its installed package.json.
    pub description: String,
    /// What the server says it is (`serverInfo`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseStore {
    /// `jsonl`, `fs` or `sqlite`.
    pub kind: String,
    /// The observer that read it, and its object ids.
    pub observer: String,
    /// How the server was told where it is.
    pub how: String,
    /// What it held before the server started.
    pub initial: String,
}

/// The server's own declarations, counted over its tools.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AnnotationSummary {
    pub tools: usize,
    /// Tools that declare at least one hint.
    pub declared: usize,
    pub read_only: usize,
    pub destructive: usize,
    pub idempotent: usize,
}

impl AnnotationSummary {
    /// The declarations of a catalog, counted.
    pub fn of(tools: &[ToolEntry]) -> Self {
        let count = |hint: fn(&ToolEntry) -> Option<bool>| {
            tools.iter().filter(|t| hint(t) == Some(true)).count()
        };
        Self {
            tools: tools.len(),
            declared: tools.iter().filter(|t| t.hints.declares_anything()).count(),
            read_only: count(|t| t.hints.read_only),
            destructive: count(|t| t.hints.destructive),
            idempotent: count(|t| t.hints.idempotent),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ObservedSummary {
    /// tools/call requests made, identical repeats included.
    pub calls: usize,
    /// Per-object changes in the declared store, over every call.
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
    /// Changes elsewhere in the jail (HOME, TMPDIR, working directory).
    pub outside_stores: usize,
    /// Changes while the server started, before any call.
    pub at_startup: usize,
    /// Changes that appeared between calls, charged to no call (absent when
    /// there were none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late: usize,
    /// Per tool: calls and the changes they made.
    pub by_tool: BTreeMap<String, ToolObserved>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolObserved {
    pub calls: usize,
    pub failed: usize,
    pub creates: usize,
    pub updates: usize,
    pub deletes: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckSummary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
    /// Tool name → verdict.
    pub tools: BTreeMap<String, Verdict>,
}
