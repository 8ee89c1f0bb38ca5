//! The guidance report as text for a person: the same fields as the JSON.

use std::fmt::Write as _;

use witness_model::guidance::{CANDIDATE_HINT, DEFECT_HINT, GuidanceReport, Profile};

fn profiles_text(profiles: &[Profile]) -> String {
    if profiles.is_empty() {
        return "no selected profile".into();
    }
    profiles
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text report: the same fields as the JSON, for a person.
pub fn text(report: &GuidanceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "guidance: {} over {} (protocol {} offered, settle {} ms, reference detection {})",
        report.server,
        report.transport,
        report.protocol_offered,
        report.settle_ms,
        report.reference_detection
    );
    for p in &report.profiles {
        let caps = if p.capabilities.is_empty() {
            "no client capabilities".to_owned()
        } else {
            p.capabilities.join("+")
        };
        if p.complete {
            let _ = writeln!(
                out,
                "\nprofile {} ({caps}): {} tools in {} page(s), instructions {}",
                p.profile.as_str(),
                p.tool_count,
                p.pages,
                if p.instructions_present {
                    "present"
                } else {
                    "absent"
                }
            );
            if !p.tools.is_empty() {
                let _ = writeln!(out, "  {}", p.tools.join(", "));
            }
            if p.unreportable_names > 0 {
                let _ = writeln!(
                    out,
                    "  ({} tool name(s) are not identifiers and are not shown)",
                    p.unreportable_names
                );
            }
        } else if let Some(incomplete) = &p.incomplete {
            let _ = writeln!(
                out,
                "\nprofile {} ({caps}): INCOMPLETE ({}: {})\n  {}",
                p.profile.as_str(),
                incomplete.reason,
                incomplete.cause.as_str(),
                incomplete.hint
            );
        }
    }
    if !report.complete {
        let _ = writeln!(
            out,
            "\nincomplete: no candidates or defects are reported; gate: not decided (exit {})",
            report.exit_code
        );
        return out;
    }
    let _ = writeln!(out, "\nreview candidates: {}", report.candidates.len());
    for c in &report.candidates {
        let _ = writeln!(
            out,
            "  {}: `{}` is referenced under {} but listed only under {}",
            c.kind,
            c.tool,
            c.profile.as_str(),
            profiles_text(&c.available_in)
        );
    }
    if !report.candidates.is_empty() {
        let _ = writeln!(out, "  hint: {CANDIDATE_HINT}");
    }
    if report.required_tools.is_empty() {
        let _ = writeln!(
            out,
            "required-tool gate: passed (no --require-tool given; exit {})",
            report.exit_code
        );
        return out;
    }
    let _ = writeln!(
        out,
        "required tools: {} -> {} defect(s)",
        report.required_tools.join(", "),
        report.defects.len()
    );
    for d in &report.defects {
        let _ = writeln!(
            out,
            "  {}: `{}` is not listed under {} (listed under {})",
            d.kind,
            d.tool,
            d.profile.as_str(),
            profiles_text(&d.available_in)
        );
    }
    if !report.defects.is_empty() {
        let _ = writeln!(out, "  hint: {DEFECT_HINT}");
    }
    let _ = writeln!(
        out,
        "required-tool gate: {} (exit {})",
        if report.passed == Some(true) {
            "passed"
        } else {
            "FAILED"
        },
        report.exit_code
    );
    out
}
