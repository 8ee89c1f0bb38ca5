//! The client loop, the way any MCP host works.
//!
//! For each user turn: send the conversation; run every tool call the model
//! asks for; send all their results back in one message, errors marked as
//! errors; repeat until the model answers in text. A refusal ends the turn.
//! A malformed call is not sent: the model is told, in its result, as a host
//! would. The loop's ceiling sits above the case's budget, so a client
//! that goes over budget is seen doing it; at the ceiling the model gets one
//! more chance to answer, and calls past it are recorded, not run, and end
//! the run.
//!
//! Tools run through a [`ToolRunner`], so the loop can be tested without a
//! server, and the same loop drives a jailed one ([`crate::runner`]).

use serde_json::Value;
use witness_model::agent::trace::{RowFacts, TraceCall, TraceStep, TraceTurn};
use witness_model::agent::{Exchange, ModelReply, RequestedCall, ToolDefinition};
use witness_model::audit::Effect;
use witness_model::vocab::{CallStatus, StopReason, TurnEnd};

use crate::driver::{Driver, Message, Request, ToolResult};

/// Longest result text kept in the trace (the model gets all of it).
pub const KEPT_RESULT: usize = 64 * 1024;

/// One call as the runner made it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCall {
    pub status: CallStatus,
    /// What goes back to the model.
    pub content: String,
    pub is_error: bool,
    pub effects: Vec<Effect>,
    pub rows: Vec<RowFacts>,
    /// What changed since the previous call's post-snapshot: that call's
    /// late effects (before any call: the server's startup).
    pub late: Vec<Effect>,
    pub late_rows: Vec<RowFacts>,
    /// Changes during the call to the server's background objects.
    pub background: Vec<Effect>,
    /// Writes attempted on a store's original during the call (the decoys).
    pub original_writes: Vec<String>,
}

/// Runs tool calls against a server.
pub trait ToolRunner {
    /// Runs one well-formed call. `Err` (a lost transport, a store that
    /// cannot be observed) ends the run as untestable.
    fn call(&mut self, tool: &str, arguments: &Value) -> Result<RunCall, String>;
}

/// The fixed inputs of one conversation.
pub struct Conversation<'a> {
    pub driver: &'a mut dyn Driver,
    pub model: &'a str,
    pub system: &'a str,
    pub tools: &'a [ToolDefinition],
    pub max_tokens: u32,
    pub ceiling: u32,
}

/// What one conversation produced.
#[derive(Debug, Default)]
pub struct Transcript {
    pub turns: Vec<TraceTurn>,
    pub exchanges: Vec<Exchange>,
    pub harness_error: Option<String>,
    /// Changes seen before the first call.
    pub startup: Vec<Effect>,
}

impl Transcript {
    /// The last call made so far, to charge late effects to.
    pub fn last_call_mut(&mut self) -> Option<&mut TraceCall> {
        self.turns
            .iter_mut()
            .flat_map(|t| t.steps.iter_mut())
            .flat_map(|s| s.calls.iter_mut())
            .next_back()
    }
}

/// The state of one conversation.
struct Loop<'a, 'r> {
    conv: Conversation<'a>,
    runner: &'r mut dyn ToolRunner,
    messages: Vec<Message>,
    out: Transcript,
    /// Tool calls asked for so far.
    asked: u32,
}

/// Runs every user turn of a case. Never panics on what the model or the
/// server does.
pub fn converse(
    conv: Conversation<'_>,
    turns: &[String],
    runner: &mut dyn ToolRunner,
) -> Transcript {
    let mut state = Loop {
        conv,
        runner,
        messages: Vec::new(),
        out: Transcript::default(),
        asked: 0,
    };
    let mut stopped = false;
    for user in turns {
        if stopped {
            state.out.turns.push(TraceTurn {
                user: Some(user.clone()),
                steps: Vec::new(),
                end: TurnEnd::NotRun,
                reply: None,
            });
            continue;
        }
        state.messages.push(Message::User { text: user.clone() });
        state.out.turns.push(TraceTurn {
            user: Some(user.clone()),
            steps: Vec::new(),
            end: TurnEnd::Empty,
            reply: None,
        });
        let (end, reply) = state.turn();
        if let Some(turn) = state.out.turns.last_mut() {
            turn.end = end;
            turn.reply = reply;
        }
        stopped = matches!(end, TurnEnd::Ceiling | TurnEnd::Error);
    }
    state.out
}

impl Loop<'_, '_> {
    /// One user turn, to its end.
    fn turn(&mut self) -> (TurnEnd, Option<String>) {
        loop {
            let at_ceiling = self.asked >= self.conv.ceiling;
            let request = Request {
                system: self.conv.system,
                tools: self.conv.tools,
                messages: &self.messages,
                max_tokens: self.conv.max_tokens,
            };
            let answer = self.conv.driver.complete(self.conv.model, &request);
            let error = answer.record.error.clone();
            self.out.exchanges.push(answer.record);
            let reply = match answer.reply {
                Ok(reply) => reply,
                Err(_) => {
                    let said = error.unwrap_or_default();
                    self.out.harness_error = Some(format!("the model endpoint failed: {said}"));
                    return (TurnEnd::Error, None);
                }
            };
            if reply.stop == StopReason::Refusal || reply.refusal.is_some() {
                let text = reply.refusal.clone().or(reply.text.clone());
                self.messages.push(Message::Assistant {
                    text,
                    calls: Vec::new(),
                });
                return (TurnEnd::Refused, None);
            }
            if reply.calls.is_empty() {
                return self.final_reply(reply);
            }
            if at_ceiling {
                self.past_ceiling(reply);
                return (TurnEnd::Ceiling, None);
            }
            if let Err(error) = self.step(reply) {
                self.out.harness_error = Some(error);
                return (TurnEnd::Error, None);
            }
        }
    }

