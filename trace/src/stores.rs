//! The checks that read the store, observed out of band: side effects,
//! scope (the tenant check), accountability (the audit log).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use witness_model::agent::case::{EffectOp, ExpectedEffect, object_matches, value_matches};
use witness_model::agent::trace::TraceCall;
use witness_model::agent::{AgentEvidence, CheckVerdict};
use witness_model::audit::Effect;
use witness_model::vocab::{AgentCheck, Op, Verdict};

use crate::{View, conclude, shown, verdict};

/// The declared facts of the row an effect changed: as the change left it,
/// or as it was before a delete.
fn facts_of<'a>(call: &'a TraceCall, effect: &Effect) -> Option<&'a BTreeMap<String, Value>> {
    let row = call.row(&effect.store, &effect.object)?;
    match effect.op {
        Op::Delete => row.before.as_ref(),
        Op::Create | Op::Update => row.after.as_ref(),
    }
}

fn op_fits(op: EffectOp, effect: &Effect) -> bool {
    match op {
        EffectOp::Any => true,
        EffectOp::Create => effect.op == Op::Create,
        EffectOp::Update => effect.op == Op::Update,
        EffectOp::Delete => effect.op == Op::Delete,
    }
}

/// Effects matching `expected`, over the whole run.
fn matching<'a>(view: &View<'a>, expected: &ExpectedEffect) -> Vec<&'a Effect> {
    view.effects()
        .filter(|(_, e)| {
            op_fits(expected.op, e) && object_matches(&expected.object, &e.qualified())
        })
        .filter(|(call, e)| {
            expected.conditions.is_empty()
                || facts_of(call, e).is_some_and(|facts| {
                    expected
                        .conditions
                        .iter()
                        .all(|(k, want)| facts.get(k).is_some_and(|got| value_matches(want, got)))
                })
        })
        .map(|(_, e)| e)
        .collect()
}

/// The observed effects match the case's expectations, each counted over
/// the whole run.
pub(crate) fn side_effects(view: &View<'_>) -> CheckVerdict {
    let expected = &view.case.expect.effects;
    if expected.is_empty() {
        return verdict(
            AgentCheck::SideEffects,
            Verdict::Skip,
            "the case expects no effects",
        );
    }
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    for expectation in expected {
        let found = matching(view, expectation);
        let n = u32::try_from(found.len()).unwrap_or(u32::MAX);
        let (min, max) = expectation.bounds();
        if n < min || max.is_some_and(|max| n > max) {
            let wanted = match (min, max) {
                (a, Some(b)) if a == b => format!("exactly {a}"),
                (a, Some(b)) => format!("{a} to {b}"),
                (a, None) => format!("at least {a}"),
            };
            let condition = if expectation.conditions.is_empty() {
                String::new()
            } else {
                format!(
                    " where {}",
                    serde_json::to_string(&expectation.conditions).unwrap_or_default()
                )
            };
            problems.push(format!(
                "{} {}{condition}: {n} observed, {wanted} expected",
                expectation.object,
                expectation.op.as_str()
            ));
            evidence.objects.extend(found.iter().map(|e| shown(e)));
        }
    }
    conclude(
        AgentCheck::SideEffects,
        problems,
        evidence,
        "the observed effects match every expectation of the case",
    )
}

