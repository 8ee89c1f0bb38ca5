//! An audit for CI systems: JUnit XML (one test case per check and tool)
//! and SARIF 2.1.0 (what code scanning shows as alerts).
//!
//! Everything a server sent — tool names, reasons that quote its answers,
//! metadata spans — is untrusted. In XML it is escaped (by quick-junit),
//! invisible and control characters written as `\u{...}` first (XML 1.0
//! cannot carry most of them at all); in SARIF it travels as JSON strings.
//! Nothing a server sent becomes markup, a link or a rule id. Secrets are
//! never there to leak: both formats are rendered from the already-redacted
//! report. Rendering is deterministic: no clock, no host name, no durations.

use std::fmt::Write;

use quick_junit::{NonSuccessKind, Report, SerializeError, TestCase, TestCaseStatus, TestSuite};
use serde_json::{Value, json};

use witness_model::audit::{AuditReport, CheckResult, Lane, MetadataFinding, Verdict};
use witness_model::vocab::{CheckId, MetadataKind};
use witness_text::clip;

/// Characters of server-influenced text kept per attribute or body.
const MAX_TEXT: usize = 2_000;

/// Text bounded and made visible for XML; the serializer escapes markup.
pub(crate) fn xml_text(text: &str) -> String {
    let visible = clip(text, MAX_TEXT);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            // Not characters XML 1.0 allows (clip has made the others visible).
            '\u{FFFE}' | '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// The JUnit document as text, valid against the JUnit 10 schema
/// (tests/schemas/junit-10.xsd, what Jenkins' xUnit plugin validates
/// with). quick-junit also counts skipped tests on `<testsuites>`, where
/// that schema has no such attribute: the count is taken off there, and
/// stays on each `<testsuite>`.
pub(crate) fn junit_text(report: &Report) -> Result<String, SerializeError> {
    let xml = report.to_string()?;
    Ok(without_suites_skipped(xml))
}

fn without_suites_skipped(mut xml: String) -> String {
    // Attribute values are escaped, so no `"` or `>` inside one ends early.
    let Some(tag) = xml.find("<testsuites") else {
        return xml;
    };
    let Some(tag_end) = xml[tag..].find('>').map(|e| tag + e) else {
        return xml;
    };
    let Some(at) = xml[tag..tag_end].find(" skipped=\"").map(|a| tag + a) else {
        return xml;
    };
    let value = at + " skipped=\"".len();
    if let Some(close) = xml[value..tag_end].find('"') {
        xml.replace_range(at..=value + close, "");
    }
    xml
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

fn testcase(check: &CheckResult) -> TestCase {
    let status = match check.verdict {
        Verdict::Pass => TestCaseStatus::success(),
        Verdict::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_type(check.id.as_str())
                .set_message(xml_text(&check.reason))
                .set_description(xml_text(&evidence_lines(check)));
            status
        }
        Verdict::Skip | Verdict::Untestable => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!(
                "{}: {}",
                check.verdict.as_str(),
                xml_text(&check.reason)
            ));
            status
        }
    };
    let mut case = TestCase::new(xml_text(&check.tool), status);
    case.set_classname(format!("mcp-witness.{}", check.id.as_str()));
    case
}

fn lane_suite(lane: Lane, checks: &[CheckResult]) -> TestSuite {
    let mut suite = TestSuite::new(format!("{} lane", lane.as_str()));
    suite.add_test_cases(checks.iter().map(testcase));
    suite
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
pub fn junit(report: &AuditReport) -> Result<String, SerializeError> {
    let title = report
        .target
        .label
        .clone()
        .unwrap_or_else(|| report.target.command.join(" "));
    let mut junit = Report::new(format!("mcp-witness audit: {}", xml_text(&title)));
    if !report.complete {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("incomplete").set_message(xml_text(
            report
                .incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded"),
        ));
        let mut case = TestCase::new("the audit completes", status);
        case.set_classname("mcp-witness.audit");
        let mut suite = TestSuite::new("audit");
        suite.add_test_case(case);
        junit.add_test_suite(suite);
    }
    junit.add_test_suite(lane_suite(Lane::Effect, &report.checks));
    junit.add_test_suite(lane_suite(Lane::Response, &report.response));
    if !report.metadata.is_empty() {
        let lines: Vec<String> = report.metadata.iter().map(metadata_line).collect();
        let mut suite = TestSuite::new("metadata findings");
        suite.set_system_out(xml_text(&lines.join("\n")));
        junit.add_test_suite(suite);
    }
    junit_text(&junit)
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

#[cfg(test)]
mod tests {
    use witness_model::audit::Verdict;

    use super::*;
    use crate::text::tests::honest;

    #[test]
    fn what_a_server_sent_is_text_in_junit_never_markup() {
        let mut report = honest();
        let check = &mut report.checks[0];
        check.tool = "<script>x</script>\u{202E}\u{FFFE}".into();
        check.verdict = Verdict::Fail;
        check.reason = "it said \"<IMPORTANT>\" & 'more'".into();
        let Ok(xml) = junit(&report) else {
            panic!("no JUnit");
        };
        assert!(
            !xml.contains("<script>") && !xml.contains("<IMPORTANT>"),
            "{xml}"
        );
        assert!(
            !xml.contains('\u{202E}') && !xml.contains('\u{FFFE}'),
            "{xml}"
        );
        assert!(xml.contains("name=\"&lt;script&gt;x&lt;/script&gt;\\u{202e}\\u{fffe}\""));
        assert!(
            xml.contains(
                "message=\"it said &quot;&lt;IMPORTANT&gt;&quot; &amp; &apos;more&apos;\""
            )
        );
    }

    #[test]
    fn the_suites_count_their_verdicts_and_the_document_its_tests_failures_and_errors() {
        let mut report = honest();
        report.checks[1].verdict = Verdict::Fail;
        report.complete = false;
        report.incomplete_reason = Some("stopped".into());
        let Ok(xml) = junit(&report) else {
            panic!("no JUnit");
        };
        let skipped = report
            .checks
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Skip | Verdict::Untestable))
            .count();
        let tests = report.checks.len() + report.response.len() + 1;
        let head = xml.lines().nth(1).unwrap_or_default();
        assert!(
            head.contains(&format!("tests=\"{tests}\" failures=\"1\" errors=\"1\"")),
            "{head}"
        );
        // The schema has no `skipped` on <testsuites>; each suite keeps its own.
        assert!(!head.contains("skipped"), "{head}");
        assert!(
            xml.contains(&format!(
                "<testsuite name=\"effect lane\" tests=\"{}\" skipped=\"{skipped}\" errors=\"0\" failures=\"1\">",
                report.checks.len()
            )),
            "{xml}"
        );
        assert!(
            xml.contains("message=\"stopped\" type=\"incomplete\""),
            "{xml}"
        );
    }
}
