//! A recorded trace back into the trace agent runs are judged from.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use witness_model::agent::trace::{DeclaredTool, Trace, TraceCall, TraceStep, TraceTurn};
use witness_model::proxy::{
    AmbiguousEffects, ConversationLine, EffectEntry, EffectPhase, MessageEntry, Party, Role,
    TraceEntry,
};
use witness_model::vocab::{CallStatus, StopReason, TurnEnd};

use super::read::{CheckError, Recorded};
use crate::message::{self, IdKey, Kind};

/// The trace three ways, for the judge (see `check`'s module doc).
#[derive(Clone, Debug)]
pub struct Assembled {
    /// Ambiguous effects charged to every overlapping call.
    pub trace: Trace,
    /// Ambiguous effects charged to none.
    pub without_ambiguous: Trace,
    /// Ambiguous effects counted once (on the first overlapping call).
    pub counted_once: Trace,
    pub ambiguous: Vec<AmbiguousEffects>,
    pub turns: u32,
}

/// How the three traces charge an ambiguous effect.
#[derive(Clone, Copy, PartialEq)]
enum Charge {
    Each,
    None,
    Once,
}

/// One call as the messages show it.
struct Seen {
    call: TraceCall,
    answered: bool,
}

/// Assembles `recorded`, with `conversation` when the host's was given.
pub fn assemble(
    recorded: &Recorded,
    conversation: Option<&[ConversationLine]>,
) -> Result<Assembled, CheckError> {
    let (tools, calls) = calls_and_tools(&recorded.entries);
    let effects: Vec<&EffectEntry> = recorded
        .entries
        .iter()
        .filter_map(|e| match e {
            TraceEntry::Effect(effect) => Some(effect),
            _ => None,
        })
        .collect();
    let plan = match conversation {
        Some(lines) => plan_turns(lines, &calls)?,
        None => vec![TurnPlan {
            user: None,
            steps: vec![(None, calls.iter().map(|c| c.call.id).collect())],
            end: TurnEnd::Answered,
            reply: None,
        }],
    };
    let build = |charge: Charge| {
        let mut trace = Trace {
            tools: tools.clone(),
            ..Trace::default()
        };
        let mut by_id: BTreeMap<u32, TraceCall> =
            calls.iter().map(|c| (c.call.id, c.call.clone())).collect();
        charge_effects(&effects, charge, &mut trace, &mut by_id);
        let outside_calls = charge_original_writes(&recorded.entries, &mut by_id);
        trace.turns = shape(&plan, &mut by_id);
        trace.harness_error = harness_error(recorded, &calls);
        trace.warnings = warnings(recorded);
        trace.warnings.extend(outside_calls);
        trace
    };
    Ok(Assembled {
        trace: build(Charge::Each),
        without_ambiguous: build(Charge::None),
        counted_once: build(Charge::Once),
        ambiguous: ambiguous_groups(&effects),
        turns: u32::try_from(plan.len()).unwrap_or(u32::MAX),
    })
}

/// The tools listed and the calls made, from the messages.
fn calls_and_tools(entries: &[TraceEntry]) -> (Vec<DeclaredTool>, Vec<Seen>) {
    let mut tools: Vec<DeclaredTool> = Vec::new();
    let mut lists: BTreeSet<(Option<u32>, IdKey)> = BTreeSet::new();
    let mut calls: BTreeMap<u32, Seen> = BTreeMap::new();
    for entry in entries {
        let TraceEntry::Message(m) = entry else {
            continue;
        };
        let Some(value) = &m.message else {
            continue;
        };
        let bytes = value.to_string();
        let read = message::read(bytes.as_bytes());
        match (&m.from, &read.kind) {
            (Party::Host, Kind::Request { id, method }) => {
                if method == "tools/list" {
                    lists.insert((m.session, id.clone()));
                }
                if let Some(n) = m.call {
                    calls.insert(n, requested(n, id, read.params()));
                }
            }
            (Party::Server, Kind::Response { id }) => {
                if lists.remove(&(m.session, id.clone())) {
                    listed(value, &mut tools);
                }
                if let Some(seen) = m.call.and_then(|n| calls.get_mut(&n)) {
                    answered(seen, m, value);
                }
            }
            _ => {}
        }
    }
    (tools, calls.into_values().collect())
}

