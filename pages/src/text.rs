//! Human-readable renderings of an audit report (text for a terminal).

use std::fmt::Write;

use witness_model::audit::{AuditReport, Coverage, Lane, Verdict};
use witness_model::vocab::CheckId;
use witness_text::clip;

/// An official MCP registry entry as one line: `NAME VERSION, package N`.
pub(crate) fn entry_text(entry: &witness_model::audit::ServerJsonEntry) -> String {
    let version = entry
        .version
        .as_deref()
        .map(|v| format!(" {}", clip(v, 40)))
        .unwrap_or_default();
    format!(
        "{}{version}, package {} of its packages[]",
        clip(&entry.name, 120),
        entry.package
    )
}

/// A short summary: target, era, isolation, per-tool verdicts, failures with
/// their evidence, and what could not be concluded.
pub fn text(report: &AuditReport) -> String {
    let mut out = String::new();
    // Recorded, or (for a plan file carried out in full) computed the same way.
    let coverage = report
        .coverage
        .clone()
        .unwrap_or_else(|| Coverage::of(report, None));
    headline(&mut out, report, &coverage);
    let target = match report.target.transport.as_deref() {
        Some(transport) if report.target.command.is_empty() => {
            format!("a server behind a Streamable HTTP endpoint ({transport}, not jailed)")
        }
        _ => clip(&report.target.command.join(" "), 120),
    };
    let _ = writeln!(out, "mcp-witness audit — {target}");
    if let Some(entry) = &report.target.server_json {
        let _ = writeln!(out, "registry entry: {}", entry_text(entry));
    }
    if !report.isolation.level.contains_effects() {
        let _ = writeln!(
            out,
            "NOT CONTAINED: {} (writes outside the jail and the network were neither prevented nor observed)",
            report.isolation.detail
        );
    }
    let era = match (&report.era.era, &report.era.protocol_version) {
        (Some(era), Some(version)) => format!("{era} ({version})"),
        _ => "no session".into(),
    };
    let _ = writeln!(
        out,
        "era: {era}   isolation: {}   probe: {}",
        report.isolation.level.as_str(),
        report.probe
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
        "calls: {}   observed: {} create / {} update / {} delete, {} outside the stores, {} late (charged to no call)",
        s.calls, s.creates, s.updates, s.deletes, s.outside_stores, s.late
    );
    match &report.isolation.network_observer {
        Some(observer) if observer.observed => {
            let during: usize = report.calls.iter().map(|c| c.network.len()).sum();
            let _ = writeln!(
                out,
                "network: observed; {during} outbound attempt(s) during calls, {} outside them (nothing relayed)",
                report.network_outside_calls.len()
            );
        }
        Some(observer) => {
            let _ = writeln!(out, "network: {} (EFF-04 untestable)", observer.detail);
        }
        None => {}
    }
    for restart in &report.restarts {
        let _ = writeln!(
            out,
            "restarted after call {}: {} (session {})",
            restart.after_call,
            clip(&restart.reason, 160),
            restart.session
        );
    }
    coverage_lines(&mut out, &coverage);
    for skipped in &report.planner.skipped {
        let _ = writeln!(
            out,
            "not called: {} ({})",
            clip(&skipped.tool, 60),
            skipped.reason
        );
    }
    for lane in Lane::ALL {
        lane_table(&mut out, report, lane);
    }
    let failures: Vec<_> = report
        .checks
        .iter()
        .chain(&report.response)
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
                    effect.op.as_str(),
                    clip(&effect.object, 100)
                );
            }
            for basis in check.evidence.probes.iter().take(4) {
                let _ = writeln!(out, "    probe: {}", clip(basis, 160));
            }
            for reach in check.evidence.network.iter().take(8) {
                let _ = writeln!(
                    out,
                    "    call {}: reached {}",
                    reach.call,
                    clip(&reach.destination, 160)
                );
            }
            for write in check.evidence.original_writes.iter().take(8) {
                let _ = writeln!(
                    out,
                    "    call {}: tried to write the original {}",
                    write.call,
                    clip(&write.path, 160)
                );
            }
        }
    }
    if !report.metadata.is_empty() {
        let _ = writeln!(out, "\nmetadata findings (not verdicts):");
        for f in report.metadata.iter().take(20) {
            let _ = writeln!(
                out,
                "  {} {} {}: \u{ab}{}\u{bb}",
                f.kind.as_str(),
                clip(&f.tool, 60),
                clip(&f.field, 80),
                clip(&f.span, 80)
            );
        }
    }
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\nfindings:");
        for f in report.findings.iter().take(20) {
            let _ = writeln!(out, "  {}: {}", f.kind.as_str(), clip(&f.detail, 200));
        }
    }
    let _ = writeln!(
        out,
        "\nchecks: {} pass, {} fail, {} skip, {} untestable",
        s.pass, s.fail, s.skip, s.untestable
    );
    let r = &s.response;
    let _ = writeln!(
        out,
        "response: {} pass, {} fail, {} skip, {} untestable; {} metadata finding(s)",
        r.pass, r.fail, r.skip, r.untestable, s.metadata
    );
    ending(&mut out, report, &coverage);
    out
}

