//! An audit for CI systems: JUnit XML (one test case per check and tool)
//! and SARIF 2.1.0 (what code scanning shows as alerts).
//!
//! Everything a server sent — tool names, reasons that quote its answers,
//! metadata spans — is untrusted. In XML it is escaped, invisible and
//! control characters written as `\u{...}` (XML 1.0 cannot carry most of
//! them at all); in SARIF it travels as JSON strings. Nothing a server sent
//! becomes markup, a link or a rule id. Secrets are never there to leak:
//! both formats are rendered from the already-redacted report. Rendering is
//! deterministic: no clock, no host name, no durations.

use std::fmt::Write;

use serde_json::{Value, json};

use witness_model::audit::{AuditReport, CheckResult, Lane, MetadataFinding, Verdict};
use witness_model::vocab::{CheckId, MetadataKind};
use witness_text::clip;

/// Characters of server-influenced text kept per attribute or body.
const MAX_TEXT: usize = 2_000;

/// Text made safe for an XML attribute or body.
pub(crate) fn xml(text: &str) -> String {
    let visible = clip(text, MAX_TEXT);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not characters XML 1.0 allows (clip has made the others visible).
            '\u{FFFE}' | '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            '\n' | '\t' => out.push(c),
            c => out.push(c),
        }
    }
    out
}

/// The evidence behind a verdict, one line each.
fn evidence_lines(check: &CheckResult) -> String {
    let mut lines = Vec::new();
    if !check.evidence.calls.is_empty() {
        let calls: Vec<String> = check.evidence.calls.iter().map(u32::to_string).collect();
        lines.push(format!("calls: {}", calls.join(", ")));
    }
    for effect in &check.evidence.effects {
        lines.push(format!(
            "{} {} in call {}",
            effect.op.as_str(),
            effect.object,
            effect.call
        ));
    }
    for probe in &check.evidence.probes {
        lines.push(format!("probe: {probe}"));
    }
    lines.join("\n")
}

fn testcase(out: &mut String, check: &CheckResult) {
    let _ = write!(
        out,
        "    <testcase classname=\"mcp-witness.{}\" name=\"{}\"",
        check.id.as_str(),
        xml(&check.tool)
    );
    match check.verdict {
        Verdict::Pass => out.push_str("/>\n"),
        Verdict::Fail => {
            let _ = write!(
                out,
                ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                check.id.as_str(),
                xml(&check.reason),
                xml(&evidence_lines(check))
            );
        }
        Verdict::Skip | Verdict::Untestable => {
            let _ = write!(
                out,
                ">\n      <skipped message=\"{}: {}\"/>\n    </testcase>\n",
                check.verdict.as_str(),
                xml(&check.reason)
            );
        }
    }
}

fn lane_suite(out: &mut String, lane: Lane, checks: &[CheckResult]) {
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    let skipped = count(Verdict::Skip) + count(Verdict::Untestable);
    let _ = writeln!(
        out,
        "  <testsuite name=\"{} lane\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\">",
        lane.as_str(),
        checks.len(),
        count(Verdict::Fail),
    );
    for check in checks {
        testcase(out, check);
    }
    out.push_str("  </testsuite>\n");
}

fn metadata_line(f: &MetadataFinding) -> String {
    format!(
        "{} {} {}: \u{ab}{}\u{bb} at {}: {}",
        f.kind.as_str(),
        f.tool,
        f.field,
        f.span,
        f.at,
        f.detail
    )
}

