//! JSON-RPC 2.0 requests and responses over any [`Transport`], with every
//! frame recorded.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::transcript::{Direction, Frame, Transcript, WireFindingKind};
use crate::{Incoming, Transport};

/// At most this many `roots/list` requests from the server are answered with
/// the (empty) list per message the client sends, when the client declared
/// roots; the rest are answered with an error and make the session's
/// `roots_overflow` true. A client that declared no roots refuses every one
/// with Method not found, however many come: a refusal costs nothing.
pub const MAX_ROOTS_REQUESTS: u32 = 8;

/// How long a request may stay open in all while the server keeps sending
/// progress for it (see [`RpcClient::request_with_progress`]), when that is
/// longer than the request's own timeout. Each progress notification gives
/// the request its timeout again, as the SDKs' reset-on-progress does, but
/// never past this: a server that reports progress forever cannot hold the
/// audit forever.
pub const PROGRESS_CEILING: Duration = Duration::from_secs(120);

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
    /// The server kept reporting progress, each report giving the request
    /// its timeout again, until the request had been open for the ceiling.
    #[error(
        "no answer to {method} within {ceiling_ms} ms, though it reported progress {reports} time(s) (each report extends a call by its timeout, up to that ceiling)"
    )]
    ProgressCeiling {
        method: String,
        ceiling_ms: u128,
        reports: u32,
    },
    #[error("server closed the connection during {method}: {detail}")]
    Closed { method: String, detail: String },
    #[error("cannot write {method} to the server: {source}")]
    Write {
        method: String,
        #[source]
        source: std::io::Error,
    },
    /// The HTTP exchange that carried the request failed (`detail` is fixed
    /// text: a status, a timeout, a stream that ended without the answer).
    #[error("no answer to {method} over HTTP: {detail}")]
    Http { method: String, detail: String },
}

/// One JSON-RPC conversation with one server (a process, or an HTTP endpoint).
pub struct RpcClient {
    transport: Box<dyn Transport>,
    transcript: Transcript,
    next_seq: u64,
    next_id: i64,
    closed: Option<String>,
    /// Whether the client declared the `roots` capability: then `roots/list`
    /// is answered with an empty list; otherwise it is refused with Method
    /// not found. Set by the handshake from what it declares.
    pub answer_roots: bool,
    /// Whether the client declared the `elicitation` capability to confirm
    /// (an audit's `--confirm`): then `elicitation/create` is answered by
    /// [`crate::mrtr::confirm`]; otherwise it is refused with Method not
    /// found. Set by the handshake from what it declares.
    pub confirm: bool,
    /// The elicitations answered since last taken (`accept: <message>`).
    elicitations: Vec<String>,
    /// The progress token of the request being waited for, and whether a
    /// `notifications/progress` carrying it arrived since last looked at.
    progress_token: Option<Value>,
    progress_seen: bool,
    /// `roots/list` requests since the client last sent a message.
    roots_window: u32,
    roots_requests: u32,
    roots_overflow: bool,
}

impl RpcClient {
    pub fn new(transport: impl Transport + 'static) -> Self {
        Self {
            transport: Box::new(transport),
            transcript: Transcript::default(),
            next_seq: 1,
            next_id: 1,
            closed: None,
            answer_roots: false,
            confirm: false,
            elicitations: Vec::new(),
            progress_token: None,
            progress_seen: false,
            roots_window: 0,
            roots_requests: 0,
            roots_overflow: false,
        }
    }

