//! The same call twice, and a call that should change nothing: RSP-08
//! (`idempotent`: same call, same result — the response counterpart of
//! EFF-03) and RSP-09 (`no_mutation`: EFF-01 on one call, by observation).

use serde_json::Value;
use witness_model::audit::{CallRecord, CheckId, Verdict};

use super::super::{Outcome, Subject, effects_where, evidence_of, unexercised};
use super::{attached, gate, judge_each, per_call};

/// A result as compared: how the call ended and what it answered, without
/// `_meta` (protocol bookkeeping such as progress tokens, not the answer).
fn comparable(call: &CallRecord) -> (String, Option<i64>, Option<Value>) {
    let mut response = call.response.clone();
    if let Some(Value::Object(map)) = response.as_mut() {
        map.remove("_meta");
    }
    (
        call.outcome.status.as_str().to_owned(),
        call.outcome.code,
        response,
    )
}

/// The first JSON Pointer at which `a` and `b` differ (`""` for the root).
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{at}/{}", escape(k))),
                _ => Some(format!("{at}/{}", escape(k))),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}"))),
        _ => (a != b).then(|| at.to_owned()),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// RSP-08: the identical repeat answered exactly as the first call.
pub(in crate::checks) fn same_result(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp08, |first, _| {
        let Some(repeat) = subject.all.iter().find(|c| c.repeat_of == Some(first.id)) else {
            return (
                Verdict::Untestable,
                "no identical repeat was made: the call never reached the tool".into(),
            );
        };
        let (a, b) = (comparable(first), comparable(repeat));
        if a == b {
            return (
                Verdict::Pass,
                format!("call {} answered exactly the same", repeat.id),
            );
        }
        let place = match (&a.2, &b.2) {
            (Some(x), Some(y)) if a.0 == b.0 => first_difference(x, y, "")
                .map(|p| format!(" at {}", if p.is_empty() { "/" } else { &p }))
                .unwrap_or_default(),
            _ => format!(" (it ended {} the first time, {} the second)", a.0, b.0),
        };
        (
            Verdict::Fail,
            format!(
                "the identical repeat, call {}, answered differently{}",
                repeat.id,
                witness_text::clip(&place, 200)
            ),
        )
    })
}

/// RSP-09: the call caused no observed change. An observed change is
/// evidence whatever the arguments, as for EFF-01.
pub(in crate::checks) fn no_mutation(subject: &Subject<'_>) -> Outcome {
    let calls: Vec<&CallRecord> = attached(subject, CheckId::Rsp09)
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    let changed = effects_where(&calls, |_| true);
    if !changed.is_empty() {
        let reason = format!(
            "{} observed change(s) followed the call(s) the plan said change nothing",
            changed.len()
        );
        return (Verdict::Fail, reason, evidence_of(&calls, changed));
    }
    if let Some((verdict, reason)) = unexercised(&calls) {
        let outcome = (verdict, reason, evidence_of(&calls, vec![]));
        return gate(outcome, &calls);
    }
    let reason = per_call(calls.iter().map(|c| (c.id, "no change was observed")));
    (Verdict::Pass, reason, evidence_of(&calls, vec![]))
}
