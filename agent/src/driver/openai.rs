//! An OpenAI-compatible Chat Completions endpoint with tools.
//!
//! `POST {base}/chat/completions` (the base conventionally ends in `/v1`),
//! `Authorization: Bearer KEY` when a key is set (local servers such as
//! llama.cpp's, vLLM or Ollama need none). The request carries the system
//! prompt as the first message, `tools` as `function` tools whose
//! `parameters` are the input schemas as served (not `strict`: an MCP
//! schema's optional properties are legal), the assistant's tool calls
//! with their arguments as JSON text, and one `tool` message per result in
//! call order, `tool_call_id` naming the call. The API has no error flag on
//! a tool message, so an error result's content starts with `Error: `.
//!
//! Replies: `choices[0].message` — `content`, `tool_calls` (arguments as
//! JSON text; an object is accepted too, as some compatible servers send),
//! `refusal` — and `finish_reason` (`stop`, `tool_calls`, `length`,
//! `content_filter`).

use serde_json::{Map, Value, json};
use witness_model::agent::{ModelReply, RequestedCall, Usage};
use witness_model::vocab::{DriverKind, StopReason};

use super::http::{HttpOptions, exchange};
use super::{Answer, Driver, DriverError, Message, Request, RunKey};

/// The prefix that marks an error result for a model that has no flag for it.
pub const ERROR_PREFIX: &str = "Error: ";

pub struct OpenAi {
    options: HttpOptions,
}

impl OpenAi {
    pub fn new(options: HttpOptions) -> Self {
        Self { options }
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.options.base_url.trim_end_matches('/')
        )
    }
}

impl Driver for OpenAi {
    fn kind(&self) -> DriverKind {
        DriverKind::Openai
    }

    fn begin(&mut self, _key: &RunKey) -> Result<(), DriverError> {
        Ok(())
    }

    fn complete(&mut self, model: &str, request: &Request<'_>) -> Answer {
        let body = body(model, request);
        let mut headers = Vec::new();
        if let Some(key) = &self.options.key {
            headers.push(("authorization", format!("Bearer {}", key.value())));
        }
        exchange(&self.options, &self.url(), &headers, body, request, parse)
    }
}

/// The request body.
pub fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for message in request.messages {
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, calls } => {
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert("content".into(), json!(text));
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls.iter().map(tool_call).collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            Message::Results { results } => {
                for result in results {
                    let content = if result.is_error {
                        format!("{ERROR_PREFIX}{}", result.content)
                    } else {
                        result.content.clone()
                    };
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": result.call_id,
                        "content": content,
                    }));
                }
            }
        }
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            }})
        })
        .collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
        "max_tokens": request.max_tokens,
    });
    if !tools.is_empty()
        && let Some(map) = body.as_object_mut()
    {
        map.insert("tools".into(), Value::Array(tools));
        map.insert("tool_choice".into(), json!("auto"));
    }
    body
}

/// An assistant tool call as the API takes it back. A malformed call goes
/// back with empty arguments: compatible servers parse this field, and its
/// result already tells the model what was wrong with what it sent.
fn tool_call(call: &RequestedCall) -> Value {
    let arguments = if call.arguments.is_object() {
        call.arguments.to_string()
    } else {
        "{}".to_owned()
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.tool, "arguments": arguments},
    })
}

/// Reads a successful response into the common form.
pub fn parse(body: &Value) -> Result<ModelReply, DriverError> {
    let choice = body
        .pointer("/choices/0")
        .ok_or_else(|| DriverError::Malformed("no choices".into()))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| DriverError::Malformed("choices[0] has no message".into()))?;
    let refusal = message
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
        .map(str::to_owned);
    let mut stop = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        _ => StopReason::Other,
    };
    if refusal.is_some() {
        stop = StopReason::Refusal;
    }
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls.iter().map(requested).collect(),
        Some(_) => return Err(DriverError::Malformed("tool_calls is not an array".into())),
    };
    Ok(ModelReply {
        text: content_text(message.get("content")),
        calls,
        stop,
        refusal,
        usage: usage(body.get("usage")),
    })
}

