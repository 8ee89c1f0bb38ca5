//! The plan document, `mcp-witness.plan/v1`: what `mcp-witness plan` prints,
//! the planner's choices for one server before any tool was called.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{Hints, SkippedTool, ToolClass};
use crate::vocab::IsolationLevel;

pub const PLAN_SCHEMA: &str = "mcp-witness.plan/v1";

/// Where a planned argument's value will come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlannedSource {
    /// A real value when one fits — from an earlier answer, from the plan's
    /// own earlier call, or from a declared store — else the value shown.
    HarvestedElseSynthesized,
    /// Offered by the schema (`const`, an `enum`, `default`, `examples`, a
    /// value quoted in the description).
    Schema,
    /// Invented from the input schema.
    Synthesized,
    /// An invented name for what the tool makes (a path under the first
    /// directory store when it is a path); later calls that refer to such
    /// a thing use it once the call succeeded.
    Fresh,
    /// A SQL statement of the kind shown, written at call time on a table
    /// that exists (the plan's own when there is one, else the store's).
    Statement,
    /// Written in a plan file.
    Literal,
    /// A plan file's reference to an earlier call's result.
    Reference,
}

impl PlannedSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PlannedSource::HarvestedElseSynthesized => "harvested-else-synthesized",
            PlannedSource::Schema => "schema",
            PlannedSource::Synthesized => "synthesized",
            PlannedSource::Fresh => "fresh",
            PlannedSource::Statement => "statement",
            PlannedSource::Literal => "literal",
            PlannedSource::Reference => "reference",
        }
    }
}

/// What `mcp-witness plan` prints: the planner's choices for one server,
/// before anything but `tools/list` was sent to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanPreview {
    /// Always `mcp-witness.plan/v1`.
    pub schema: String,
    /// The launched command; empty for a server reached over `transport`.
    pub command: Vec<String>,
    /// `http` for a server already running behind a Streamable HTTP
    /// endpoint (not jailed, not launched); absent for a launched one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Decides whether destructive and unknown tools may be called.
    pub isolation: IsolationLevel,
    pub include_destructive: bool,
    /// Every tool with its class, from annotations alone.
    pub tools: Vec<ToolPreview>,
    /// Read-only tools in harvest order; each runs once its required
    /// arguments can be filled without inventing anything.
    pub harvest: Vec<StepPreview>,
    /// Then every tool, in this order. A tool also in `harvest` runs here
    /// only if the harvest pass did not call it (which depends on the
    /// server's answers, so the plan cannot say).
    pub calls: Vec<StepPreview>,
    /// Index in `calls` before which tools that failed on invented values
    /// are retried with harvested ones (after a second harvest pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_before: Option<usize>,
    pub skipped: Vec<SkippedTool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolPreview {
    pub name: String,
    pub class: ToolClass,
    pub hints: Hints,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepPreview {
    pub tool: String,
    pub args: Vec<ArgPreview>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArgPreview {
    pub name: String,
    pub source: PlannedSource,
    /// The value sent when nothing harvested fits.
    pub value: Value,
}
