//! The plan document as text for a terminal.

use std::fmt::Write as _;

use witness_model::plan::{PlanPreview, StepPreview};
use witness_text::clip;

/// The plan for a terminal.
pub fn text(plan: &PlanPreview) -> String {
    let mut out = String::new();
    let target = match plan.transport.as_deref() {
        Some(transport) if plan.command.is_empty() => {
            format!("a server behind a Streamable HTTP endpoint ({transport}, not jailed)")
        }
        _ => clip(&plan.command.join(" "), 120),
    };
    let _ = writeln!(out, "plan for: {target}");
    let _ = writeln!(out, "isolation: {}", plan.isolation.as_str());
    if !plan.isolation.contains_effects() {
        let _ = writeln!(
            out,
            "NOT CONTAINED: destructive and unknown tools are left out unless --include-destructive"
        );
    }
    let _ = writeln!(out, "\ntools (class from annotations only):");
    for t in &plan.tools {
        let _ = writeln!(out, "  {:40} {}", clip(&t.name, 40), t.class.as_str());
    }
    let line = |out: &mut String, n: usize, s: &StepPreview, note: &str| {
        let args: Vec<String> = s
            .args
            .iter()
            .map(|a| {
                format!(
                    "{}={} ({})",
                    a.name,
                    clip(&a.value.to_string(), 40),
                    a.source.as_str()
                )
            })
            .collect();
        let _ = writeln!(out, "  {n:>3}. {} {}{note}", s.tool, args.join(", "));
    };
    let _ = writeln!(
        out,
        "\nharvest pass (each runs once its required arguments can be harvested):"
    );
    for (i, s) in plan.harvest.iter().enumerate() {
        line(&mut out, i + 1, s, "");
    }
    // Whether a harvest step runs depends on the answers the server gives,
    // so the plan cannot know it: the list below has every tool, and the
    // ones the harvest pass may already call are marked. The audit skips a
    // marked step when the harvest pass did call its tool.
    let _ = writeln!(out, "\nthen, in this order:");
    for (i, s) in plan.calls.iter().enumerate() {
        if plan.retry_before == Some(i) {
            let _ = writeln!(
                out,
                "       -- second harvest pass, retry of tools that failed on invented values --"
            );
        }
        let harvested = plan.harvest.iter().any(|h| h.tool == s.tool);
        let note = if harvested {
            " — only if the harvest pass did not call it"
        } else {
            ""
        };
        line(&mut out, i + 1, s, note);
    }
    for s in &plan.skipped {
        let _ = writeln!(out, "  not called: {} ({})", s.tool, s.reason);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{Hints, ToolClass};
    use witness_model::plan::{ArgPreview, PLAN_SCHEMA, PlannedSource, ToolPreview};
    use witness_model::vocab::IsolationLevel;

    use super::*;

    fn step(tool: &str) -> StepPreview {
        StepPreview {
            tool: tool.into(),
            args: vec![ArgPreview {
                name: "id".into(),
                source: PlannedSource::HarvestedElseSynthesized,
                value: json!("x"),
            }],
        }
    }

    #[test]
    fn the_steps_after_the_harvest_pass_say_which_may_not_run() {
        let tool = |name: &str, class| ToolPreview {
            name: name.into(),
            class,
            hints: Hints::default(),
        };
        let plan = PlanPreview {
            schema: PLAN_SCHEMA.into(),
            transport: None,
            command: vec!["server".into()],
            isolation: IsolationLevel::Contained,
            include_destructive: false,
            tools: vec![
                tool("list_notes", ToolClass::ReadOnly),
                tool("save_note", ToolClass::Additive),
                tool("delete_note", ToolClass::Destructive),
            ],
            harvest: vec![step("list_notes")],
            calls: vec![step("save_note"), step("list_notes"), step("delete_note")],
            retry_before: Some(2),
            skipped: Vec::new(),
        };
        let text = text(&plan);
        // The listing tool appears in both passes; the text must not claim
        // it is left out of the second, only that it runs there when the
        // harvest pass could not call it.
        assert!(!text.contains("are not called again"), "{text}");
        let after: Vec<&str> = text
            .split("then, in this order:\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .collect();
        assert_eq!(
            after,
            [
                "    1. save_note id=\"x\" (harvested-else-synthesized)",
                "    2. list_notes id=\"x\" (harvested-else-synthesized) — only if the harvest pass did not call it",
                "       -- second harvest pass, retry of tools that failed on invented values --",
                "    3. delete_note id=\"x\" (harvested-else-synthesized)",
            ],
            "{text}"
        );
    }
}
