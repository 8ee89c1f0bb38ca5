//! The plan a server would get, as the `mcp-witness.plan/v1` document.

use serde_json::Value;
use witness_model::audit::{SkippedTool, ToolEntry};
use witness_model::plan::*;
use witness_model::vocab::IsolationLevel;

use super::{ArgSpec, Plan, PlanStep};

/// The preview of `plan` for a server with these tools.
#[allow(clippy::too_many_arguments)]
pub fn preview(
    command: Vec<String>,
    isolation: IsolationLevel,
    include_destructive: bool,
    tools: &[ToolEntry],
    plan: &Plan,
    skipped: Vec<SkippedTool>,
) -> PlanPreview {
    let step = |s: &PlanStep| StepPreview {
        tool: s.tool.clone(),
        args: s
            .args
            .iter()
            .map(|(name, spec)| {
                let (source, value) = match spec {
                    ArgSpec::Auto(v) => (PlannedSource::HarvestedElseSynthesized, v.clone()),
                    ArgSpec::Pinned(v) => (PlannedSource::Schema, v.clone()),
                    ArgSpec::Synthesized(v) => (PlannedSource::Synthesized, v.clone()),
                    ArgSpec::Fresh(v) => (PlannedSource::Fresh, v.clone()),
                    ArgSpec::Sql(kind) => (
                        PlannedSource::Statement,
                        Value::String(kind.keyword().to_owned()),
                    ),
                    ArgSpec::Literal(v) => (PlannedSource::Literal, v.clone()),
                    ArgSpec::IfReal(v) => (PlannedSource::HarvestedElseSynthesized, v.clone()),
                    ArgSpec::Chosen(h) => {
                        (PlannedSource::HarvestedElseSynthesized, h.value.clone())
                    }
                    ArgSpec::From { step, path } => (
                        PlannedSource::Reference,
                        Value::String(format!("call {step} at {path}")),
                    ),
                };
                ArgPreview {
                    name: name.clone(),
                    source,
                    value,
                }
            })
            .collect(),
    };
    let harvest = plan.steps[..plan.harvest].iter().map(step).collect();
    let calls = plan.steps[plan.harvest..].iter().map(step).collect();
    PlanPreview {
        schema: PLAN_SCHEMA.to_owned(),
        command,
        transport: None,
        isolation,
        include_destructive,
        tools: tools
            .iter()
            .map(|t| ToolPreview {
                name: t.name.clone(),
                class: t.class,
                hints: t.hints.clone(),
            })
            .collect(),
        harvest,
        calls,
        retry_before: plan.retry_at.map(|r| r.saturating_sub(plan.harvest)),
        skipped,
    }
}
