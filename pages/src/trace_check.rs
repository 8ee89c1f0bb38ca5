//! The outputs of `mcp-witness trace check` (`mcp-witness.trace-check/v1`):
//! a text summary, JUnit XML (one test case per check) and the page, which
//! shows the verdicts and the trace exactly as an agent run's page does.
//!
//! Everything a host or a server sent is text to escape: the page escapes it
//! through the templates' formatter, the text and the XML here.

use serde::Serialize;
use witness_model::agent::CaseRun;
use witness_model::proxy::TraceCheckDocument;
use witness_model::vocab::{AnswerGrade, Verdict};

use crate::agent::{RunView, run_view};

#[derive(Serialize)]
struct View {
    schema: String,
    generator: String,
    file: String,
    exit_code: i64,
    facts: Vec<(String, String)>,
    ambiguous: Vec<(String, String)>,
    run: RunView,
}

/// The page of one trace check.
pub fn render(doc: &TraceCheckDocument) -> anyhow::Result<String> {
    let run = CaseRun {
        case: doc
            .case
            .as_ref()
            .map_or_else(|| "no case".to_owned(), |c| c.id.clone()),
        model: "the recorded host".into(),
        run: 1,
        ceiling: 0,
        calls: u32::try_from(doc.trace.calls().count()).unwrap_or(u32::MAX),
        isolation: None,
        outcome: doc.outcome,
        status: doc.status,
        answer: AnswerGrade::Unjudged,
        verdicts: doc.verdicts.clone(),
        trace: doc.trace.clone(),
        exchanges: Vec::new(),
    };
    let view = View {
        schema: doc.schema.clone(),
        generator: doc.generator.clone(),
        file: doc.source.file.clone(),
        exit_code: doc.exit_code,
        facts: facts(doc),
        ambiguous: doc
            .ambiguous
            .iter()
            .map(|a| {
                let calls: Vec<String> = a.calls.iter().map(u32::to_string).collect();
                (calls.join(", "), a.effects.join(", "))
            })
            .collect(),
        run: run_view(&run, doc.case.as_ref().map(|c| c.budget)),
    };
    crate::render("trace-check.html.j2", view)
}

fn facts(doc: &TraceCheckDocument) -> Vec<(String, String)> {
    let source = &doc.source;
    let mut out = vec![
        (
            "Host and server".to_owned(),
            format!(
                "host over {}, server over {}{}",
                source.host_transport,
                source.server_transport,
                if source.live {
                    "; the server ran on the live stores"
                } else {
                    ""
                }
            ),
        ),
        (
            "Trace".to_owned(),
            format!(
                "{} line(s); {}{}",
                source.lines,
                source.ended.as_deref().map_or_else(
                    || "no end line: the proxy was killed or is still running".to_owned(),
                    |r| format!("ended: {r}")
                ),
                if source.torn_last_line {
                    "; a torn last line was skipped"
                } else {
                    ""
                }
            ),
        ),
    ];
    out.push((
        "Golden case".to_owned(),
        doc.case.as_ref().map_or_else(
            || "none: only what any client is held to".to_owned(),
            |c| format!("{} ({}), budget {}", c.id, c.title, c.budget),
        ),
    ));
    out.push((
        "Conversation".to_owned(),
        doc.conversation.as_ref().map_or_else(
            || "none: consent and say vs do cannot be judged".to_owned(),
            |c| format!("{} ({}), {} turn(s)", c.file, c.format, c.turns),
        ),
    ));
    out
}

/// A few lines for a terminal: the status, then each check.
pub fn text(doc: &TraceCheckDocument) -> String {
    let mut out = format!(
        "trace check {}: {} (outcome {}), {} call(s){}\n",
        witness_text::clip(&doc.source.file, 120),
        doc.status.as_str(),
        doc.outcome,
        doc.trace.calls().count(),
        doc.case
            .as_ref()
            .map_or_else(String::new, |c| format!(", case {}", c.id))
    );
    for v in &doc.verdicts {
        out.push_str(&format!(
            "  {:<15} {:<10} {}\n",
            v.check.to_string(),
            v.verdict.to_string(),
            witness_text::clip(&v.detail, 200)
        ));
    }
    out
}

/// JUnit XML: one test case per check; a failed check is a failure, a
/// skipped or untestable one is skipped with its reason.
pub fn junit(doc: &TraceCheckDocument) -> Result<String, quick_junit::SerializeError> {
    use crate::ci::xml_text;
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

    let mut suite = TestSuite::new(xml_text(&format!(
        "mcp-witness trace check {}",
        doc.source.file
    )));
    for v in &doc.verdicts {
        let detail = xml_text(&v.detail);
        let status = match v.verdict {
            Verdict::Fail => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(detail.clone()).set_description(detail);
                status
            }
            Verdict::Skip | Verdict::Untestable => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!("{}: {detail}", v.verdict));
                status
            }
            Verdict::Pass => TestCaseStatus::success(),
        };
        let mut case = TestCase::new(xml_text(&v.check.to_string()), status);
        case.set_classname("trace-check");
        suite.add_test_case(case);
    }
    let mut report = Report::unnamed();
    report.add_test_suite(suite);
    crate::ci::junit_text(&report)
}