/// The first line: the verdict and how much of the catalog and of its
/// claims it rests on, `PASSED — 11/12 tools exercised, 19/21 claims
/// tested`, so that no reader takes a pass on a sliver of the server for a
/// pass on all of it.
fn headline(out: &mut String, report: &AuditReport, coverage: &Coverage) {
    let verdict = match (report.complete, report.exit_code) {
        (false, _) => "INCOMPLETE",
        (true, 0) => "PASSED",
        (true, 1) => "FAILED",
        (true, _) => "NOT CONCLUDED",
    };
    let _ = if coverage.no_catalog {
        writeln!(out, "{verdict} — no tool catalog, no tool exercised")
    } else {
        writeln!(
            out,
            "{verdict} — {}/{} tools exercised, {}",
            coverage.exercised,
            coverage.tools,
            claims_tested(coverage)
        )
    };
}

/// `19/21 claims tested`, or `no claim declared`.
fn claims_tested(coverage: &Coverage) -> String {
    if coverage.claims == 0 {
        "no claim declared".to_owned()
    } else {
        format!(
            "{}/{} claims tested",
            coverage.claims_tested, coverage.claims
        )
    }
}

/// The last line: how the audit ended, never PASSED when it concluded nothing.
fn ending(out: &mut String, report: &AuditReport, coverage: &Coverage) {
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
                "FAILED: a check failed: a declaration contradicts what was observed, or an answer what was expected (exit 1)"
            );
        }
        (true, 0) => {
            let _ = writeln!(
                out,
                "PASSED: no declaration contradicted by observation (exit 0)"
            );
        }
        (true, code) => {
            let _ = writeln!(
                out,
                "NOT CONCLUDED: {} (exit {code})",
                coverage
                    .not_concluded
                    .as_deref()
                    .unwrap_or("nothing could be concluded")
            );
        }
    }
}

/// `coverage: 12/14 tools exercised (85%), 9 on real values only (values
/// by kind, in so many tools: store in 8, synthesized in 5)`,
/// then one line per tool that was not exercised, with why.
fn coverage_lines(out: &mut String, coverage: &Coverage) {
    let kinds: Vec<String> = coverage
        .kinds()
        .into_iter()
        .map(|(kind, n)| format!("{kind} in {n}"))
        .collect();
    if coverage.no_catalog {
        let _ = writeln!(
            out,
            "coverage: unknown: the tool catalog never arrived whole ({} tool(s) seen, {} exercised)",
            coverage.tools, coverage.exercised
        );
        return;
    }
    let floor = coverage
        .minimum_percent
        .map(|min| format!("; --min-coverage {min}%"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "coverage: {}/{} tools exercised ({}%), {} on real values only{}{floor}",
        coverage.exercised,
        coverage.tools,
        coverage.percent(),
        coverage.on_real_values,
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" (values by kind, in so many tools: {})", kinds.join(", "))
        }
    );
    for tool in coverage.left() {
        let _ = writeln!(
            out,
            "  not exercised: {}: {}",
            clip(&tool.tool, 60),
            clip(tool.why.as_deref().unwrap_or(""), 200)
        );
    }
    if coverage.claims > 0 {
        let _ = writeln!(
            out,
            "claims: {} ({}%)",
            claims_tested(coverage),
            coverage.claims_percent()
        );
    }
    for claim in &coverage.untested_writer_claims {
        let _ = writeln!(
            out,
            "  untested on a tool asked to write: {} of {}: {}",
            claim.check.as_str(),
            clip(&claim.tool, 60),
            clip(claim.why.as_deref().unwrap_or(""), 200)
        );
    }
}

