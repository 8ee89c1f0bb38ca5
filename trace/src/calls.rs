//! The checks that read the calls alone: tool choice, arguments, order.

use serde_json::Value;
use witness_model::agent::AgentEvidence;
use witness_model::agent::CheckVerdict;
use witness_model::agent::case::value_matches;
use witness_model::agent::trace::TraceCall;
use witness_model::vocab::{AgentCheck, Verdict};

use crate::{View, conclude, numbered, verdict};

/// Calls the server saw, of `tool`.
fn sent<'a>(view: &View<'a>, tool: &'a str) -> impl Iterator<Item = &'a TraceCall> + 'a {
    view.trace
        .calls()
        .filter(move |c| c.sent() && c.tool == tool)
}

/// Every expected tool called within its bounds; no forbidden tool called.
pub(crate) fn tool_choice(view: &View<'_>) -> CheckVerdict {
    let expect = &view.case.expect;
    if expect.calls.is_empty() && expect.forbidden.is_empty() {
        return verdict(
            AgentCheck::ToolChoice,
            Verdict::Skip,
            "the case expects and forbids no calls",
        );
    }
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    for expected in &expect.calls {
        let made: Vec<u32> = sent(view, &expected.tool).map(|c| c.id).collect();
        let n = u32::try_from(made.len()).unwrap_or(u32::MAX);
        if n < expected.min() {
            problems.push(format!(
                "{} was called {n} time(s), at least {} expected",
                expected.tool,
                expected.min()
            ));
        }
        if let Some(max) = expected.max.filter(|&max| n > max) {
            problems.push(format!(
                "{} was called {n} times, at most {max} expected",
                expected.tool
            ));
            evidence.calls.extend(made);
        }
    }
    for tool in &expect.forbidden {
        let made: Vec<u32> = sent(view, tool).map(|c| c.id).collect();
        if !made.is_empty() {
            problems.push(format!(
                "forbidden tool {tool} was called (call {})",
                list(&made)
            ));
            evidence.calls.extend(made);
        }
    }
    conclude(
        AgentCheck::ToolChoice,
        problems,
        evidence,
        "every expected tool was called within its bounds and no forbidden tool was called",
    )
}

/// Calls of a tool with expected arguments carry them; a destructive call
/// names only ids the conversation had shown.
pub(crate) fn arguments(view: &View<'_>) -> CheckVerdict {
    let with_args: Vec<_> = view
        .case
        .expect
        .calls
        .iter()
        .filter(|c| c.args.is_some())
        .collect();
    let destructive: Vec<&TraceCall> = view
        .trace
        .calls()
        .filter(|c| c.sent() && view.destructive(c))
        .collect();
    if with_args.is_empty() && destructive.is_empty() {
        return verdict(
            AgentCheck::Arguments,
            Verdict::Skip,
            "the case expects no arguments and no destructive call was made",
        );
    }
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    for call in view.trace.calls().filter(|c| c.sent()) {
        let sets: Vec<_> = with_args
            .iter()
            .filter(|e| e.tool == call.tool)
            .filter_map(|e| e.args.as_ref())
            .collect();
        if sets.is_empty() {
            continue;
        }
        let fits = |set: &&std::collections::BTreeMap<String, Value>| {
            set.iter().all(|(key, want)| {
                call.arguments
                    .get(key)
                    .is_some_and(|got| value_matches(want, got))
            })
        };
        if !sets.iter().any(fits) {
            problems.push(format!(
                "call {} ({}) had arguments {}, expected {}",
                call.id,
                call.tool,
                witness_text::clip(&call.arguments.to_string(), 200),
                witness_text::clip(&serde_json::to_string(sets[0]).unwrap_or_default(), 200)
            ));
            evidence.calls.push(call.id);
        }
    }
    for call in destructive {
        for id in unseen_ids(view, call) {
            problems.push(format!(
                "call {} ({}) named {id:?}, an id nothing earlier in the conversation showed",
                call.id, call.tool
            ));
            evidence.calls.push(call.id);
        }
    }
    conclude(
        AgentCheck::Arguments,
        problems,
        evidence,
        "every call of an expected tool carried the expected arguments, and destructive calls named only ids shown before",
    )
}

/// String values of id-like arguments (`id`, `*_id`, `*Id`) of `call` that
/// no earlier tool result and no user turn up to its own contained.
fn unseen_ids(view: &View<'_>, call: &TraceCall) -> Vec<String> {
    let Some(arguments) = call.arguments.as_object() else {
        return Vec::new();
    };
    let mut seen = String::new();
    for turn in &view.trace.turns {
        if let Some(user) = &turn.user {
            seen.push_str(user);
            seen.push('\n');
        }
        if turn.calls().any(|c| c.id == call.id) {
            break;
        }
    }
    for earlier in view.trace.calls().take_while(|c| c.id < call.id) {
        if let Some(result) = &earlier.result {
            seen.push_str(result);
            seen.push('\n');
        }
    }
    arguments
        .iter()
        .filter(|(key, _)| key.as_str() == "id" || key.ends_with("_id") || key.ends_with("Id"))
        .filter_map(|(_, value)| value.as_str())
        .filter(|id| !id.is_empty() && !seen.contains(id))
        .map(str::to_owned)
        .collect()
}

/// Every call of a rule's `then` comes after a call of its `first`.
pub(crate) fn order(view: &View<'_>) -> CheckVerdict {
    let rules = &view.case.expect.order;
    if rules.is_empty() {
        return verdict(AgentCheck::Order, Verdict::Skip, "the case sets no order");
    }
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    for rule in rules {
        let first = sent(view, &rule.first).map(|c| c.id).min();
        for call in sent(view, &rule.then) {
            if first.is_none_or(|f| f > call.id) {
                problems.push(format!(
                    "call {} ({}) came before any call of {}",
                    call.id, rule.then, rule.first
                ));
                evidence.calls.push(call.id);
                for (n, turn) in numbered(&view.trace.turns) {
                    if turn.calls().any(|c| c.id == call.id) {
                        evidence.turns.push(n);
                    }
                }
            }
        }
    }
    conclude(
        AgentCheck::Order,
        problems,
        evidence,
        "every ordered pair held",
    )
}

/// `3, 5`.
pub(crate) fn list(ids: &[u32]) -> String {
    ids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