    /// Keeps at most `bytes` of frame text (instead of
    /// [`crate::MAX_KEPT_BYTES`]); for tests that cannot send 64 MiB quickly.
    pub fn with_kept_budget(mut self, bytes: usize) -> Self {
        self.transcript = Transcript::with_budget(bytes);
        self
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn transport(&self) -> &dyn Transport {
        self.transport.as_ref()
    }

    pub fn transport_mut(&mut self) -> &mut dyn Transport {
        self.transport.as_mut()
    }

    /// The elicitations answered since the last call of this, each as
    /// `accept: <message>` or `decline: <message>`, in order.
    pub fn take_elicitations(&mut self) -> Vec<String> {
        std::mem::take(&mut self.elicitations)
    }

    /// Records an elicitation answered another way (a 2026-07-28
    /// `input_required` round) beside those answered here.
    pub fn log_elicitation(&mut self, line: String) {
        self.elicitations.push(line);
    }

    /// `roots/list` requests the server sent, in all.
    pub fn roots_requests(&self) -> u32 {
        self.roots_requests
    }

    /// Whether the server sent more than [`MAX_ROOTS_REQUESTS`] `roots/list`
    /// requests after one client message (the surplus went unanswered).
    pub fn roots_overflow(&self) -> bool {
        self.roots_overflow
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
        self.exchange(method, params, timeout, None)
    }

    /// [`Self::request`] for a request whose params carry `_meta.progressToken
    /// = token`: each `notifications/progress` with that token gives the
    /// request `timeout` again from the moment it arrived, until it has been
    /// open for the longer of `timeout` and `ceiling` in all. A report with
    /// another token, or none, extends nothing.
    pub fn request_with_progress(
        &mut self,
        method: &str,
        params: Value,
        token: Value,
        timeout: Duration,
        ceiling: Duration,
    ) -> Result<RpcResponse, WireError> {
        self.progress_token = Some(token);
        let answer = self.exchange(method, params, timeout, Some(ceiling.max(timeout)));
        self.progress_token = None;
        self.progress_seen = false;
        answer
    }

    fn exchange(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
        ceiling: Option<Duration>,
    ) -> Result<RpcResponse, WireError> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.roots_window = 0;
        self.send(method, &message)?;
        let started = Instant::now();
        let mut deadline = started + timeout;
        let mut reports = 0u32;
        loop {
            if let Some(detail) = &self.closed {
                return Err(WireError::Closed {
                    method: method.into(),
                    detail: detail.clone(),
                });
            }
            let Some(incoming) = self.transport.recv_until(deadline) else {
                return Err(match ceiling {
                    Some(ceiling) if reports > 0 && deadline >= started + ceiling => {
                        WireError::ProgressCeiling {
                            method: method.into(),
                            ceiling_ms: ceiling.as_millis(),
                            reports,
                        }
                    }
                    _ => WireError::Timeout {
                        method: method.into(),
                        timeout_ms: deadline.saturating_duration_since(started).as_millis(),
                    },
                });
            };
            if let Incoming::Failed {
                request: Some(failed),
                detail,
                ..
            } = &incoming
                && *failed == id
            {
                self.transcript.finding(
                    WireFindingKind::HttpExchangeFailed,
                    None,
                    format!("{method}: {detail}"),
                );
                return Err(WireError::Http {
                    method: method.into(),
                    detail: detail.clone(),
                });
            }
            if let Some(answer) = self.accept(incoming, Some(id)) {
                return Ok(answer);
            }
            if std::mem::take(&mut self.progress_seen)
                && let Some(ceiling) = ceiling
            {
                reports = reports.saturating_add(1);
                deadline = (Instant::now() + timeout).min(started + ceiling);
            }
        }
    }

