//! How a call ended: RSP-01 (`succeeds`), RSP-02 (`is_error`), RSP-03
//! (`error_code`), and RSP-11 (an isError result and a JSON-RPC error told
//! apart) on every tool.
//!
//! The two failure channels mean different things: a result with
//! `isError: true` is the tool's own failure, reported to the model; a
//! JSON-RPC error is the protocol's (unknown tool, malformed request). A
//! check that asks for one is never satisfied by the other.

use serde_json::Value;
use witness_model::audit::{CallRecord, CallStatus, CheckId, Expectation, Verdict};

use super::super::{Outcome, Subject, evidence_of, unexercised};
use super::{ended, gate, judge_each, per_call, unreached};

/// RSP-01: the call returned a result without isError.
pub(in crate::checks) fn succeeds(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp01, |call, _| {
        if let Some(reason) = unreached(call) {
            return (Verdict::Untestable, reason);
        }
        match call.outcome.status {
            CallStatus::Ok => (Verdict::Pass, "returned a result without isError".into()),
            _ => (Verdict::Fail, format!("returned {}", ended(call))),
        }
    })
}

/// RSP-02: the call returned a result with isError: true.
pub(in crate::checks) fn is_error(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp02, |call, _| {
        if let Some(reason) = unreached(call) {
            return (Verdict::Untestable, reason);
        }
        match call.outcome.status {
            CallStatus::ToolError => (Verdict::Pass, "returned isError: true".into()),
            CallStatus::InBandError => (
                Verdict::Fail,
                "reported its failure in the content without isError: true, so a client cannot tell it failed"
                    .into(),
            ),
            CallStatus::RpcError => (
                Verdict::Fail,
                format!(
                    "returned {} instead of a result with isError: true",
                    ended(call)
                ),
            ),
            _ => (
                Verdict::Fail,
                "succeeded; a result with isError: true was expected".into(),
            ),
        }
    })
}

/// RSP-03: the call returned a JSON-RPC error with the expected code.
pub(in crate::checks) fn error_code(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp03, |call, expect| {
        let Expectation::ErrorCode { code: wanted } = expect else {
            return (Verdict::Skip, "not an error_code check".into());
        };
        if let Some(reason) = unreached(call) {
            return (Verdict::Untestable, reason);
        }
        match (call.outcome.status, call.outcome.code) {
            (CallStatus::RpcError, Some(code)) if code == *wanted => (
                Verdict::Pass,
                format!("returned a JSON-RPC error with code {code}"),
            ),
            (CallStatus::RpcError, _) => (
                Verdict::Fail,
                format!("returned {}; code {wanted} was expected", ended(call)),
            ),
            (CallStatus::ToolError, _) => (
                Verdict::Fail,
                format!(
                    "returned a result with isError: true, not a JSON-RPC error (code {wanted} was expected)"
                ),
            ),
            _ => (
                Verdict::Fail,
                format!("succeeded; a JSON-RPC error with code {wanted} was expected"),
            ),
        }
    })
}

/// What is wrong with how a result reports failure, if anything: an
/// `isError` that is not a boolean leaves a client unable to tell whether
/// the call failed; an error result with no content tells the model nothing.
fn ambiguous(response: &Value) -> Option<String> {
    let flag = response.get("isError")?;
    match flag {
        Value::Bool(true) => {
            let content = response.get("content").and_then(Value::as_array);
            content
                .is_none_or(Vec::is_empty)
                .then(|| "a result with isError: true carries no content".to_owned())
        }
        Value::Bool(false) => None,
        other => Some(format!(
            "isError is {}, not a boolean: a client cannot tell whether the call failed",
            json_kind(other)
        )),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// RSP-11: every failed call came back on one recognisable channel.
pub(in crate::checks) fn one_channel(subject: &Subject<'_>) -> Outcome {
    let calls = subject.calls.as_slice();
    let bad: Vec<(&CallRecord, String)> = calls
        .iter()
        .filter_map(|c| c.response.as_ref().and_then(ambiguous).map(|r| (*c, r)))
        .collect();
    if !bad.is_empty() {
        let deciding: Vec<&CallRecord> = bad.iter().map(|(c, _)| *c).collect();
        let reason = per_call(bad.iter().map(|(c, r)| (c.id, r.as_str())));
        return gate(
            (Verdict::Fail, reason, evidence_of(&deciding, vec![])),
            &deciding,
        );
    }
    let tool_errors = count(calls, CallStatus::ToolError);
    let rpc: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| c.outcome.status == CallStatus::RpcError)
        .collect();
    if tool_errors + rpc.len() == 0 {
        if let Some((verdict, reason)) = unexercised(calls) {
            return (verdict, reason, evidence_of(calls, vec![]));
        }
        return (
            Verdict::Skip,
            "no call failed: there was no error to tell apart".into(),
            evidence_of(calls, vec![]),
        );
    }
    let mut codes: Vec<String> = rpc
        .iter()
        .filter_map(|c| c.outcome.code.map(|n| n.to_string()))
        .collect();
    codes.sort();
    codes.dedup();
    let failed: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| {
            matches!(
                c.outcome.status,
                CallStatus::ToolError | CallStatus::RpcError
            )
        })
        .collect();
    (
        Verdict::Pass,
        format!(
            "{} failed call(s), each on one channel: {tool_errors} result(s) with isError: true, {} JSON-RPC error(s){}",
            failed.len(),
            rpc.len(),
            if codes.is_empty() {
                String::new()
            } else {
                format!(" (code {})", codes.join(", "))
            }
        ),
        evidence_of(&failed, vec![]),
    )
}

fn count(calls: &[&CallRecord], status: CallStatus) -> usize {
    calls.iter().filter(|c| c.outcome.status == status).count()
}
