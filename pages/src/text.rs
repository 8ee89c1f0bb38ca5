//! Human-readable renderings of an audit report (text for a terminal).

use std::fmt::Write;

use witness_model::audit::{AuditReport, Verdict};
use witness_text::clip;

/// A short summary: target, era, isolation, per-tool verdicts, failures with
/// their evidence, and what could not be concluded.
pub fn text(report: &AuditReport) -> String {
    let mut out = String::new();
    let target = match report.target.transport.as_deref() {
        Some(transport) if report.target.command.is_empty() => {
            format!("a server behind a Streamable HTTP endpoint ({transport}, not jailed)")
        }
        _ => clip(&report.target.command.join(" "), 120),
    };
    let _ = writeln!(out, "mcp-witness audit — {target}");
    let era = match (&report.era.era, &report.era.protocol_version) {
        (Some(era), Some(version)) => format!("{era} ({version})"),
        _ => "no session".into(),
    };
    let _ = writeln!(
        out,
        "era: {era}   isolation: {}   probe: {}",
        report.isolation.level, report.probe
    );
    if let Some(discover) = &report.era.discover {
        let _ = writeln!(out, "server/discover: {}", clip(discover, 160));
    }
    let _ = writeln!(
        out,
        "tools: {} ({} page(s)){}",
        report.catalog.tools,
        report.catalog.pages,
        if report.catalog.complete {
            ""
        } else {
            ", INCOMPLETE"
        }
    );
    let s = &report.summary;
    let _ = writeln!(
        out,
        "calls: {}   observed: {} create / {} update / {} delete, {} outside the stores",
        s.calls, s.creates, s.updates, s.deletes, s.outside_stores
    );
    for skipped in &report.planner.skipped {
        let _ = writeln!(
            out,
            "not called: {} ({})",
            clip(&skipped.tool, 60),
            skipped.reason
        );
    }
    if !report.tools.is_empty() {
        let _ = writeln!(out);
        let width = report
            .tools
            .iter()
            .map(|t| clip(&t.name, 40).chars().count())
            .max()
            .unwrap_or(4);
        let _ = writeln!(
            out,
            "  {:width$}  {:11}  EFF-01      EFF-02      EFF-03      EFF-05      EFF-06",
            "tool", "class"
        );
        for tool in &report.tools {
            let cell = |id: &str| {
                report
                    .check(id, &tool.name)
                    .map_or("-", |c| c.verdict.as_str())
                    .to_string()
            };
            let _ = writeln!(
                out,
                "  {:width$}  {:11}  {:10}  {:10}  {:10}  {:10}  {}",
                clip(&tool.name, 40),
                tool.class.as_str(),
                cell("EFF-01"),
                cell("EFF-02"),
                cell("EFF-03"),
                cell("EFF-05"),
                cell("EFF-06"),
            );
        }
    }
    let failures: Vec<_> = report
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "\nfailures:");
        for check in failures {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                check.id,
                clip(&check.tool, 60),
                check.reason
            );
            for effect in check.evidence.effects.iter().take(8) {
                let _ = writeln!(
                    out,
                    "    call {}: {} {}",
                    effect.call,
                    effect.op,
                    clip(&effect.object, 100)
                );
            }
            for basis in check.evidence.probes.iter().take(4) {
                let _ = writeln!(out, "    probe: {}", clip(basis, 160));
            }
        }
    }
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\nfindings:");
        for f in report.findings.iter().take(20) {
            let _ = writeln!(out, "  {}: {}", f.kind, clip(&f.detail, 200));
        }
    }
    let _ = writeln!(
        out,
        "\nchecks: {} pass, {} fail, {} skip, {} untestable",
        s.pass, s.fail, s.skip, s.untestable
    );
    match (report.complete, report.exit_code) {
        (false, code) => {
            let _ = writeln!(
                out,
                "INCOMPLETE: {} (exit {code})",
                report.incomplete_reason.as_deref().unwrap_or("")
            );
        }
        (true, 1) => {
            let _ = writeln!(
                out,
                "FAILED: a declaration contradicts what was observed (exit 1)"
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "PASSED: no declaration contradicted by observation (exit 0)"
            );
        }
    }
    out
}