    /// A reply without tool calls ends the turn: an answer when it has text.
    fn final_reply(&mut self, reply: ModelReply) -> (TurnEnd, Option<String>) {
        let text = reply.text.filter(|t| !t.trim().is_empty());
        self.messages.push(Message::Assistant {
            text: text.clone(),
            calls: Vec::new(),
        });
        match text {
            Some(text) => (TurnEnd::Answered, Some(text)),
            None if reply.stop == StopReason::MaxTokens => (TurnEnd::Truncated, None),
            None => (TurnEnd::Empty, None),
        }
    }

    /// Calls asked for after the ceiling: recorded, never run.
    fn past_ceiling(&mut self, reply: ModelReply) {
        let calls = reply
            .calls
            .into_iter()
            .map(|call| {
                self.asked += 1;
                unsent(self.asked, call, "over the loop's call ceiling")
            })
            .collect();
        self.push_step(reply.text, reply.stop, calls);
    }

    /// Runs every call of one reply and sends the results back in one
    /// message. `Err` when the harness cannot go on.
    fn step(&mut self, reply: ModelReply) -> Result<(), String> {
        let calls: Vec<RequestedCall> = reply
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, mut call)| {
                if call.id.is_empty() {
                    // Some compatible servers send no ids; results still need one.
                    call.id = format!("call_{}", self.asked + 1 + u32::try_from(i).unwrap_or(0));
                }
                call
            })
            .collect();
        self.messages.push(Message::Assistant {
            text: reply.text.clone(),
            calls: calls.clone(),
        });
        self.push_step(reply.text, reply.stop, Vec::new());
        let mut results = Vec::new();
        for call in calls {
            self.asked += 1;
            let (record, result) = self.run(self.asked, call)?;
            results.push(result);
            if let Some(step) = self.out.turns.last_mut().and_then(|t| t.steps.last_mut()) {
                step.calls.push(record);
            }
        }
        self.messages.push(Message::Results { results });
        Ok(())
    }

    fn push_step(&mut self, text: Option<String>, stop: StopReason, calls: Vec<TraceCall>) {
        if let Some(turn) = self.out.turns.last_mut() {
            turn.steps.push(TraceStep { text, stop, calls });
        }
    }

    /// One call: not sent past the ceiling or when malformed, else run.
    fn run(&mut self, id: u32, call: RequestedCall) -> Result<(TraceCall, ToolResult), String> {
        let refusal = if id > self.conv.ceiling {
            Some(format!(
                "Not run: this client's limit of {} tool calls was reached.",
                self.conv.ceiling
            ))
        } else {
            call.malformed
                .as_ref()
                .map(|why| format!("Not run: the arguments were not a JSON object ({why})."))
        };
        if let Some(content) = refusal {
            let result = ToolResult {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                content: content.clone(),
                is_error: true,
            };
            let mut record = unsent(id, call, "");
            record.result = Some(content);
            return Ok((record, result));
        }
        let ran = match self.runner.call(&call.tool, &call.arguments) {
            Ok(ran) => ran,
            Err(error) => {
                let mut record = unsent(id, call, "");
                record.status = CallStatus::TransportError;
                record.result = None;
                if let Some(step) = self.out.turns.last_mut().and_then(|t| t.steps.last_mut()) {
                    step.calls.push(record);
                }
                return Err(error);
            }
        };
        self.charge_late(ran.late, ran.late_rows);
        let result = ToolResult {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            content: ran.content.clone(),
            is_error: ran.is_error,
        };
        let (kept, full) = bounded(&ran.content);
        let record = TraceCall {
            id,
            call_id: call.id,
            tool: call.tool,
            arguments: call.arguments,
            malformed: None,
            status: ran.status,
            result: Some(kept),
            result_bytes: full,
            is_error: ran.is_error,
            effects: ran.effects,
            late_effects: Vec::new(),
            background: ran.background,
            rows: ran.rows,
            original_writes: ran.original_writes,
        };
        Ok((record, result))
    }

    /// Late effects belong to the call before; before any call, to startup.
    fn charge_late(&mut self, late: Vec<Effect>, rows: Vec<RowFacts>) {
        match self.out.last_call_mut() {
            Some(previous) => {
                previous.late_effects.extend(late);
                previous.rows.extend(rows);
            }
            None => self.out.startup.extend(late),
        }
    }
}

/// A call that was not sent, with why in its result.
fn unsent(id: u32, call: RequestedCall, why: &str) -> TraceCall {
    TraceCall {
        id,
        call_id: call.id,
        tool: call.tool,
        arguments: call.arguments,
        malformed: call.malformed,
        status: CallStatus::NotSent,
        result: (!why.is_empty()).then(|| format!("Not run: {why}.")),
        result_bytes: None,
        is_error: true,
        effects: Vec::new(),
        late_effects: Vec::new(),
        background: Vec::new(),
        rows: Vec::new(),
        original_writes: Vec::new(),
    }
}

/// The text kept in the trace, and its full length when it was cut.
fn bounded(text: &str) -> (String, Option<u64>) {
    if text.len() <= KEPT_RESULT {
        return (text.to_owned(), None);
    }
    let mut end = KEPT_RESULT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (format!("{}…", &text[..end]), Some(text.len() as u64))
}

#[cfg(test)]
mod tests;
