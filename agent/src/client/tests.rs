//! The loop against a recording driver and a fake runner: no server, no model.

use std::collections::VecDeque;

use serde_json::{Value, json};
use witness_model::agent::{ModelReply, RequestedCall};
use witness_model::vocab::{CallStatus, DriverKind, Op, StopReason, TurnEnd};

use super::*;
use crate::driver::{Answer, DriverError, RunKey};

/// Replies from a queue, and every request's messages kept.
struct Recorder {
    replies: VecDeque<Result<ModelReply, DriverError>>,
    seen: Vec<Vec<Message>>,
}

impl Recorder {
    fn new(replies: Vec<Result<ModelReply, DriverError>>) -> Self {
        Self {
            replies: replies.into(),
            seen: Vec::new(),
        }
    }
}

impl Driver for Recorder {
    fn kind(&self) -> DriverKind {
        DriverKind::Scripted
    }
    fn begin(&mut self, _key: &RunKey) -> Result<(), DriverError> {
        Ok(())
    }
    fn complete(&mut self, _model: &str, request: &Request<'_>) -> Answer {
        self.seen.push(request.messages.to_vec());
        let reply = self
            .replies
            .pop_front()
            .unwrap_or_else(|| Err(DriverError::Script("out of replies".into())));
        Answer::new(request, reply, None)
    }
}

fn calls(tools: &[(&str, Value)]) -> Result<ModelReply, DriverError> {
    Ok(ModelReply {
        text: None,
        calls: tools
            .iter()
            .map(|(tool, arguments)| RequestedCall {
                id: String::new(),
                tool: (*tool).into(),
                arguments: arguments.clone(),
                malformed: None,
            })
            .collect(),
        stop: StopReason::ToolUse,
        refusal: None,
        usage: None,
    })
}

fn text(text: &str) -> Result<ModelReply, DriverError> {
    Ok(ModelReply {
        text: Some(text.into()),
        calls: Vec::new(),
        stop: StopReason::EndTurn,
        refusal: None,
        usage: None,
    })
}

/// Answers `fail` with a tool error, anything else with its name; every
/// call creates one object; `lost` loses the transport.
#[derive(Default)]
struct Fake {
    made: u32,
}

impl ToolRunner for Fake {
    fn call(&mut self, tool: &str, _arguments: &Value) -> Result<RunCall, String> {
        if tool == "lost" {
            return Err("the transport failed".into());
        }
        self.made += 1;
        let effect = |object: String| Effect {
            store: "db".into(),
            object,
            op: Op::Create,
            overwrite: None,
            before: None,
            after: None,
        };
        Ok(RunCall {
            status: if tool == "fail" {
                CallStatus::ToolError
            } else {
                CallStatus::Ok
            },
            content: format!("ran {tool}"),
            is_error: tool == "fail",
            effects: vec![effect(format!("t/{}", self.made))],
            rows: Vec::new(),
            late: vec![effect(format!("late/{}", self.made))],
            late_rows: Vec::new(),
            background: Vec::new(),
            original_writes: Vec::new(),
        })
    }
}

fn run(driver: &mut Recorder, turns: &[&str], ceiling: u32) -> Transcript {
    let conv = Conversation {
        driver,
        model: "m",
        system: "s",
        tools: &[],
        max_tokens: 100,
        ceiling,
    };
    let turns: Vec<String> = turns.iter().map(|t| (*t).to_owned()).collect();
    converse(conv, &turns, &mut Fake::default())
}

#[test]
fn every_result_of_a_step_goes_back_in_one_message_with_errors_marked() {
    let mut driver = Recorder::new(vec![
        calls(&[("ok", json!({})), ("fail", json!({"x": 1}))]),
        text("done"),
    ]);
    let out = run(&mut driver, &["go"], 8);
    assert_eq!(out.turns[0].end, TurnEnd::Answered);
    assert_eq!(out.turns[0].reply.as_deref(), Some("done"));
    let second = &driver.seen[1];
    assert_eq!(second.len(), 3, "user, assistant, one results message");
    let Message::Results { results } = &second[2] else {
        panic!("results last: {second:?}");
    };
    let marked: Vec<(&str, bool)> = results
        .iter()
        .map(|r| (r.call_id.as_str(), r.is_error))
        .collect();
    assert_eq!(marked, [("call_1", false), ("call_2", true)]);
    let Message::Assistant { calls, .. } = &second[1] else {
        panic!("assistant second");
    };
    assert_eq!(
        calls[1].id, "call_2",
        "ids are given to calls that had none"
    );
    let trace_calls: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(trace_calls[1].status, CallStatus::ToolError);
    assert_eq!(out.exchanges.len(), 2);
}

