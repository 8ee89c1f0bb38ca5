//! The response lane: what a server answered, held to the protocol, to the
//! tool's own outputSchema and to the checks a plan attached to a call.
//!
//! The plan checks (seed 000's nine) are judged on the calls they were
//! attached to; four run on every tool of every audit: RSP-04 (results
//! validate against the outputSchema), RSP-07 (a returned cursor
//! terminates), RSP-10 (the outputSchema compiles) and RSP-11 (a failure
//! comes back on one channel).
//!
//! Provenance decides meaning here as in the effect lane: a failure that
//! rests only on calls whose arguments were all synthesized is `untestable`
//! ([`gate`]); the answer to an invented value proves nothing about the
//! server. An observed change (RSP-09) is evidence whatever the arguments.

pub(super) mod limits;
pub(super) mod outcome;
pub(super) mod pages;
pub(super) mod repeat;
pub(super) mod structured;

use witness_model::audit::{CallRecord, CallStatus, CheckId, Expectation, Verdict};

use super::{Outcome, Subject, evidence_of};

/// Per-call reasons quoted in one verdict; the rest are counted.
const MAX_REASONS: usize = 4;

/// The tool's first calls a plan attached `id` to, each with what it asked.
pub(super) fn attached<'a>(
    subject: &Subject<'a>,
    id: CheckId,
) -> Vec<(&'a CallRecord, &'a Expectation)> {
    subject
        .calls
        .iter()
        .flat_map(|c| {
            c.expect
                .iter()
                .filter(move |e| e.check() == id)
                .map(move |e| (*c, e))
        })
        .collect()
}

/// Judges every call `id` was attached to with `judge`, and reduces the
/// per-call verdicts: any failure fails (on its calls), else any untestable
/// call makes the check untestable, else it passes.
pub(super) fn judge_each(
    subject: &Subject<'_>,
    id: CheckId,
    judge: impl Fn(&CallRecord, &Expectation) -> (Verdict, String),
) -> Outcome {
    let judged: Vec<(&CallRecord, Verdict, String)> = attached(subject, id)
        .into_iter()
        .map(|(call, expect)| {
            let (verdict, reason) = judge(call, expect);
            (call, verdict, reason)
        })
        .collect();
    let all: Vec<&CallRecord> = judged.iter().map(|(c, _, _)| *c).collect();
    if judged.is_empty() {
        return (
            Verdict::Skip,
            "no plan attached this check".into(),
            evidence_of(&all, vec![]),
        );
    }
    for verdict in [Verdict::Fail, Verdict::Untestable] {
        let these: Vec<&(&CallRecord, Verdict, String)> =
            judged.iter().filter(|(_, v, _)| *v == verdict).collect();
        if these.is_empty() {
            continue;
        }
        let calls: Vec<&CallRecord> = these.iter().map(|(c, _, _)| *c).collect();
        let reason = per_call(these.iter().map(|(c, _, r)| (c.id, r.as_str())));
        let outcome = (verdict, reason, evidence_of(&calls, vec![]));
        return gate(outcome, &calls);
    }
    let reason = per_call(judged.iter().map(|(c, _, r)| (c.id, r.as_str())));
    (Verdict::Pass, reason, evidence_of(&all, vec![]))
}

/// `call 3: ...; call 5: ...`, bounded.
pub(super) fn per_call<'a>(reasons: impl Iterator<Item = (u32, &'a str)>) -> String {
    let reasons: Vec<(u32, &str)> = reasons.collect();
    let mut parts: Vec<String> = reasons
        .iter()
        .take(MAX_REASONS)
        .map(|(id, r)| format!("call {id}: {r}"))
        .collect();
    if reasons.len() > MAX_REASONS {
        parts.push(format!("and {} more call(s)", reasons.len() - MAX_REASONS));
    }
    parts.join("; ")
}

/// A failure that rests only on calls whose arguments were all synthesized
/// is untestable: what a server answers to an invented value proves nothing
/// about it. Anything else passes through unchanged.
pub(super) fn gate(outcome: Outcome, deciding: &[&CallRecord]) -> Outcome {
    let (verdict, reason, evidence) = outcome;
    let invented = !deciding.is_empty() && deciding.iter().all(|c| c.used_synthesized());
    if verdict == Verdict::Fail && invented {
        return (
            Verdict::Untestable,
            format!(
                "{reason} — but only on synthesized arguments, which proves nothing about the server"
            ),
            evidence,
        );
    }
    (verdict, reason, evidence)
}

/// When no call of the tool succeeded: why nothing could be judged.
pub(super) fn unanswered(calls: &[&CallRecord]) -> Option<(Verdict, String)> {
    if calls.is_empty() {
        return Some((Verdict::Skip, "the tool was not called".into()));
    }
    if calls.iter().any(|c| c.outcome.status == CallStatus::Ok) {
        return None;
    }
    let why = if calls.iter().any(|c| c.used_synthesized()) {
        "no call succeeded (they used synthesized arguments, which proves nothing about the tool)"
    } else {
        "no call succeeded, so there was no result to judge"
    };
    Some((Verdict::Untestable, why.into()))
}

/// How a call ended, in the words a verdict uses.
pub(super) fn ended(call: &CallRecord) -> String {
    match (call.outcome.status, call.outcome.code) {
        (CallStatus::RpcError, Some(code)) => format!("a JSON-RPC error (code {code})"),
        (status, _) => status.phrase().to_owned(),
    }
}

/// The reason a call never reached the tool, when it did not.
pub(super) fn unreached(call: &CallRecord) -> Option<String> {
    match call.outcome.status {
        CallStatus::TransportError | CallStatus::NotSent => Some(format!(
            "{}: the call never reached the tool",
            call.outcome.status.phrase()
        )),
        CallStatus::InputRequired => Some(
            "the server asked for input the client did not give: the tool never finished".into(),
        ),
        _ => None,
    }
}
