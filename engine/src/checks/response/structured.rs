//! The outputSchema: RSP-10 (it compiles) and RSP-04 (every successful
//! result's structuredContent validates against it).
//!
//! A tool that declares an outputSchema promises structured results that
//! conform to it; a tool that declares none promises nothing, so both
//! checks skip there. Only successful results are held to the schema: a
//! result with `isError: true` reports a failure, not the promised output.

use witness_model::audit::{CallRecord, CallStatus, Verdict};

use super::super::schema::{compile, violations};
use super::super::{Outcome, Subject, evidence_of};
use super::{gate, per_call, unanswered};

/// RSP-10: a declared outputSchema compiles.
pub(in crate::checks) fn compiles(subject: &Subject<'_>) -> Outcome {
    let none = evidence_of(&[], vec![]);
    let Some(schema) = &subject.tool.output_schema else {
        return (
            Verdict::Skip,
            "declares no outputSchema: nothing to compile".into(),
            none,
        );
    };
    match compile(schema) {
        Ok(_) => (Verdict::Pass, "the outputSchema compiles".into(), none),
        Err(why) => (
            Verdict::Fail,
            format!("the outputSchema does not compile: {why}"),
            none,
        ),
    }
}

/// RSP-04: every successful result carries structuredContent that
/// validates against the declared outputSchema.
pub(in crate::checks) fn validates(subject: &Subject<'_>) -> Outcome {
    let calls = subject.calls.as_slice();
    let Some(schema) = &subject.tool.output_schema else {
        return (
            Verdict::Skip,
            "declares no outputSchema: there is nothing to validate against".into(),
            evidence_of(calls, vec![]),
        );
    };
    let validator = match compile(schema) {
        Ok(v) => v,
        Err(_) => {
            return (
                Verdict::Untestable,
                "the outputSchema does not compile (RSP-10), so no result can be validated".into(),
                evidence_of(calls, vec![]),
            );
        }
    };
    let ok: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| c.outcome.status == CallStatus::Ok)
        .collect();
    if ok.is_empty() {
        let (verdict, reason) = unanswered(calls).unwrap_or((
            Verdict::Untestable,
            "no call succeeded, so there was no result to validate".into(),
        ));
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    let mut wrong: Vec<(&CallRecord, String)> = Vec::new();
    for call in &ok {
        let structured = call
            .response
            .as_ref()
            .and_then(|r| r.get("structuredContent"));
        match structured {
            None => wrong.push((
                call,
                "no structuredContent, though the tool declares an outputSchema".into(),
            )),
            Some(value) => {
                let found = violations(&validator, value);
                if !found.is_empty() {
                    wrong.push((call, found.join("; ")));
                }
            }
        }
    }
    if wrong.is_empty() {
        return (
            Verdict::Pass,
            format!(
                "{} successful result(s), each with structuredContent that validates",
                ok.len()
            ),
            evidence_of(&ok, vec![]),
        );
    }
    let deciding: Vec<&CallRecord> = wrong.iter().map(|(c, _)| *c).collect();
    let reason = per_call(wrong.iter().map(|(c, r)| (c.id, r.as_str())));
    gate(
        (Verdict::Fail, reason, evidence_of(&deciding, vec![])),
        &deciding,
    )
}
