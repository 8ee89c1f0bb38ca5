//! Overlapping calls: an effect is charged to each, and a verdict that
//! depends on which call made it is untestable, never guessed.

use serde_json::json;
use witness_model::agent::case::GoldenCase;
use witness_model::vocab::{AgentCheck, Verdict};

use super::*;

fn line(value: serde_json::Value) -> String {
    value.to_string() + "\n"
}

/// Two calls in flight at once (a search and a create); the create's
/// contact and its audit row are seen while both were.
fn overlapping() -> String {
    let header = json!({"type": "header", "schema": "mcp-witness.proxy-trace/v1",
        "generator": "t", "started_unix_ms": 0, "host_transport": "stdio",
        "server": {"command": ["crm"], "transport": "stdio"}, "stores": [], "settle_ms": 0});
    let msg = |seq: u64, from: &str, call: u32, message: serde_json::Value| {
        json!({"type": "message", "seq": seq, "t_us": seq, "from": from, "call": call,
               "bytes": 10, "message": message})
    };
    let effect = |seq: u64, object: &str, row: serde_json::Value| {
        json!({"type": "effect", "seq": seq, "t_us": seq, "phase": "call", "calls": [1, 2],
               "ambiguous": true, "effect": {"store": "db", "object": object, "op": "create"},
               "row": {"store": "db", "object": object, "after": row}})
    };
    let args = json!({"name": "Dana Kim"});
    [
        header,
        msg(
            1,
            "host",
            1,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search_contacts", "arguments": {"query": "Dana"}}}),
        ),
        msg(
            2,
            "host",
            2,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "create_contact", "arguments": args}}),
        ),
        effect(3, "contacts/c_1", json!({"tenant_id": "acme"})),
        effect(
            4,
            "audit_log/1",
            json!({"tool": "create_contact", "arguments": args.to_string()}),
        ),
        msg(
            5,
            "server",
            1,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        ),
        msg(
            6,
            "server",
            2,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
        ),
        json!({"type": "end", "seq": 7, "t_us": 7, "reason": "done", "calls": 2}),
    ]
    .into_iter()
    .map(line)
    .collect()
}

fn case() -> GoldenCase {
    let value = json!({
        "id": "add", "budget": 4, "turn": [{"user": "Add Dana Kim."}],
        "expect": {"effects": [{"object": "db:contacts/*", "op": "create", "count": 1}]},
        "accountability": {"audit": "db:audit_log/*", "tool_column": "tool",
                           "arguments_column": "arguments"}
    });
    match serde_json::from_value(value) {
        Ok(case) => case,
        Err(e) => panic!("the case parses: {e}"),
    }
}

#[test]
fn an_effect_seen_while_calls_overlap_is_charged_to_each_and_never_guessed() {
    let recorded = match read_trace(&overlapping()) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let assembled = match assemble(&recorded, None) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    let calls: Vec<_> = assembled.trace.calls().collect();
    assert_eq!(calls.len(), 2);
    assert!(
        calls.iter().all(|c| c.effects.len() == 2),
        "charged to each"
    );
    assert_eq!(assembled.ambiguous.len(), 1);
    assert_eq!(assembled.ambiguous[0].calls, [1, 2]);
    let judged = judge(&case(), &assembled);
    let verdict = |check| {
        judged
            .verdicts
            .iter()
            .find(|v| v.check == check)
            .map(|v| (v.verdict, v.detail.clone()))
    };
    // Counted once over the run: one contact created, as expected.
    assert_eq!(
        verdict(AgentCheck::SideEffects).map(|v| v.0),
        Some(Verdict::Pass)
    );
    // Charged to each call, the search "wrote" without an audit row of its
    // own; charged to none, nobody wrote: the trace cannot say.
    let accountability = verdict(AgentCheck::Accountability);
    assert_eq!(
        accountability.as_ref().map(|v| v.0),
        Some(Verdict::Untestable)
    );
    assert!(
        accountability.is_some_and(|v| v.1.contains("calls 1 and 2")),
        "{:?}",
        judged.verdicts
    );
}

#[test]
fn a_torn_last_line_is_skipped_and_a_torn_middle_line_is_refused() {
    let text = overlapping();
    let torn = &text[..text.len() - 10];
    let recorded = read_trace(torn).map(|r| (r.torn, r.ended().is_some()));
    assert_eq!(recorded.ok(), Some((true, false)));
    let broken = text.replacen("\"seq\":2", "\"seq\":", 1);
    assert!(read_trace(&broken).is_err());
}

#[test]
fn a_case_reading_row_facts_the_trace_lacks_is_untestable_not_failed() {
    let mut case = case();
    case.facts = vec![witness_model::agent::case::FactsSpec {
        store: "db".into(),
        table: "audit_log".into(),
        columns: vec!["tool".into(), "arguments".into()],
    }];
    let trace = overlapping();
    let input = CheckInput {
        trace: (&trace, "t.jsonl"),
        case: Some(&case),
        conversation: None,
        generator: "t",
    };
    let doc = match document(&input) {
        Ok(doc) => doc,
        Err(e) => panic!("{e}"),
    };
    let accountability = doc
        .verdicts
        .iter()
        .find(|v| v.check == AgentCheck::Accountability)
        .map(|v| (v.verdict, v.detail.clone()));
    assert!(
        accountability.as_ref().is_some_and(
            |(v, d)| *v == Verdict::Untestable && d.contains("db.audit_log: tool, arguments")
        ),
        "{accountability:?}"
    );
}

#[test]
fn a_write_to_an_original_reaches_the_calls_in_flight_and_one_between_calls_a_warning() {
    let mut text = overlapping();
    let end = text.rfind("{\"type\":\"end\"").unwrap_or(text.len());
    let writes = [
        json!({"type": "original-write", "seq": 20, "t_us": 20, "phase": "call",
               "calls": [1, 2], "path": "/home/u/crm.db"}),
        json!({"type": "original-write", "seq": 21, "t_us": 21, "phase": "late",
               "calls": [2], "path": "/home/u/crm.db-journal"}),
    ];
    let inserted: String = writes.into_iter().map(line).collect();
    text.insert_str(end, &inserted);
    let recorded = match read_trace(&text) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let assembled = match assemble(&recorded, None) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    for trace in [
        &assembled.trace,
        &assembled.without_ambiguous,
        &assembled.counted_once,
    ] {
        let calls: Vec<_> = trace.calls().collect();
        assert!(
            calls
                .iter()
                .all(|c| c.original_writes == ["/home/u/crm.db"]),
            "{calls:#?}"
        );
        assert!(
            trace
                .warnings
                .iter()
                .any(|w| w.starts_with("the server wrote /home/u/crm.db-journal outside the calls")),
            "{:?}",
            trace.warnings
        );
    }
}