/// JUnit XML: a suite per lane, one test case per check and tool; a failure
/// carries its reason and evidence, `skip` and `untestable` are skipped with
/// theirs. Metadata findings are not tests: they are listed in a suite of
/// their own as output. An audit that could not finish is an error.
pub fn junit(report: &AuditReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let all: Vec<&CheckResult> = report.checks.iter().chain(&report.response).collect();
    let failures = all.iter().filter(|c| c.verdict == Verdict::Fail).count();
    let errors = usize::from(!report.complete);
    let title = report
        .target
        .label
        .clone()
        .unwrap_or_else(|| report.target.command.join(" "));
    let _ = writeln!(
        out,
        "<testsuites name=\"mcp-witness audit: {}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">",
        xml(&title),
        all.len() + errors,
    );
    if !report.complete {
        let _ = writeln!(
            out,
            "  <testsuite name=\"audit\" tests=\"1\" failures=\"0\" errors=\"1\">\n    <testcase classname=\"mcp-witness.audit\" name=\"the audit completes\">\n      <error type=\"incomplete\" message=\"{}\"/>\n    </testcase>\n  </testsuite>",
            xml(report
                .incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded"))
        );
    }
    lane_suite(&mut out, Lane::Effect, &report.checks);
    lane_suite(&mut out, Lane::Response, &report.response);
    if !report.metadata.is_empty() {
        let lines: Vec<String> = report.metadata.iter().map(metadata_line).collect();
        let _ = writeln!(
            out,
            "  <testsuite name=\"metadata findings\" tests=\"0\" failures=\"0\" errors=\"0\">\n    <system-out>{}</system-out>\n  </testsuite>",
            xml(&lines.join("\n"))
        );
    }
    out.push_str("</testsuites>\n");
    out
}

/// The file SARIF results point at: the plan the audit ran, or the audit's
/// JSON document.
pub struct Artifact {
    /// As given on the command line (relative paths stay relative).
    pub path: String,
    /// The plan's text, to find the line of each `[[call]]`.
    pub plan: Option<String>,
}

fn level(kind: MetadataKind) -> &'static str {
    match kind {
        MetadataKind::HiddenInstruction
        | MetadataKind::InvisibleCharacter
        | MetadataKind::SecretShaped => "warning",
        MetadataKind::ShellFreeText | MetadataKind::LongDescription => "note",
    }
}

fn check_rule(id: CheckId) -> Value {
    let lane = id.lane().as_str();
    let plan = id
        .plan_name()
        .map(|n| format!(" A plan attaches it as `{n}`."))
        .unwrap_or_default();
    json!({
        "id": id.as_str(),
        "name": id.as_str().replace('-', ""),
        "shortDescription": {"text": format!("{}: holds when {}", id.as_str(), id.holds_when())},
        "fullDescription": {"text": format!("The {lane} lane's {} holds when {}.{plan}", id.as_str(), id.holds_when())},
        "help": {
            "text": format!("{} failed: the tool broke what {} holds it to. The result names the calls it rests on; the audit's JSON (mcp-witness.audit/v1) holds their arguments, answers and observed effects.", id.as_str(), id.as_str()),
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["mcp", format!("{lane}-lane")]},
    })
}

fn metadata_rule(kind: MetadataKind) -> Value {
    json!({
        "id": format!("metadata/{}", kind.as_str()),
        "name": kind
            .as_str()
            .split('-')
            .map(|w| w[..1].to_ascii_uppercase() + &w[1..])
            .collect::<String>(),
        "shortDescription": {"text": format!("Metadata: {}", kind.as_str())},
        "fullDescription": {"text": format!("A metadata finding, not a verdict: {}.", kind.meaning())},
        "help": {"text": format!("{}. The result quotes the exact span, escaped, and the JSON Pointer of the field it sits in.", kind.meaning())},
        "defaultConfiguration": {"level": level(kind)},
        "properties": {"tags": ["mcp", "metadata"]},
    })
}

/// The 1-based line of the `n`-th `[[call]]` of a plan.
fn call_line(plan: &str, n: u32) -> Option<usize> {
    plan.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "[[call]]")
        .nth(usize::try_from(n).ok()?.checked_sub(1)?)
        .map(|(i, _)| i + 1)
}

fn location(artifact: &Artifact, line: usize, logical: &str) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": {"uri": uri(&artifact.path)},
            "region": {"startLine": line},
        },
        "logicalLocations": [{"name": logical, "fullyQualifiedName": logical, "kind": "function"}],
    })
}

