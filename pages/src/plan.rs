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
    let _ = writeln!(out, "\ntools (class from annotations only):");
    for t in &plan.tools {
        let _ = writeln!(out, "  {:40} {}", clip(&t.name, 40), t.class.as_str());
    }
    let line = |out: &mut String, n: usize, s: &StepPreview| {
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
        let _ = writeln!(out, "  {n:>3}. {} {}", s.tool, args.join(", "));
    };
    let _ = writeln!(
        out,
        "\nharvest pass (each runs once its required arguments can be harvested):"
    );
    for (i, s) in plan.harvest.iter().enumerate() {
        line(&mut out, i + 1, s);
    }
    let _ = writeln!(
        out,
        "\nthen (tools already called in the harvest pass are not called again):"
    );
    for (i, s) in plan.calls.iter().enumerate() {
        if plan.retry_before == Some(i) {
            let _ = writeln!(
                out,
                "       -- second harvest pass, retry of tools that failed on invented values --"
            );
        }
        line(&mut out, i + 1, s);
    }
    for s in &plan.skipped {
        let _ = writeln!(out, "  not called: {} ({})", s.tool, s.reason);
    }
    out
}