/// One lane's verdicts: a column per check the audits evaluate in it (from
/// the catalog), a row per tool; `-` where the check did not apply.
fn lane_table(out: &mut String, report: &AuditReport, lane: Lane) {
    if report.tools.is_empty() || report.lane(lane).is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{} lane:", lane.as_str());
    let width = report
        .tools
        .iter()
        .map(|t| clip(&t.name, 40).chars().count())
        .max()
        .unwrap_or(4);
    let ids = CheckId::evaluated_in(lane);
    let header: Vec<&str> = ids.iter().map(|id| id.as_str()).collect();
    let _ = writeln!(
        out,
        "  {:width$}  {:11}  {}",
        "tool",
        "class",
        columns(&header)
    );
    for tool in &report.tools {
        let cells: Vec<&str> = ids
            .iter()
            .map(|id| {
                report
                    .check(*id, &tool.name)
                    .map_or("-", |c| c.verdict.as_str())
            })
            .collect();
        let _ = writeln!(
            out,
            "  {:width$}  {:11}  {}",
            clip(&tool.name, 40),
            tool.class.as_str(),
            columns(&cells)
        );
    }
}

/// Cells ten wide, two spaces apart; the last one unpadded.
fn columns(cells: &[&str]) -> String {
    let mut out = String::new();
    for (i, cell) in cells.iter().enumerate() {
        if i + 1 == cells.len() {
            out.push_str(cell);
        } else {
            out.push_str(&format!("{cell:10}  "));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use witness_model::audit::{AuditReport, Effect, Op};

    use super::*;

    /// A committed audit of the honest testbed: complete, exit 0.
    pub(crate) fn honest() -> AuditReport {
        let text = include_str!("../../experiments/results/audits/honest.json");
        serde_json::from_str(text).unwrap_or_else(|e| panic!("honest.json: {e}"))
    }

    #[test]
    fn a_registry_entry_is_named_in_the_summary_and_on_the_page_and_only_then() {
        let mut report = honest();
        assert!(!text(&report).contains("registry entry"));
        report.target.server_json = Some(witness_model::audit::ServerJsonEntry {
            name: "io.github.example/<notes>".into(),
            version: Some("1.2.0".into()),
            package: 1,
        });
        let shown = text(&report);
        assert!(
            shown.contains(
                "registry entry: io.github.example/<notes> 1.2.0, package 1 of its packages[]"
            ),
            "{shown}"
        );
        let links = crate::AuditLinks {
            raw_json: None,
            index: None,
        };
        let page = crate::render_audit(&report, &links).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            page.contains("io.github.example/&lt;notes&gt; 1.2.0, package 1"),
            "the entry's name is escaped"
        );
    }

    #[test]
    fn a_late_effect_is_counted_in_the_text_summary() {
        let mut report = honest();
        assert!(text(&report).contains(", 0 late (charged to no call)"));
        report.calls[0].late_effects.push(Effect {
            store: "db".into(),
            object: "notes/late".into(),
            op: Op::Create,
            overwrite: None,
            before: None,
            after: None,
        });
        report.summary = witness_model::audit::Summary::of(&report.calls, &report.checks, &[], &[]);
        let shown = text(&report);
        assert!(shown.contains(", 1 late (charged to no call)"), "{shown}");
    }

    #[test]
    fn an_audit_that_concluded_nothing_never_says_passed() {
        let mut report = honest();
        assert!(text(&report).contains("PASSED"));
        let mut coverage = Coverage::of(&report, Some(100));
        coverage.concluded = false;
        coverage.not_concluded = Some("no effect check rests on an observation".into());
        report.coverage = Some(coverage);
        report.exit_code = 3;
        let shown = text(&report);
        assert!(!shown.contains("PASSED"), "{shown}");
        assert!(
            shown.contains("NOT CONCLUDED: no effect check rests on an observation (exit 3)"),
            "{shown}"
        );
        assert!(
            shown.contains("coverage: 11/11 tools exercised (100%)"),
            "{shown}"
        );
    }

    #[test]
    fn the_first_line_states_the_verdict_and_the_coverage_it_rests_on() {
        let mut report = honest();
        let shown = text(&report);
        assert_eq!(
            shown.lines().next(),
            Some("PASSED — 11/11 tools exercised, 28/28 claims tested"),
            "{shown}"
        );
        // A catalog that never arrived is no share of anything, least of all 100%.
        report.catalog.complete = false;
        report.catalog.pages = 0;
        report.tools.clear();
        report.calls.clear();
        report.coverage = Some(Coverage::of(&report, None));
        report.exit_code = 3;
        let shown = text(&report);
        assert_eq!(
            shown.lines().next(),
            Some("NOT CONCLUDED — no tool catalog, no tool exercised"),
            "{shown}"
        );
        assert!(!shown.contains("100%"), "{shown}");
        assert!(shown.contains("coverage: unknown"), "{shown}");
        let coverage = Coverage::of(&report, None);
        assert_eq!(coverage.percent(), 0);
        assert!(!coverage.concluded);
    }
}