fn uri(path: &str) -> String {
    if path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.trim_start_matches("./").to_owned()
    }
}

fn fingerprint(parts: &[&str]) -> String {
    let hash = blake3::hash(parts.join("\u{0}").as_bytes()).to_hex();
    hash.as_str()[..32].to_owned()
}

fn check_result(
    report: &AuditReport,
    check: &CheckResult,
    index: usize,
    artifact: &Artifact,
) -> Value {
    let step = check
        .evidence
        .calls
        .iter()
        .filter_map(|id| report.calls.iter().find(|c| c.id == *id))
        .find(|c| !c.expect.is_empty())
        .map(|c| c.step);
    let line = match (&artifact.plan, step) {
        (Some(plan), Some(step)) => call_line(plan, step).unwrap_or(1),
        _ => 1,
    };
    json!({
        "ruleId": check.id.as_str(),
        "ruleIndex": index,
        "level": "error",
        "message": {"text": clip(&format!("{}: {}", check.tool, check.reason), MAX_TEXT)},
        "locations": [location(artifact, line, &check.tool)],
        "partialFingerprints": {"mcpWitnessCheck/v1": fingerprint(&[check.id.as_str(), &check.tool])},
        "properties": {
            "lane": check.id.lane().as_str(),
            "verdict": check.verdict.as_str(),
            "calls": check.evidence.calls,
        },
    })
}

fn metadata_result(f: &MetadataFinding, index: usize, artifact: &Artifact) -> Value {
    json!({
        "ruleId": format!("metadata/{}", f.kind.as_str()),
        "ruleIndex": index,
        "level": level(f.kind),
        "message": {"text": clip(&format!("{} {}: {} Span at {}: \u{ab}{}\u{bb}", f.tool, f.field, f.detail, f.at, f.span), MAX_TEXT)},
        "locations": [location(artifact, 1, &format!("{}{}", f.tool, f.field))],
        "partialFingerprints": {"mcpWitnessMetadata/v1": fingerprint(&[f.kind.as_str(), &f.tool, &f.field, &f.span])},
        "properties": {"tool": f.tool, "field": f.field, "at": f.at},
    })
}

/// SARIF 2.1.0: one rule per evaluated check of both lanes and per kind of
/// metadata finding; a result for every failed check (level `error`) and
/// every metadata finding (`warning` or `note`). Passes, skips and
/// untestable verdicts are not alerts (JUnit carries every verdict). Results
/// point at `artifact` and name the tool as a logical location; their
/// `partialFingerprints` hash the rule and the tool (and the field and span
/// of a metadata finding), so the same problem keeps one alert from run to
/// run. An audit that could not finish says so in its invocation.
pub fn sarif(report: &AuditReport, artifact: &Artifact) -> Value {
    let checks = CheckId::evaluated_ids();
    let mut rules: Vec<Value> = checks.iter().map(|id| check_rule(*id)).collect();
    rules.extend(MetadataKind::ALL.iter().map(|k| metadata_rule(*k)));
    let mut results = Vec::new();
    for check in report
        .checks
        .iter()
        .chain(&report.response)
        .filter(|c| c.verdict == Verdict::Fail)
    {
        let index = checks.iter().position(|id| *id == check.id).unwrap_or(0);
        results.push(check_result(report, check, index, artifact));
    }
    for finding in &report.metadata {
        let at = MetadataKind::ALL
            .iter()
            .position(|k| *k == finding.kind)
            .unwrap_or(0);
        results.push(metadata_result(finding, checks.len() + at, artifact));
    }
    let mut invocation = json!({
        "executionSuccessful": report.complete,
        "exitCode": report.exit_code,
    });
    if let Some(reason) = &report.incomplete_reason {
        invocation["toolExecutionNotifications"] = json!([{
            "level": "error",
            "message": {"text": clip(&format!("the audit could not finish: {reason}"), MAX_TEXT)},
        }]);
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-witness",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [invocation],
            "results": results,
        }],
    })
}
