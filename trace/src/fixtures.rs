//! Small builders for cases and traces, shaped like the CRM testbed's.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use witness_model::agent::case::*;
use witness_model::agent::trace::*;
use witness_model::audit::Effect;
use witness_model::vocab::{CallStatus, Op, StopReason, TurnEnd};

pub(crate) fn case(turns: &[(&str, bool)]) -> GoldenCase {
    GoldenCase {
        id: "case".into(),
        title: String::new(),
        budget: 4,
        stores: Vec::new(),
        env: BTreeMap::new(),
        turns: turns
            .iter()
            .map(|(user, consent)| CaseTurn {
                user: (*user).into(),
                consent: *consent,
            })
            .collect(),
        expect: Expectations::default(),
        facts: Vec::new(),
        scope: Some(ScopeSpec {
            objects: vec!["db:contacts/*".into(), "db:audit_log/*".into()],
            column: Some("tenant_id".into()),
            allowed: vec!["acme".into()],
        }),
        accountability: Some(AccountabilitySpec {
            audit: "db:audit_log/*".into(),
            tool_column: Some("tool".into()),
            arguments_column: Some("arguments".into()),
        }),
        claims: None,
        judge: None,
    }
}

pub(crate) fn tools() -> Vec<DeclaredTool> {
    let tool = |name: &str, annotations: Value| DeclaredTool {
        name: name.into(),
        annotations: Some(annotations),
    };
    vec![
        tool("search_contacts", json!({"readOnlyHint": true})),
        tool(
            "create_contact",
            json!({"readOnlyHint": false, "destructiveHint": false}),
        ),
        tool(
            "delete_contact",
            json!({"readOnlyHint": false, "destructiveHint": true}),
        ),
    ]
}

pub(crate) fn effect(object: &str, op: Op) -> Effect {
    Effect {
        store: "db".into(),
        object: object.into(),
        op,
        overwrite: None,
        before: None,
        after: None,
    }
}

fn facts(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// A call with no effects; add them with the helpers below.
pub(crate) fn call(id: u32, tool: &str, arguments: Value, result: &str) -> TraceCall {
    TraceCall {
        id,
        call_id: format!("toolu_{id}"),
        tool: tool.into(),
        arguments,
        malformed: None,
        status: CallStatus::Ok,
        result: Some(result.into()),
        result_bytes: None,
        is_error: false,
        effects: Vec::new(),
        late_effects: Vec::new(),
        background: Vec::new(),
        rows: Vec::new(),
        original_writes: Vec::new(),
    }
}

/// A contact row created (or deleted) by `call` in `tenant`, with its audit
/// row when `audited`.
pub(crate) fn contact_change(
    mut call: TraceCall,
    contact: &str,
    op: Op,
    tenant: &str,
    audit: Option<u32>,
) -> TraceCall {
    let object = format!("contacts/{contact}");
    call.effects.push(effect(&object, op));
    let row = facts(&[("tenant_id", json!(tenant)), ("name", json!("Dana Kim"))]);
    call.rows.push(RowFacts {
        store: "db".into(),
        object,
        before: (op != Op::Create).then(|| row.clone()),
        after: (op != Op::Delete).then_some(row),
    });
    if let Some(n) = audit {
        let object = format!("audit_log/{n}");
        call.effects.push(effect(&object, Op::Create));
        call.rows.push(RowFacts {
            store: "db".into(),
            object,
            before: None,
            after: Some(facts(&[
                ("tenant_id", json!(tenant)),
                ("tool", json!(call.tool)),
                ("arguments", json!(call.arguments.to_string())),
            ])),
        });
    }
    call
}

pub(crate) fn turn(user: &str, calls: Vec<TraceCall>, reply: Option<&str>) -> TraceTurn {
    let steps = calls
        .into_iter()
        .map(|c| TraceStep {
            text: None,
            stop: StopReason::ToolUse,
            calls: vec![c],
        })
        .collect();
    TraceTurn {
        user: Some(user.into()),
        steps,
        end: if reply.is_some() {
            TurnEnd::Answered
        } else {
            TurnEnd::Empty
        },
        reply: reply.map(str::to_owned),
    }
}

pub(crate) fn trace(turns: Vec<TraceTurn>) -> Trace {
    Trace {
        tools: tools(),
        turns,
        ..Trace::default()
    }
}