fn requested(n: u32, id: &str, params: Option<&Value>) -> Seen {
    let param = |key: &str| params.and_then(|p| p.get(key));
    Seen {
        call: TraceCall {
            id: n,
            call_id: id.trim_matches('"').to_owned(),
            tool: param("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: param("arguments")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
            malformed: None,
            status: CallStatus::TransportError,
            result: None,
            result_bytes: None,
            is_error: true,
            effects: Vec::new(),
            late_effects: Vec::new(),
            background: Vec::new(),
            rows: Vec::new(),
            original_writes: Vec::new(),
        },
        answered: false,
    }
}

fn answered(seen: &mut Seen, entry: &MessageEntry, value: &Value) {
    seen.answered = true;
    let call = &mut seen.call;
    if let Some(result) = value.get("result") {
        call.status = CallStatus::of_result(result);
        call.result = Some(witness_trace::content_of(result));
    } else {
        let error = value.get("error");
        let code = error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let text = error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        call.status = CallStatus::RpcError;
        call.result = Some(format!("JSON-RPC error {code}: {text}"));
    }
    call.is_error = call.status != CallStatus::Ok;
    let kept = call.result.as_ref().map_or(0, String::len) as u64;
    call.result_bytes = (entry.bytes > kept && entry.message.is_none()).then_some(entry.bytes);
}

/// Every tool of one `tools/list` page, once each.
fn listed(response: &Value, tools: &mut Vec<DeclaredTool>) {
    let page = response
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for tool in page {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if tools.iter().any(|t| t.name == name) {
            continue;
        }
        tools.push(DeclaredTool {
            name: name.to_owned(),
            annotations: tool.get("annotations").cloned(),
        });
    }
}

/// Puts every effect where `charge` says.
fn charge_effects(
    effects: &[&EffectEntry],
    charge: Charge,
    trace: &mut Trace,
    calls: &mut BTreeMap<u32, TraceCall>,
) {
    for entry in effects {
        let targets: Vec<u32> = match (charge, entry.ambiguous) {
            (Charge::None, true) => continue,
            (Charge::Once, true) => entry.calls.iter().min().copied().into_iter().collect(),
            _ => entry.calls.clone(),
        };
        match entry.phase {
            EffectPhase::Startup => trace.startup_effects.push(entry.effect.clone()),
            EffectPhase::Shutdown => trace.shutdown_effects.push(entry.effect.clone()),
            EffectPhase::Call | EffectPhase::Late => {
                for n in targets {
                    let Some(call) = calls.get_mut(&n) else {
                        continue;
                    };
                    let list = if entry.phase == EffectPhase::Call {
                        &mut call.effects
                    } else {
                        &mut call.late_effects
                    };
                    list.push(entry.effect.clone());
                    if let Some(row) = &entry.row {
                        call.rows.push(row.clone());
                    }
                }
            }
        }
    }
}

/// Writes attempted on a store's original: those during calls to each call
/// in flight (as the proxy saw them, the same under every charge: an
/// attempt is evidence of every call that could have made it), the others
/// a warning of the run, as agent runs make them (given back).
fn charge_original_writes(
    entries: &[TraceEntry],
    calls: &mut BTreeMap<u32, TraceCall>,
) -> Vec<String> {
    let mut outside = Vec::new();
    for entry in entries {
        let TraceEntry::OriginalWrite(write) = entry else {
            continue;
        };
        let mut charged = false;
        if write.phase == EffectPhase::Call {
            for n in &write.calls {
                if let Some(call) = calls.get_mut(n) {
                    call.original_writes.push(write.path.clone());
                    charged = true;
                }
            }
        }
        if !charged {
            outside.push(format!(
                "the server wrote {} outside the calls, where a store's original is: the sandbox kept the original out of its reach, and the write landed in the decoy in its place",
                write.path
            ));
        }
    }
    outside
}

/// Ambiguous effects grouped by the calls they overlapped.
fn ambiguous_groups(effects: &[&EffectEntry]) -> Vec<AmbiguousEffects> {
    let mut groups: Vec<AmbiguousEffects> = Vec::new();
    for entry in effects.iter().filter(|e| e.ambiguous) {
        let shown = format!("{} {}", entry.effect.qualified(), entry.effect.op);
        match groups.iter_mut().find(|g| g.calls == entry.calls) {
            Some(group) => group.effects.push(shown),
            None => groups.push(AmbiguousEffects {
                calls: entry.calls.clone(),
                effects: vec![shown],
            }),
        }
    }
    groups
}

/// Why the trace cannot conclude: a call never answered (the host or the
/// proxy stopped mid-call), or stores that could not be observed.
fn harness_error(recorded: &Recorded, calls: &[Seen]) -> Option<String> {
    let blind = recorded.entries.iter().find_map(|e| match e {
        TraceEntry::Warning(w) if w.detail.contains("only messages are recorded") => {
            Some(w.detail.clone())
        }
        _ => None,
    });
    if let Some(detail) = blind {
        return Some(detail);
    }
    let unanswered: Vec<String> = calls
        .iter()
        .filter(|c| !c.answered)
        .map(|c| format!("{} ({})", c.call.id, c.call.tool))
        .collect();
    if unanswered.is_empty() {
        return None;
    }
    let why = recorded.ended().map_or(
        "the trace has no end line: the proxy was killed, or is still running".to_owned(),
        |r| format!("the proxy stopped: {r}"),
    );
    Some(format!(
        "call {} never answered; {why}",
        unanswered.join(", ")
    ))
}

fn warnings(recorded: &Recorded) -> Vec<String> {
    let mut out: Vec<String> = recorded
        .entries
        .iter()
        .filter_map(|e| match e {
            TraceEntry::Warning(w) => Some(w.detail.clone()),
            _ => None,
        })
        .collect();
    if recorded.torn {
        out.push(
            "the trace's last line was cut short (a crash while writing it) and was skipped".into(),
        );
    }
    out
}

/// One turn before its calls are filled in.
struct TurnPlan {
    user: Option<String>,
    /// Each step's text and the ids of its calls.
    steps: Vec<(Option<String>, Vec<u32>)>,
    end: TurnEnd,
    reply: Option<String>,
}

/// Turns from the conversation, its calls matched in order to the trace's.
fn plan_turns(lines: &[ConversationLine], calls: &[Seen]) -> Result<Vec<TurnPlan>, CheckError> {
    let mut turns: Vec<TurnPlan> = Vec::new();
    let mut next = calls.iter();
    for (i, line) in lines.iter().enumerate() {
        if line.role == Role::User {
            turns.push(TurnPlan {
                user: Some(line.text.clone().unwrap_or_default()),
                steps: Vec::new(),
                end: TurnEnd::Empty,
                reply: None,
            });
            continue;
        }
        let Some(turn) = turns.last_mut() else {
            return Err(CheckError::Misaligned(format!(
                "conversation line {}: an assistant reply before any user turn",
                i + 1
            )));
        };
        if line.calls.is_empty() {
            turn.reply = line.text.clone().filter(|t| !t.trim().is_empty());
            turn.end = line.end.unwrap_or(if turn.reply.is_some() {
                TurnEnd::Answered
            } else {
                TurnEnd::Empty
            });
            continue;
        }
        let mut ids = Vec::new();
        for listed in &line.calls {
            let Some(seen) = next.next() else {
                return Err(CheckError::Misaligned(format!(
                    "the conversation shows a call of {} that the trace does not have",
                    witness_text::clip(&listed.tool, 80)
                )));
            };
            let same_args = listed
                .arguments
                .as_ref()
                .is_none_or(|a| *a == seen.call.arguments);
            if listed.tool != seen.call.tool || !same_args {
                return Err(CheckError::Misaligned(format!(
                    "call {} of the trace is {} {}, the conversation shows {} there",
                    seen.call.id,
                    witness_text::clip(&seen.call.tool, 80),
                    witness_text::clip(&seen.call.arguments.to_string(), 120),
                    witness_text::clip(&listed.tool, 80)
                )));
            }
            ids.push(seen.call.id);
        }
        turn.steps.push((line.text.clone(), ids));
        if let Some(end) = line.end {
            turn.end = end;
        }
    }
    let left = next.count();
    if left > 0 {
        return Err(CheckError::Misaligned(format!(
            "the trace has {left} call(s) after the last one the conversation shows"
        )));
    }
    Ok(turns)
}

/// The planned turns with their calls.
fn shape(plan: &[TurnPlan], calls: &mut BTreeMap<u32, TraceCall>) -> Vec<TraceTurn> {
    plan.iter()
        .map(|turn| TraceTurn {
            user: turn.user.clone(),
            steps: turn
                .steps
                .iter()
                .filter(|(text, ids)| text.is_some() || !ids.is_empty())
                .map(|(text, ids)| TraceStep {
                    text: text.clone(),
                    stop: StopReason::ToolUse,
                    calls: ids.iter().filter_map(|id| calls.remove(id)).collect(),
                })
                .collect(),
            end: turn.end,
            reply: turn.reply.clone(),
        })
        .collect()
}