#[test]
fn late_effects_are_charged_to_the_call_before_or_to_startup() {
    let mut driver = Recorder::new(vec![
        calls(&[("a", json!({})), ("b", json!({}))]),
        text("ok"),
    ]);
    let out = run(&mut driver, &["go"], 8);
    let made: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(out.startup.len(), 1, "before the first call");
    assert_eq!(made[0].late_effects[0].object, "late/2");
    assert!(
        made[1].late_effects.is_empty(),
        "the runner charges the last call at the end"
    );
}

#[test]
fn a_refusal_ends_the_turn_and_the_next_turn_still_runs() {
    let refusal = Ok(ModelReply {
        text: None,
        calls: Vec::new(),
        stop: StopReason::Refusal,
        refusal: Some("I can't do that.".into()),
        usage: None,
    });
    let mut driver = Recorder::new(vec![refusal, text("fine")]);
    let out = run(&mut driver, &["first", "second"], 8);
    assert_eq!(out.turns[0].end, TurnEnd::Refused);
    assert_eq!(out.turns[1].end, TurnEnd::Answered);
    assert!(out.harness_error.is_none());
}

#[test]
fn the_ceiling_lets_the_budget_be_exceeded_then_stops_the_run() {
    let endless: Vec<_> = (0..10).map(|_| calls(&[("ok", json!({}))])).collect();
    let mut driver = Recorder::new(endless);
    let out = run(&mut driver, &["go", "and then"], 3);
    assert_eq!(out.turns[0].end, TurnEnd::Ceiling);
    assert_eq!(out.turns[1].end, TurnEnd::NotRun);
    let made: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(made.len(), 4, "three run, one recorded past the ceiling");
    assert!(made[..3].iter().all(|c| c.status == CallStatus::Ok));
    assert_eq!(made[3].status, CallStatus::NotSent);
    assert_eq!(driver.seen.len(), 4);
}

#[test]
fn calls_past_the_ceiling_within_one_reply_are_answered_but_not_run() {
    let mut driver = Recorder::new(vec![
        calls(&[("ok", json!({})), ("ok", json!({})), ("ok", json!({}))]),
        text("stopping"),
    ]);
    let out = run(&mut driver, &["go"], 2);
    let made: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(made[2].status, CallStatus::NotSent);
    assert!(
        made[2]
            .result
            .as_deref()
            .is_some_and(|r| r.contains("limit of 2"))
    );
    assert_eq!(
        out.turns[0].end,
        TurnEnd::Answered,
        "the model may still answer"
    );
}

#[test]
fn a_malformed_call_is_not_sent_and_the_model_is_told() {
    let malformed = Ok(ModelReply {
        text: None,
        calls: vec![RequestedCall {
            id: "x".into(),
            tool: "ok".into(),
            arguments: Value::Null,
            malformed: Some("not JSON: {oops".into()),
        }],
        stop: StopReason::ToolUse,
        refusal: None,
        usage: None,
    });
    let mut driver = Recorder::new(vec![malformed, text("sorry")]);
    let out = run(&mut driver, &["go"], 8);
    let made: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(made[0].status, CallStatus::NotSent);
    assert_eq!(made[0].malformed.as_deref(), Some("not JSON: {oops"));
    let Message::Results { results } = &driver.seen[1][2] else {
        panic!("results");
    };
    assert!(results[0].is_error && results[0].content.contains("not a JSON object"));
    assert_eq!(out.turns[0].end, TurnEnd::Answered);
}

#[test]
fn an_endpoint_or_transport_failure_stops_the_run_as_untestable() {
    let mut driver = Recorder::new(vec![Err(DriverError::Http {
        status: 500,
        detail: "boom".into(),
    })]);
    let out = run(&mut driver, &["go", "again"], 8);
    assert_eq!(out.turns[0].end, TurnEnd::Error);
    assert_eq!(out.turns[1].end, TurnEnd::NotRun);
    assert_eq!(
        out.harness_error.as_deref(),
        Some("the model endpoint failed: HTTP 500: boom")
    );
    let mut driver = Recorder::new(vec![calls(&[("lost", json!({}))])]);
    let out = run(&mut driver, &["go"], 8);
    assert_eq!(out.harness_error.as_deref(), Some("the transport failed"));
    let made: Vec<&TraceCall> = out.turns[0].calls().collect();
    assert_eq!(made[0].status, CallStatus::TransportError);
}

#[test]
fn an_empty_or_truncated_reply_is_no_answer() {
    let empty = Ok(ModelReply {
        text: Some("  ".into()),
        calls: Vec::new(),
        stop: StopReason::EndTurn,
        refusal: None,
        usage: None,
    });
    let cut = Ok(ModelReply {
        text: None,
        calls: Vec::new(),
        stop: StopReason::MaxTokens,
        refusal: None,
        usage: None,
    });
    let mut driver = Recorder::new(vec![empty, cut]);
    let out = run(&mut driver, &["one", "two"], 8);
    assert_eq!(out.turns[0].end, TurnEnd::Empty);
    assert_eq!(out.turns[1].end, TurnEnd::Truncated);
}