    /// Sends a notification (no answer expected).
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), WireError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.roots_window = 0;
        self.send(method, &message)
    }

    /// Tells the transport which protocol version the handshake settled on.
    pub fn negotiated(&mut self, protocol_version: &str) {
        self.transport.negotiated(protocol_version);
    }

    /// Ends the conversation politely (stdin closed, HTTP session deleted).
    pub fn close(&mut self) {
        self.transport.close();
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
            .send(message, &text)
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
            Incoming::Failed {
                request, detail, ..
            } => {
                // A failure of the request being waited for is handled by
                // `request`; anything else is worth a reader's attention.
                let what = match request {
                    Some(id) => format!("request {id}: {detail}"),
                    None => detail,
                };
                self.transcript
                    .finding(WireFindingKind::HttpExchangeFailed, None, what);
                return None;
            }
        };
        let total = cut_from.unwrap_or(bytes.len() as u64);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let seq = self.record(Direction::In, t_us, text, total, cut_from.is_some());
        if let Some(total) = cut_from {
            self.transcript.finding(
                WireFindingKind::OversizedLine,
                Some(seq),
                format!(
                    "a {total}-byte line was cut at {} bytes; its message cannot be read",
                    crate::MAX_LINE_BYTES
                ),
            );
            // A cut line cannot be parsed; if it was our answer, the request times out.
            return None;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match crate::json::parse(&bytes) {
            Ok(value) => value,
            Err(crate::json::Unreadable::NotJson(e)) => {
                self.transcript.finding(
                    WireFindingKind::StdoutNotJson,
                    Some(seq),
                    format!("a line on stdout is not JSON ({e}); stdout must carry only JSON-RPC"),
                );
                return None;
            }
            Err(crate::json::Unreadable::TooDeep { depth, id }) => {
                self.transcript.finding(
                    WireFindingKind::JsonTooDeep,
                    Some(seq),
                    format!(
                        "a message nested {depth} levels deep was not read (the bound is {} levels)",
                        crate::json::MAX_JSON_DEPTH
                    ),
                );
                // The answer we wait for, unreadable: say so now rather
                // than wait out the timeout.
                let ours = waiting_for
                    .is_some_and(|want| id.as_ref().is_some_and(|id| id_matches(id, want)));
                return ours.then(|| RpcResponse::Error {
                    code: 0,
                    message: format!(
                        "unreadable response: nested {depth} levels deep, past the bound of {}",
                        crate::json::MAX_JSON_DEPTH
                    ),
                    data: None,
                });
            }
        };
        let Some(object) = value.as_object() else {
            self.transcript.finding(
                WireFindingKind::MalformedJsonrpc,
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
                let params = object.get("params").cloned();
                self.answer_server_request(&method, id, params.as_ref());
                None
            }
            (Some(method), None) => {
                // A notification: kept in the transcript; progress on the
                // request being waited for is noted for its deadline.
                if method == "notifications/progress"
                    && let Some(token) = &self.progress_token
                    && object
                        .get("params")
                        .and_then(|p| p.get("progressToken"))
                        .is_some_and(|t| t == token)
                {
                    self.progress_seen = true;
                }
                None
            }
            (None, Some(id)) => {
                let matches = waiting_for.is_some_and(|want| id_matches(id, want));
                if !matches && id.is_null() && object.contains_key("error") {
                    let code = object
                        .get("error")
                        .and_then(|e| e.get("code"))
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    self.transcript.finding(
                        WireFindingKind::ErrorWithoutId,
                        Some(seq),
                        format!("an error response without an id (code {code})"),
                    );
                    return None;
                }
                if !matches {
                    self.transcript.finding(
                        WireFindingKind::UnexpectedResponse,
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
                    WireFindingKind::MalformedJsonrpc,
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
                    WireFindingKind::MalformedJsonrpc,
                    Some(seq),
                    "a message with neither method nor id",
                );
                None
            }
        }
    }

    /// Servers may ask things of their client mid-request. Every request is
    /// answered, by what the client declared: `ping` always; `roots/list`
    /// with the empty list when roots were declared, at most
    /// [`MAX_ROOTS_REQUESTS`] per client message (the surplus gets an error
    /// and the session records the overflow), and with Method not found when
    /// they were not; anything else with Method not found.
    fn answer_server_request(&mut self, method: &str, id: Value, params: Option<&Value>) {
        let refuse = |code: i64, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let reply = match method {
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            // A confirmation asked mid-call: answered as the client declared
            // (only a declared elicitation capability gets an answer), and
            // logged for the call's record.
            "elicitation/create" if self.confirm => {
                let answer = crate::mrtr::confirm(params);
                self.elicitations
                    .push(crate::mrtr::answered(params, &answer));
                json!({"jsonrpc": "2.0", "id": id, "result": answer})
            }
            "roots/list" => {
                self.roots_requests = self.roots_requests.saturating_add(1);
                self.roots_window = self.roots_window.saturating_add(1);
                if !self.answer_roots {
                    refuse(
                        METHOD_NOT_FOUND,
                        "method not found: the client declared no roots capability",
                    )
                } else if self.roots_window > MAX_ROOTS_REQUESTS {
                    if !self.roots_overflow {
                        self.transcript.finding(
                            WireFindingKind::RootsOverflow,
                            None,
                            format!(
                                "more than {MAX_ROOTS_REQUESTS} roots/list requests after one client \
                                 message; the surplus was refused"
                            ),
                        );
                    }
                    self.roots_overflow = true;
                    refuse(
                        TOO_MANY_REQUESTS,
                        "too many roots/list requests after one client message",
                    )
                } else {
                    json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}})
                }
            }
            _ => refuse(METHOD_NOT_FOUND, "method not supported by mcp-witness"),
        };
        // A failed write here surfaces on the next request as a closed connection.
        let _ = self.send(method, &reply);
    }
}

/// JSON-RPC 2.0's code for a method the receiver does not have.
const METHOD_NOT_FOUND: i64 = -32601;
/// An implementation-defined JSON-RPC error: the request was refused for
/// coming once too often, not for being unknown.
const TOO_MANY_REQUESTS: i64 = -32000;

