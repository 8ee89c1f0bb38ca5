//! Drivers: one trait over every way of getting a model's reply.
//!
//! The loop speaks one common form — a system prompt, tool definitions and
//! messages (`user`, `assistant` with its tool calls, and the tool results
//! of one step in one message, errors marked) — and each driver translates
//! it to its API and back:
//!
//! - [`scripted`]: replies read from a TOML file, for tests and planted
//!   behaviours;
//! - [`openai`]: an OpenAI-compatible Chat Completions endpoint with tools
//!   (hosted, or a local llama.cpp, vLLM or Ollama server);
//! - [`anthropic`]: an Anthropic Messages endpoint with tool use;
//! - [`replay`]: the replies of a recorded run, in order, refusing a
//!   conversation that no longer matches the one recorded.
//!
//! A driver never fails the loop with a panic or a hang: every request ends
//! in an [`Answer`] whose record is kept in the run document, and an
//! endpoint error is `untestable`, never evidence against the client.

pub mod anthropic;
mod http;
pub mod openai;
pub mod policy;
pub mod replay;
pub mod scripted;

use serde::Serialize;
use serde_json::Value;
use witness_model::agent::{Exchange, ModelReply, RequestedCall, ToolDefinition};
use witness_model::manifest::canonical;
use witness_model::vocab::DriverKind;

pub use http::{ApiKey, HttpOptions};

/// One message of a conversation, in the drivers' common form.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        calls: Vec<RequestedCall>,
    },
    /// Every result of one step, in the order the calls were asked for.
    Results {
        results: Vec<ToolResult>,
    },
}

/// One tool call's result as the model gets it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResult {
    pub call_id: String,
    pub tool: String,
    pub content: String,
    pub is_error: bool,
}

/// One request to a model.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Request<'a> {
    pub system: &'a str,
    pub tools: &'a [ToolDefinition],
    pub messages: &'a [Message],
    pub max_tokens: u32,
}

impl Request<'_> {
    /// blake3 over the canonical JSON of the request: what a replay must
    /// send again, whatever driver recorded it.
    pub fn digest(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let text = canonical(&value).to_string();
        format!("blake3:{}", blake3::hash(text.as_bytes()).to_hex())
    }
}

/// Which conversation a driver is asked to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunKey {
    /// One repetition of one case with one model.
    Case {
        case: String,
        model: String,
        run: u32,
    },
    /// One batch of the judge (0-based).
    Judge { batch: u32 },
}

/// Why there is no reply. Every variant is the endpoint's or the
/// harness's failure, never the client's.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("HTTP {status}: {detail}")]
    Http { status: u16, detail: String },
    #[error("{0}")]
    Transport(String),
    #[error("the reply is malformed: {0}")]
    Malformed(String),
    #[error("{0}")]
    Script(String),
    #[error("replay: {0}")]
    Replay(String),
}

/// A driver's reply and what is recorded of the exchange.
#[derive(Debug)]
pub struct Answer {
    pub reply: Result<ModelReply, DriverError>,
    /// The record for the run document; its `error` is the reply's error,
    /// as text, when there is one.
    pub record: Exchange,
}

impl Answer {
    /// An answer and its record, filled in consistently.
    pub fn new(
        request: &Request<'_>,
        reply: Result<ModelReply, DriverError>,
        http: Option<(Value, u16, Value)>,
    ) -> Self {
        let (body, status, response) = match http {
            Some((body, status, response)) => (Some(body), Some(status), Some(response)),
            None => (None, None, None),
        };
        let record = Exchange {
            request_digest: request.digest(),
            request: body,
            http_status: status,
            response,
            reply: reply.as_ref().ok().cloned(),
            error: reply.as_ref().err().map(ToString::to_string),
        };
        Self { reply, record }
    }
}

/// One way of getting a model's replies.
pub trait Driver {
    fn kind(&self) -> DriverKind;

    /// Starts a conversation. Scripted and replayed drivers choose their
    /// replies by it; an error makes the run untestable.
    fn begin(&mut self, key: &RunKey) -> Result<(), DriverError>;

    /// One request to `model`. Never panics on what an endpoint sends.
    fn complete(&mut self, model: &str, request: &Request<'_>) -> Answer;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_ignores_key_order_but_not_content() {
        let tools = [ToolDefinition {
            name: "t".into(),
            description: "d".into(),
            input_schema: json!({"type": "object", "properties": {"a": {}, "b": {}}}),
        }];
        let reordered = [ToolDefinition {
            input_schema: json!({"properties": {"b": {}, "a": {}}, "type": "object"}),
            ..tools[0].clone()
        }];
        let messages = [Message::User { text: "hi".into() }];
        let a = Request {
            system: "s",
            tools: &tools,
            messages: &messages,
            max_tokens: 10,
        };
        let b = Request {
            tools: &reordered,
            ..a
        };
        assert_eq!(a.digest(), b.digest());
        let c = Request { system: "t", ..a };
        assert_ne!(a.digest(), c.digest());
        assert!(a.digest().starts_with("blake3:"));
    }
}
