//! An Anthropic Messages endpoint with tool use.
//!
//! `POST {base}/v1/messages` with `x-api-key: KEY` (when set) and
//! `anthropic-version: 2023-06-01`. The request carries `system`, `tools`
//! (`name`, `description`, `input_schema`), `max_tokens` and the messages:
//! the assistant's turns as content blocks (`text`, `tool_use` with `id`,
//! `name` and `input`), and every result of one step in one `user` message
//! of `tool_result` blocks (`tool_use_id`, `content`, `is_error`), in call
//! order and nothing else in that message.
//!
//! Replies: `content` blocks (`text`, `tool_use`) and `stop_reason`
//! (`end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `refusal`,
//! `pause_turn`, `model_context_window_exceeded`).

use serde_json::{Value, json};
use witness_model::agent::{ModelReply, RequestedCall, Usage};
use witness_model::vocab::{DriverKind, StopReason};

use super::http::{HttpOptions, exchange};
use super::{Answer, Driver, DriverError, Message, Request, RunKey};

/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    options: HttpOptions,
}

impl Anthropic {
    pub fn new(options: HttpOptions) -> Self {
        Self { options }
    }

    fn url(&self) -> String {
        format!(
            "{}/v1/messages",
            self.options.base_url.trim_end_matches('/')
        )
    }
}

impl Driver for Anthropic {
    fn kind(&self) -> DriverKind {
        DriverKind::Anthropic
    }

    fn begin(&mut self, _key: &RunKey) -> Result<(), DriverError> {
        Ok(())
    }

    fn complete(&mut self, model: &str, request: &Request<'_>) -> Answer {
        let body = body(model, request);
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.options.key {
            headers.push(("x-api-key", key.value().to_owned()));
        }
        exchange(&self.options, &self.url(), &headers, body, request, parse)
    }
}

/// The request body.
pub fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages = Vec::new();
    for message in request.messages {
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, calls } => {
                let mut content = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    content.push(json!({"type": "text", "text": text}));
                }
                for call in calls {
                    // The API only ever produces object inputs; a call that
                    // came back malformed from another driver goes back empty.
                    let input = if call.arguments.is_object() {
                        call.arguments.clone()
                    } else {
                        json!({})
                    };
                    content.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.tool, "input": input,
                    }));
                }
                // An empty assistant turn is left out: the API joins the
                // user turns around it into one.
                if !content.is_empty() {
                    messages.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::Results { results } => {
                let blocks: Vec<Value> = results
                    .iter()
                    .map(|r| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": r.content,
                            "is_error": r.is_error,
                        })
                    })
                    .collect();
                messages.push(json!({"role": "user", "content": blocks}));
            }
        }
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": messages,
    });
    if !tools.is_empty()
        && let Some(map) = body.as_object_mut()
    {
        map.insert("tools".into(), Value::Array(tools));
    }
    body
}

/// Reads a successful response into the common form.
pub fn parse(body: &Value) -> Result<ModelReply, DriverError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        let said = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(DriverError::Malformed(format!(
            "an error body with a success status: {}",
            witness_text::clip(said, 300)
        )));
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| DriverError::Malformed("no content array".into()))?;
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    text.push(t.to_owned());
                }
            }
            Some("tool_use") => calls.push(requested(block)),
            // Thinking and other blocks say nothing the loop acts on.
            _ => {}
        }
    }
    let text = (!text.is_empty()).then(|| text.join("\n"));
    let stop = match body.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refusal,
        _ => StopReason::Other,
    };
    let refusal =
        (stop == StopReason::Refusal).then(|| text.clone().unwrap_or_else(|| "(no text)".into()));
    Ok(ModelReply {
        text,
        calls,
        stop,
        refusal,
        usage: usage(body.get("usage")),
    })
}

fn requested(block: &Value) -> RequestedCall {
    let id = block
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let tool = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let (arguments, malformed) = match block.get("input") {
        _ if tool.is_empty() => (Value::Null, Some("the tool_use block has no name".into())),
        Some(Value::Object(map)) => (Value::Object(map.clone()), None),
        None | Some(Value::Null) => (json!({}), None),
        Some(other) => (
            Value::Null,
            Some(format!(
                "input is not an object: {}",
                witness_text::clip_raw(&other.to_string(), 2_000)
            )),
        ),
    };
    RequestedCall {
        id,
        tool,
        arguments,
        malformed,
    }
}

fn usage(usage: Option<&Value>) -> Option<Usage> {
    let usage = usage?;
    Some(Usage {
        input_tokens: usage.get("input_tokens")?.as_u64()?,
        output_tokens: usage.get("output_tokens")?.as_u64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ToolResult;
    use witness_model::agent::ToolDefinition;

    #[test]
    fn the_body_puts_every_result_of_a_step_in_one_user_message() {
        let tools = [ToolDefinition {
            name: "search".into(),
            description: "Searches.".into(),
            input_schema: json!({"type": "object"}),
        }];
        let call = |id: &str| RequestedCall {
            id: id.into(),
            tool: "search".into(),
            arguments: json!({"q": id}),
            malformed: None,
        };
        let result = |id: &str, is_error| ToolResult {
            call_id: id.into(),
            tool: "search".into(),
            content: format!("result {id}"),
            is_error,
        };
        let messages = [
            Message::User { text: "go".into() },
            Message::Assistant {
                text: Some("Looking.".into()),
                calls: vec![call("t1"), call("t2")],
            },
            Message::Results {
                results: vec![result("t1", false), result("t2", true)],
            },
        ];
        let request = Request {
            system: "sys",
            tools: &tools,
            messages: &messages,
            max_tokens: 64,
        };
        let body = body("claude", &request);
        assert_eq!(body["system"], "sys");
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));
        assert_eq!(
            body["messages"][1]["content"][0],
            json!({"type": "text", "text": "Looking."})
        );
        assert_eq!(
            body["messages"][1]["content"][2]["input"],
            json!({"q": "t2"})
        );
        let results = &body["messages"][2];
        assert_eq!(results["role"], "user");
        assert_eq!(results["content"][1]["tool_use_id"], "t2");
        assert_eq!(results["content"][1]["is_error"], true);
        assert_eq!(results["content"][0]["is_error"], false);
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    }

    #[test]
    fn replies_read_tool_use_and_stop_reasons() {
        let Ok(reply) = parse(&json!({"type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x"}}
        ], "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 4}})) else {
            panic!("parses");
        };
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.text.as_deref(), Some("Searching."));
        assert_eq!(reply.calls[0].arguments, json!({"q": "x"}));
        let Ok(refused) = parse(&json!({"content": [], "stop_reason": "refusal"})) else {
            panic!("parses");
        };
        assert_eq!(refused.stop, StopReason::Refusal);
        assert!(refused.refusal.is_some());
        assert!(parse(&json!({"type": "error", "error": {"message": "x"}})).is_err());
        assert!(parse(&json!({"stop_reason": "end_turn"})).is_err());
        let Ok(odd) = parse(
            &json!({"content": [{"type": "tool_use", "id": "t", "name": "s", "input": [1]}]}),
        ) else {
            panic!("parses");
        };
        assert!(odd.calls[0].malformed.is_some());
    }
}