/// Whether a response's `id` is the one we sent. We send numbers, and
/// JSON-RPC requires the same value of the same type back: the string
/// `"1"` is not the number 1 (a decoy answer must not be taken for ours).
fn id_matches(id: &Value, want: i64) -> bool {
    match id {
        Value::Number(n) => n.as_i64() == Some(want),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::{RpcClient, RpcResponse, WireError};
    use crate::{Incoming, Transport};

    /// A server that answers on a schedule: each message is due a fixed
    /// time after the request was sent. Whether it arrives is decided on
    /// those due times against the deadline asked for, never on how late a
    /// loaded machine wakes the thread, so the verdicts do not depend on
    /// timing.
    struct Scheduled {
        /// (due after the request, message with `ID` standing for its id)
        script: VecDeque<(u64, Value)>,
        sent: Option<(Instant, i64)>,
    }

    impl Scheduled {
        fn new(script: Vec<(u64, Value)>) -> Self {
            Self {
                script: script.into(),
                sent: None,
            }
        }
    }

    impl Transport for Scheduled {
        fn kind(&self) -> &'static str {
            "stdio"
        }
        fn now_us(&self) -> u64 {
            0
        }
        fn send(&mut self, message: &Value, _text: &str) -> std::io::Result<()> {
            let id = message["id"].as_i64().unwrap_or(0);
            self.sent = Some((Instant::now(), id));
            Ok(())
        }
        fn recv_until(&mut self, deadline: Instant) -> Option<Incoming> {
            let (sent, id) = self.sent?;
            let (after, _) = self.script.front()?;
            let due = sent + Duration::from_millis(*after);
            if due > deadline {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                return None;
            }
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            let (_, mut message) = self.script.pop_front()?;
            if message.get("id").is_some() {
                message["id"] = json!(id);
            }
            Some(Incoming::Line {
                bytes: message.to_string().into_bytes(),
                cut_from: None,
                t_us: 0,
            })
        }
        fn try_recv(&mut self) -> Option<Incoming> {
            None
        }
        fn close(&mut self) {}
    }

    fn progress(token: &str, n: u32) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": token, "progress": n}})
    }

    fn answer() -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "result": {"content": []}})
    }

    const TIMEOUT: Duration = Duration::from_millis(200);

    fn call(script: Vec<(u64, Value)>, ceiling: Duration) -> Result<RpcResponse, WireError> {
        let mut rpc = RpcClient::new(Scheduled::new(script));
        rpc.request_with_progress("tools/call", json!({}), json!("call-1"), TIMEOUT, ceiling)
    }

    #[test]
    fn progress_on_the_call_gives_it_its_timeout_again() {
        // Every report comes before the timeout runs out; the answer comes
        // three timeouts after the request.
        let script = vec![
            (150, progress("call-1", 1)),
            (300, progress("call-1", 2)),
            (450, progress("call-1", 3)),
            (600, answer()),
        ];
        let answer = call(script, Duration::from_secs(10)).expect("answered");
        assert_eq!(answer, RpcResponse::Result(json!({"content": []})));
    }

    #[test]
    fn progress_for_another_token_extends_nothing() {
        let script = vec![
            (150, progress("call-9", 1)),
            (300, progress("call-9", 2)),
            (600, answer()),
        ];
        let error = call(script, Duration::from_secs(10)).expect_err("timed out");
        assert!(matches!(error, WireError::Timeout { .. }), "{error}");
    }

    #[test]
    fn progress_never_holds_a_call_past_the_ceiling() {
        let script = vec![
            (150, progress("call-1", 1)),
            (300, progress("call-1", 2)),
            (450, progress("call-1", 3)),
            (600, answer()),
        ];
        let error = call(script, Duration::from_millis(400)).expect_err("held at the ceiling");
        match error {
            WireError::ProgressCeiling {
                ceiling_ms,
                reports,
                ..
            } => {
                assert_eq!(ceiling_ms, 400);
                assert_eq!(reports, 2);
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_plain_request_ignores_progress() {
        let mut rpc = RpcClient::new(Scheduled::new(vec![
            (150, progress("call-1", 1)),
            (300, answer()),
        ]));
        let error = rpc
            .request("tools/call", json!({}), TIMEOUT)
            .expect_err("timed out");
        assert!(
            matches!(
                error,
                WireError::Timeout {
                    timeout_ms: 200,
                    ..
                }
            ),
            "{error}"
        );
    }
}