/// `content` as text: a string, or the text parts of an array of parts.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// One `tool_calls` entry. A call without a function name, or whose
/// arguments are not a JSON object, is kept as malformed: the loop tells
/// the model instead of calling anything.
fn requested(call: &Value) -> RequestedCall {
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let function = call.get("function");
    let tool = function
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let raw = function.and_then(|f| f.get("arguments"));
    let (arguments, malformed) = match raw {
        _ if tool.is_empty() => (Value::Null, Some("the tool call names no function".into())),
        None | Some(Value::Null) => (json!({}), None),
        Some(Value::Object(map)) => (Value::Object(map.clone()), None),
        Some(Value::String(text)) if text.trim().is_empty() => (json!({}), None),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => (Value::Object(map), None),
            Ok(_) => (
                Value::Null,
                Some(format!(
                    "not a JSON object: {}",
                    witness_text::clip_raw(text, 2_000)
                )),
            ),
            Err(e) => (
                Value::Null,
                Some(format!(
                    "not JSON ({e}): {}",
                    witness_text::clip_raw(text, 2_000)
                )),
            ),
        },
        Some(other) => (
            Value::Null,
            Some(format!("arguments of type {}", type_name(other))),
        ),
    };
    RequestedCall {
        id,
        tool,
        arguments,
        malformed,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn usage(usage: Option<&Value>) -> Option<Usage> {
    let usage = usage?;
    Some(Usage {
        input_tokens: usage.get("prompt_tokens")?.as_u64()?,
        output_tokens: usage.get("completion_tokens")?.as_u64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ToolResult;
    use witness_model::agent::ToolDefinition;

    #[test]
    fn the_body_carries_tools_calls_and_marked_results() {
        let tools = [ToolDefinition {
            name: "search".into(),
            description: "Searches.".into(),
            input_schema: json!({"type": "object"}),
        }];
        let messages = [
            Message::User {
                text: "find x".into(),
            },
            Message::Assistant {
                text: None,
                calls: vec![RequestedCall {
                    id: "call_1".into(),
                    tool: "search".into(),
                    arguments: json!({"q": "x"}),
                    malformed: None,
                }],
            },
            Message::Results {
                results: vec![ToolResult {
                    call_id: "call_1".into(),
                    tool: "search".into(),
                    content: "no such thing".into(),
                    is_error: true,
                }],
            },
        ];
        let request = Request {
            system: "sys",
            tools: &tools,
            messages: &messages,
            max_tokens: 64,
        };
        let body = body("m", &request);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"q\":\"x\"}"
        );
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "Error: no such thing"})
        );
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(body["tool_choice"], "auto");
    }

    #[test]
    fn replies_read_calls_refusals_and_malformed_arguments() {
        let reply = parse(
            &json!({"choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "s", "arguments": "{\"q\":1}"}},
                {"id": "b", "type": "function", "function": {"name": "s", "arguments": "{oops"}},
                {"type": "function", "function": {"name": "s", "arguments": {"q": 2}}},
                {"id": "d", "type": "function", "function": {"arguments": "{}"}}
            ]}}], "usage": {"prompt_tokens": 5, "completion_tokens": 7}}),
        );
        let Ok(reply) = reply else {
            panic!("parses");
        };
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.calls[0].arguments, json!({"q": 1}));
        assert!(
            reply.calls[1]
                .malformed
                .as_deref()
                .is_some_and(|m| m.contains("{oops"))
        );
        assert_eq!(reply.calls[2].id, "");
        assert_eq!(reply.calls[2].arguments, json!({"q": 2}));
        assert!(reply.calls[3].malformed.is_some());
        assert_eq!(reply.usage.map(|u| u.output_tokens), Some(7));
        let refused = parse(&json!({"choices": [{"finish_reason": "stop",
            "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]}));
        assert!(matches!(
            refused,
            Ok(ModelReply {
                stop: StopReason::Refusal,
                ..
            })
        ));
        assert!(matches!(
            parse(&json!({"choices": []})),
            Err(DriverError::Malformed(_))
        ));
        assert!(matches!(
            parse(&json!({"id": 1})),
            Err(DriverError::Malformed(_))
        ));
    }
}
