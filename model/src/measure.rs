//! The one rule for comparing two documents by what they measure.
//!
//! Audits run on an injected clock and write machine paths as placeholders,
//! so two runs of one target write the same bytes — except where timing is
//! the nature of the value. Those values are left out of every comparison,
//! and only those (docs/sweeps.md, "One dataset, however it was run"):
//!
//! - every field named `volatile`, at any depth (a result's attempts and
//!   elapsed time, an audit's jail path, elapsed time, replaced clock values
//!   and latencies);
//! - `transcripts[].exit`, how each server process ended: the engine gives
//!   a server a grace period to leave after its stdin closes and then
//!   signals it, so a server that takes about that long ends `exit status:
//!   0` in one run and `signal: 15` in the next;
//! - `transcripts[].frames[].t_us`, when each frame was recorded: the
//!   threads reading a server's output step the injected clock as often as
//!   the output happened to arrive in pieces.
//!
//! The rule is applied to the JSON a document serializes to, so it holds
//! the same for a typed document (`sweep merge`) and for a file read as a
//! plain value (the tests that hold a run to the committed results), and a
//! field added to a document later is compared unless this rule names it.

use serde::Serialize;
use serde_json::Value;

/// Removes from `value`, in place, what the rule leaves out of comparisons.
pub fn comparable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("volatile");
            if let Some(Value::Array(processes)) = map.get_mut("transcripts") {
                for process in processes.iter_mut().filter_map(Value::as_object_mut) {
                    process.remove("exit");
                    if let Some(Value::Array(frames)) = process.get_mut("frames") {
                        for frame in frames.iter_mut().filter_map(Value::as_object_mut) {
                            frame.remove("t_us");
                        }
                    }
                }
            }
            map.values_mut().for_each(comparable);
        }
        Value::Array(items) => items.iter_mut().for_each(comparable),
        _ => {}
    }
}

/// `value` as JSON, without what the rule leaves out; `None` when it does
/// not serialize (a map with keys that are not strings: no document here).
pub fn measured<T: Serialize>(value: &T) -> Option<Value> {
    let mut value = serde_json::to_value(value).ok()?;
    comparable(&mut value);
    Some(value)
}

/// Whether two documents measure the same: equal but for what the rule
/// leaves out. Documents that cannot be serialized are never the same.
pub fn same_measure<T: Serialize>(a: &T, b: &T) -> bool {
    match (measured(a), measured(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn audit() -> Value {
        json!({
            "schema": "mcp-witness.audit/v1",
            "calls": [{"tool": "read", "volatile": {"ms": 3}}],
            "transcripts": [{
                "role": "session",
                "exit": "exit status: 0",
                "frames": [{"seq": 1, "dir": "out", "t_us": 4, "text": "{}"}],
                "stderr_bytes": 0
            }],
            "volatile": {"elapsed_ms": 12}
        })
    }

    #[test]
    fn timing_fields_are_left_out_and_nothing_else() {
        let a = audit();
        let mut b = audit();
        b["transcripts"][0]["exit"] = json!("signal: 15");
        b["transcripts"][0]["frames"][0]["t_us"] = json!(5);
        b["volatile"]["elapsed_ms"] = json!(99);
        b["calls"][0]["volatile"]["ms"] = json!(7);
        assert!(same_measure(&a, &b));

        // A field of the same name elsewhere is what it measures.
        for (pointer, changed) in [
            ("/transcripts/0/role", json!("discover")),
            ("/transcripts/0/frames/0/seq", json!(2)),
            ("/transcripts/0/frames/0/text", json!("[]")),
            ("/transcripts/0/stderr_bytes", json!(1)),
            ("/calls/0/tool", json!("write")),
        ] {
            let mut c = audit();
            *c.pointer_mut(pointer).expect("the field is there") = changed;
            assert!(!same_measure(&a, &c), "{pointer} is measured");
        }
        let mut exit_elsewhere = audit();
        exit_elsewhere["calls"][0]["exit"] = json!("exit status: 1");
        let mut t_us_elsewhere = audit();
        t_us_elsewhere["calls"][0]["t_us"] = json!(1);
        assert!(!same_measure(&a, &exit_elsewhere));
        assert!(!same_measure(&a, &t_us_elsewhere));
    }
}