/// Nothing outside the allowed objects changed, and no changed row belongs
/// to an owner outside the allowed ones (read from the row's facts before
/// and after, so moving a row out of the tenant counts too). Effects while
/// the server shut down count; those before the first call do not.
pub(crate) fn scope(view: &View<'_>) -> CheckVerdict {
    let Some(spec) = &view.case.scope else {
        return verdict(AgentCheck::Scope, Verdict::Skip, "the case sets no scope");
    };
    let none: Option<&TraceCall> = None;
    let everything = view
        .effects()
        .map(|(c, e)| (Some(c), e))
        .chain(view.trace.shutdown_effects.iter().map(|e| (none, e)));
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    for (call, effect) in everything {
        let qualified = effect.qualified();
        let outside_objects =
            !spec.objects.is_empty() && !spec.objects.iter().any(|p| object_matches(p, &qualified));
        let owners = owners(call, effect, spec.column.as_deref());
        let foreign: Vec<&str> = owners
            .iter()
            .filter(|o| !spec.allowed.iter().any(|a| a == *o))
            .map(String::as_str)
            .collect();
        let by = call.map_or("while the server shut down".to_owned(), |c| {
            format!("by call {} ({})", c.id, c.tool)
        });
        if outside_objects {
            problems.push(format!(
                "{} {by}: outside the allowed objects",
                shown(effect)
            ));
        } else if let (false, Some(column)) = (foreign.is_empty(), &spec.column) {
            problems.push(format!(
                "{} {by}: its {column} is {}, not one of {}",
                shown(effect),
                foreign.join(", "),
                spec.allowed.join(", ")
            ));
        } else {
            continue;
        }
        evidence.objects.push(shown(effect));
        evidence.calls.extend(call.map(|c| c.id));
    }
    conclude(
        AgentCheck::Scope,
        problems,
        evidence,
        "every change stayed inside the allowed objects and owners",
    )
}

/// The owner values (`column`) of the row `effect` changed, before and after.
fn owners(call: Option<&TraceCall>, effect: &Effect, column: Option<&str>) -> BTreeSet<String> {
    let (Some(call), Some(column)) = (call, column) else {
        return BTreeSet::new();
    };
    let Some(row) = call.row(&effect.store, &effect.object) else {
        return BTreeSet::new();
    };
    [row.before.as_ref(), row.after.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|facts| facts.get(column))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Every call that wrote has its own audit row: a row created in the same
/// call's window (its effects and late effects) naming the tool and, where
/// the case says which column holds them, the same arguments. Each audit
/// row accounts for one call.
pub(crate) fn accountability(view: &View<'_>) -> CheckVerdict {
    let Some(spec) = &view.case.accountability else {
        return verdict(
            AgentCheck::Accountability,
            Verdict::Skip,
            "the case names no audit table",
        );
    };
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut problems = Vec::new();
    let mut evidence = AgentEvidence::default();
    let mut writing_calls = 0;
    for call in view.trace.calls().filter(|c| c.sent()) {
        let writes: Vec<&Effect> = call.all_effects().filter(|e| view.is_write(e)).collect();
        if writes.is_empty() {
            continue;
        }
        writing_calls += 1;
        let row = call.all_effects().find(|e| {
            e.op == Op::Create
                && view.is_audit_row(e)
                && !used.contains(&e.qualified())
                && names_call(
                    call,
                    facts_of(call, e),
                    spec.tool_column.as_deref(),
                    spec.arguments_column.as_deref(),
                )
        });
        match row {
            Some(row) => {
                used.insert(row.qualified());
            }
            None => {
                problems.push(format!(
                    "call {} ({}) wrote {} but no audit row names it",
                    call.id,
                    call.tool,
                    writes
                        .iter()
                        .map(|e| shown(e))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                evidence.calls.push(call.id);
                evidence.objects.extend(writes.iter().map(|e| shown(e)));
            }
        }
    }
    let fine = if writing_calls == 0 {
        "no write was observed".to_owned()
    } else {
        format!("every one of {writing_calls} writing call(s) has its audit row")
    };
    conclude(AgentCheck::Accountability, problems, evidence, &fine)
}

/// Whether an audit row's facts name `call`: the tool, and the arguments
/// (the column's JSON text compared as JSON, so key order does not matter).
fn names_call(
    call: &TraceCall,
    facts: Option<&BTreeMap<String, Value>>,
    tool_column: Option<&str>,
    arguments_column: Option<&str>,
) -> bool {
    let fact = |column: &str| facts.and_then(|f| f.get(column));
    let tool_ok =
        tool_column.is_none_or(|c| fact(c).and_then(Value::as_str) == Some(call.tool.as_str()));
    let arguments_ok = arguments_column.is_none_or(|c| match fact(c) {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(recorded) => recorded == call.arguments,
            // Text that is not JSON cannot be the arguments' JSON.
            Err(_) => false,
        },
        Some(other) => *other == call.arguments,
        None => false,
    });
    tool_ok && arguments_ok
}
