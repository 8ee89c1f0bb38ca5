//! A server in-process, for the session's unit tests: each request the
//! client sends is answered at once by a function of that request, and
//! every message sent is kept for the test to read.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::connection::Connection;
use crate::rpc::RpcClient;
use crate::{Incoming, Transport};

/// What the client sent, in order.
pub type Sent = Arc<Mutex<Vec<Value>>>;

/// Answers a request (`None`: no answer, the request times out).
pub type Answer = Box<dyn FnMut(&Value) -> Option<Value> + Send>;

pub struct Fake {
    answer: Answer,
    queue: VecDeque<Value>,
    sent: Sent,
}

/// A connection to a fake server, and what the client sends it.
pub fn connection(
    answer: impl FnMut(&Value) -> Option<Value> + Send + 'static,
) -> (Connection, Sent) {
    let sent: Sent = Arc::default();
    let fake = Fake {
        answer: Box::new(answer),
        queue: VecDeque::new(),
        sent: sent.clone(),
    };
    (Connection::remote(RpcClient::new(fake)), sent)
}

/// A JSON-RPC result answering `request`.
pub fn result(request: &Value, result: Value) -> Option<Value> {
    Some(serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

impl Transport for Fake {
    fn kind(&self) -> &'static str {
        "stdio"
    }
    fn now_us(&self) -> u64 {
        0
    }
    fn send(&mut self, message: &Value, _text: &str) -> std::io::Result<()> {
        if let Ok(mut sent) = self.sent.lock() {
            sent.push(message.clone());
        }
        if message.get("id").is_some()
            && message.get("method").is_some()
            && let Some(answer) = (self.answer)(message)
        {
            self.queue.push_back(answer);
        }
        Ok(())
    }
    fn recv_until(&mut self, _deadline: Instant) -> Option<Incoming> {
        self.try_recv()
    }
    fn try_recv(&mut self) -> Option<Incoming> {
        self.queue.pop_front().map(|message| Incoming::Line {
            bytes: message.to_string().into_bytes(),
            cut_from: None,
            t_us: 0,
        })
    }
    fn close(&mut self) {}
}
