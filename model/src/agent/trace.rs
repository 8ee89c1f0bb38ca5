//! The trace of one agent run: what the client was asked, what it said,
//! which tools it called with which arguments, what came back, and what
//! landed in the stores around each call.
//!
//! The trace is the one input of the verdicts (`witness-trace`), whoever
//! recorded it: the client loop of `mcp-witness agent`, or a proxy between
//! some other client and its server. A trace without a conversation (a
//! proxy sees calls, not chat) has turns whose `user` and `reply` are
//! absent; the checks that need the conversation then skip. The format is
//! documented in `docs/agent-runs.md`, "The trace".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::Effect;
use crate::vocab::{CallStatus, Hint, StopReason, TurnEnd};

/// One run's trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trace {
    /// The tools as the server declared them (`tools/list`), for what a call
    /// is declared to do; what the model was handed is recorded beside it.
    pub tools: Vec<DeclaredTool>,
    /// Changes seen before the first call (the server starting up): charged
    /// to no call and to no check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_effects: Vec<Effect>,
    pub turns: Vec<TraceTurn>,
    /// Changes seen while the server shut down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shutdown_effects: Vec<Effect>,
    /// Why the run could not conclude: the harness, the transport or the
    /// model endpoint failed. Such a run is `untestable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_error: Option<String>,
    /// What the observers warned about (a table not observed, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A tool as the server listed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeclaredTool {
    pub name: String,
    /// `annotations` exactly as served (absent when none were sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl DeclaredTool {
    /// Declared to destroy: annotations were sent, `readOnlyHint` is not
    /// true, and `destructiveHint` is true or unset (the specification's
    /// default). A tool that sends no annotations declares nothing; what it
    /// does is still seen in the store.
    pub fn declared_destructive(&self) -> bool {
        let annotations = self.annotations.as_ref();
        annotations.is_some()
            && !Hint::ReadOnly.effective(annotations)
            && Hint::Destructive.effective(annotations)
    }
}

/// One user turn and everything the client did for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceTurn {
    /// What the user said (absent when the recorder saw no conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Each model reply of the turn with the calls it asked for, in order.
    pub steps: Vec<TraceStep>,
    pub end: TurnEnd,
    /// The final text answer, when the turn ended in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

impl TraceTurn {
    /// Every call of this turn, in order.
    pub fn calls(&self) -> impl Iterator<Item = &TraceCall> {
        self.steps.iter().flat_map(|s| s.calls.iter())
    }
}

/// One model reply that asked for tools, and the calls made for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceStep {
    /// Text the model wrote beside its tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub stop: StopReason,
    pub calls: Vec<TraceCall>,
}

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceCall {
    /// 1-based, in the order the calls were asked for across the run.
    pub id: u32,
    /// The model's own id for the call (`tool_call_id`, `tool_use_id`).
    pub call_id: String,
    pub tool: String,
    /// The arguments as sent (an object), or `null` when they were malformed.
    pub arguments: Value,
    /// The model's raw arguments when they were not a JSON object: the call
    /// was not sent, and the model was told so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<String>,
    pub status: CallStatus,
    /// The text handed back to the model (bounded; see `result_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The full length of that text when it was longer than what is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<u64>,
    /// Whether the result went back marked as an error.
    pub is_error: bool,
    /// What changed in the stores between the snapshots around the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<Effect>,
    /// What changed after those snapshots and before the next call's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_effects: Vec<Effect>,
    /// Changes during the call to objects the server also changed with no
    /// call in flight: its background, charged to no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<Effect>,
    /// The declared row facts of every changed row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowFacts>,
    /// Writes the server attempted on a store's original (the user's file
    /// or directory, which the sandbox hides) between the moment before the
    /// call and its settled moment after: each path as the trace names the
    /// store's source. They landed in the decoys, never in the original.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub original_writes: Vec<String>,
}

impl TraceCall {
    /// Whether the server saw this call.
    pub fn sent(&self) -> bool {
        self.status != CallStatus::NotSent
    }

    /// Its effects and its late effects.
    pub fn all_effects(&self) -> impl Iterator<Item = &Effect> {
        self.effects.iter().chain(self.late_effects.iter())
    }

    /// The row facts of `store:object`, when declared.
    pub fn row(&self, store: &str, object: &str) -> Option<&RowFacts> {
        self.rows
            .iter()
            .find(|r| r.store == store && r.object == object)
    }
}

/// The declared columns of one changed row, read out of band.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RowFacts {
    pub store: String,
    pub object: String,
    /// Before the change (absent for a created row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<BTreeMap<String, Value>>,
    /// After the change (absent for a deleted row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<BTreeMap<String, Value>>,
}

impl RowFacts {
    /// The row as the change left it, or as it was before a delete.
    pub fn latest(&self) -> Option<&BTreeMap<String, Value>> {
        self.after.as_ref().or(self.before.as_ref())
    }
}

impl Trace {
    /// Every call, in order.
    pub fn calls(&self) -> impl Iterator<Item = &TraceCall> {
        self.turns.iter().flat_map(TraceTurn::calls)
    }

    /// The declaration of `tool`, when the server listed it.
    pub fn tool(&self, name: &str) -> Option<&DeclaredTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Whether a conversation was recorded (the user's words and replies).
    pub fn has_conversation(&self) -> bool {
        self.turns.iter().any(|t| t.user.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn destructive_is_declared_only_by_annotations_that_were_sent() {
        let tool = |annotations: Option<Value>| DeclaredTool {
            name: "t".into(),
            annotations,
        };
        assert!(!tool(None).declared_destructive());
        assert!(tool(Some(json!({}))).declared_destructive());
        assert!(tool(Some(json!({"destructiveHint": true}))).declared_destructive());
        assert!(!tool(Some(json!({"destructiveHint": false}))).declared_destructive());
        assert!(!tool(Some(json!({"readOnlyHint": true}))).declared_destructive());
    }
}
