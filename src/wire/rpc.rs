//! JSON-RPC 2.0 requests and responses over a [`StdioTransport`], with every
//! frame recorded.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::stdio::{Incoming, StdioTransport};
use super::transcript::{Direction, Frame, Transcript};

/// A JSON-RPC answer: a result or an error object.
#[derive(Clone, Debug, PartialEq)]
pub enum RpcResponse {
    Result(Value),
    Error {
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

/// Why no answer came. Each of these ends the session as `incomplete`.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("no answer to {method} within {timeout_ms} ms")]
    Timeout { method: String, timeout_ms: u128 },
    #[error("server closed the connection during {method}: {detail}")]
    Closed { method: String, detail: String },
    #[error("cannot write {method} to the server: {source}")]
    Write {
        method: String,
        #[source]
        source: std::io::Error,
    },
}

/// One JSON-RPC conversation with one server process.
pub struct RpcClient {
    transport: StdioTransport,
    transcript: Transcript,
    next_seq: u64,
    next_id: i64,
    closed: Option<String>,
    /// How `roots/list` requests from the server are answered (empty list).
    pub answer_roots: bool,
}

impl RpcClient {
    pub fn new(transport: StdioTransport) -> Self {
        Self {
            transport,
            transcript: Transcript::default(),
            next_seq: 1,
            next_id: 1,
            closed: None,
            answer_roots: true,
        }
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn transport(&self) -> &StdioTransport {
        &self.transport
    }

    pub fn transport_mut(&mut self) -> &mut StdioTransport {
        &mut self.transport
    }

    /// Whether the server has gone away, and how.
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// Sends a request and waits for its answer, handling whatever else the
    /// server sends meanwhile (notifications, its own requests, garbage).
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<RpcResponse, WireError> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(method, &message)?;
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(detail) = &self.closed {
                return Err(WireError::Closed {
                    method: method.into(),
                    detail: detail.clone(),
                });
            }
            let Some(incoming) = self.transport.recv_until(deadline) else {
                return Err(WireError::Timeout {
                    method: method.into(),
                    timeout_ms: timeout.as_millis(),
                });
            };
            if let Some(answer) = self.accept(incoming, Some(id)) {
                return Ok(answer);
            }
        }
    }

    /// Sends a notification (no answer expected).
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), WireError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send(method, &message)
    }

    /// Records anything the server sent that nobody has read yet.
    pub fn drain(&mut self) {
        while let Some(incoming) = self.transport.try_recv() {
            self.accept(incoming, None);
        }
    }

    /// Waits up to `window` for the server to send anything more, recording it.
    pub fn listen(&mut self, window: Duration) {
        let deadline = Instant::now() + window;
        while self.closed.is_none() {
            match self.transport.recv_until(deadline) {
                Some(incoming) => {
                    self.accept(incoming, None);
                }
                None => break,
            }
        }
    }

    fn send(&mut self, method: &str, message: &Value) -> Result<(), WireError> {
        let text = message.to_string();
        let t_us = self.transport.now_us();
        self.record(Direction::Out, t_us, text.clone(), text.len() as u64, false);
        self.transport
            .send_line(&text)
            .map_err(|source| WireError::Write {
                method: method.into(),
                source,
            })
    }

    fn record(
        &mut self,
        dir: Direction,
        t_us: u64,
        text: String,
        bytes: u64,
        truncated: bool,
    ) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.transcript.push(Frame {
            seq,
            dir,
            t_us,
            text,
            bytes,
            truncated,
        })
    }

    /// Handles one incoming line. Returns the answer when it is the response to `waiting_for`.
    fn accept(&mut self, incoming: Incoming, waiting_for: Option<i64>) -> Option<RpcResponse> {
        let (bytes, cut_from, t_us) = match incoming {
            Incoming::Line {
                bytes,
                cut_from,
                t_us,
            } => (bytes, cut_from, t_us),
            Incoming::Closed { detail, .. } => {
                self.closed = Some(detail);
                return None;
            }
        };
        let total = cut_from.unwrap_or(bytes.len() as u64);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let seq = self.record(Direction::In, t_us, text, total, cut_from.is_some());
        if let Some(total) = cut_from {
            self.transcript.finding(
                "oversized-line",
                Some(seq),
                format!(
                    "a {total}-byte line was cut at {} bytes; its message cannot be read",
                    super::MAX_LINE_BYTES
                ),
            );
            // A cut line cannot be parsed; if it was our answer, the request times out.
            return None;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match serde_json::from_slice(&bytes) {
            Ok(value) => value,
            Err(e) => {
                self.transcript.finding(
                    "stdout-not-json",
                    Some(seq),
                    format!("a line on stdout is not JSON ({e}); stdout must carry only JSON-RPC"),
                );
                return None;
            }
        };
        let Some(object) = value.as_object() else {
            self.transcript.finding(
                "malformed-jsonrpc",
                Some(seq),
                "a JSON-RPC message must be an object",
            );
            return None;
        };
        let method = object.get("method").and_then(Value::as_str);
        let id = object.get("id");
        match (method, id) {
            (Some(method), Some(id)) => {
                let id = id.clone();
                let method = method.to_owned();
                self.answer_server_request(&method, id);
                None
            }
            (Some(_), None) => None, // a notification: kept in the transcript
            (None, Some(id)) => {
                let matches = waiting_for.is_some_and(|want| id_matches(id, want));
                if !matches {
                    self.transcript.finding(
                        "unexpected-response",
                        Some(seq),
                        "a response whose id matches no outstanding request",
                    );
                    return None;
                }
                if let Some(result) = object.get("result") {
                    return Some(RpcResponse::Result(result.clone()));
                }
                if let Some(error) = object.get("error") {
                    return Some(RpcResponse::Error {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        data: error.get("data").cloned(),
                    });
                }
                self.transcript.finding(
                    "malformed-jsonrpc",
                    Some(seq),
                    "a response with neither result nor error",
                );
                Some(RpcResponse::Error {
                    code: 0,
                    message: "malformed response: neither result nor error".into(),
                    data: None,
                })
            }
            (None, None) => {
                self.transcript.finding(
                    "malformed-jsonrpc",
                    Some(seq),
                    "a message with neither method nor id",
                );
                None
            }
        }
    }

    /// Servers may ask things of their client mid-request. We answer the two a
    /// discovery-only client can answer honestly and refuse the rest.
    fn answer_server_request(&mut self, method: &str, id: Value) {
        let reply = match method {
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "roots/list" if self.answer_roots => {
                json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}})
            }
            _ => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "method not supported by mcp-witness"}}),
        };
        // A failed write here surfaces on the next request as a closed connection.
        let _ = self.send(method, &reply);
    }
}

fn id_matches(id: &Value, want: i64) -> bool {
    match id {
        Value::Number(n) => n.as_i64() == Some(want),
        // Some servers echo numeric ids as strings.
        Value::String(s) => s.parse::<i64>().ok() == Some(want),
        _ => false,
    }
}
