//! Resumable event streams (SEP-1699).
//!
//! A server may end a POST's event stream before the response, having sent
//! an event `id` (a priming event, often with no data) and perhaps a
//! `retry` delay. A client that gives up then loses the call; one that
//! follows the SSE rules waits `retry` milliseconds and asks again with a
//! GET carrying `Last-Event-ID`, on which the server replays or continues
//! the stream. The response that arrives there completes the call exactly
//! as if it had come on the POST.
//!
//! Bounds: at most [`MAX_RESUMES`] reconnections per call, each waiting the
//! latest `retry` (or [`DEFAULT_RETRY_MS`]), all within the exchange's one
//! timeout; a server's `retry` cannot make us wait past it.

use std::io::Read;
use std::time::{Duration, Instant};

use super::{Exchange, SseReader, describe, io_kind, lock};

/// Reconnections per call before we give up on the stream.
pub const MAX_RESUMES: u32 = 8;
/// The wait before reconnecting when the server named none.
pub const DEFAULT_RETRY_MS: u64 = 1000;

/// Where a stream got to: what a reconnection needs.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    /// The last event id seen; nothing can be resumed without one.
    pub last_id: Option<String>,
    /// The last `retry` field, in milliseconds.
    pub retry_ms: Option<u64>,
}

/// How reading one stream ended.
pub(super) enum StreamEnd {
    /// The answer to our request came.
    Answered,
    /// The stream ended (gracefully or not) without it.
    Ended,
}

impl Exchange {
    /// Reads a POST's event stream and, while it ends without the answer but
    /// could be resumed, its continuations; true when the answer came.
    pub(super) fn read_resumable(&self, reader: impl Read) -> bool {
        let mut cursor = Cursor::default();
        if matches!(self.read_stream(reader, &mut cursor), StreamEnd::Answered) {
            return true;
        }
        if self.request.is_none() {
            return false;
        }
        for _ in 0..MAX_RESUMES {
            let Some(last_id) = cursor.last_id.clone() else {
                return false;
            };
            let wait = Duration::from_millis(cursor.retry_ms.unwrap_or(DEFAULT_RETRY_MS));
            let Some(left) = self.deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            if wait >= left {
                self.fail_quietly(
                    "the event stream ended without the response, and its retry delay \
                     outlasts the request's timeout"
                        .into(),
                );
                return false;
            }
            std::thread::sleep(wait);
            match self.reconnect(&last_id) {
                Some(body) => {
                    if matches!(self.read_stream(body, &mut cursor), StreamEnd::Answered) {
                        return true;
                    }
                }
                None => return false,
            }
        }
        self.fail_quietly(format!(
            "the event stream ended without the response {MAX_RESUMES} times after resuming"
        ));
        false
    }

    /// One GET with `Last-Event-ID`; the stream's body when the server gave one.
    fn reconnect(&self, last_id: &str) -> Option<impl Read + use<>> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let mut builder = self
            .agent
            .get(&self.url)
            .header("Accept", "text/event-stream")
            .header("Last-Event-ID", last_id);
        {
            let shared = lock(&self.shared);
            if let Some(session) = &shared.session_id {
                builder = builder.header("Mcp-Session-Id", session);
            }
            if let Some(version) = &shared.protocol_version {
                builder = builder.header("MCP-Protocol-Version", version);
            }
        }
        for (name, value) in self.credentials() {
            builder = builder.header(name, value);
        }
        let response = match builder.config().timeout_global(Some(left)).build().call() {
            Ok(response) => response,
            Err(e) => {
                self.fail_quietly(format!(
                    "resuming the event stream failed: {}",
                    describe(&e)
                ));
                return None;
            }
        };
        let status = response.status().as_u16();
        let media = super::media_type(response.headers());
        if !(200..300).contains(&status) || media != "text/event-stream" {
            self.fail_quietly(format!(
                "resuming the event stream by GET got HTTP {status} without an event stream"
            ));
            return None;
        }
        Some(response.into_body().into_reader())
    }

    /// Reads events until the answer to our request arrived (then the stream
    /// is dropped) or the stream ends; `cursor` follows the ids and delays.
    pub(super) fn read_stream(&self, reader: impl Read, cursor: &mut Cursor) -> StreamEnd {
        let mut events = SseReader::new(reader);
        loop {
            match events.next_event() {
                Ok(Some(event)) => {
                    if let Some(id) = event.id {
                        // An empty id resets it, as the SSE rules say.
                        cursor.last_id = (!id.is_empty()).then_some(id);
                    }
                    if let Some(retry) = event.retry_ms {
                        cursor.retry_ms = Some(retry);
                    }
                    if !matches!(event.kind.as_deref(), None | Some("message")) {
                        continue;
                    }
                    if event.data.is_empty() && event.cut_from.is_none() {
                        // A priming event (an id and no data): nothing to read.
                        continue;
                    }
                    if self.deliver(event.data, event.cut_from) {
                        return StreamEnd::Answered;
                    }
                }
                Ok(None) => return StreamEnd::Ended,
                Err(e) => {
                    self.fail_quietly(format!("the event stream broke off: {}", io_kind(&e)));
                    return StreamEnd::Ended;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use serde_json::json;

    use crate::clock::MonotonicClock;
    use crate::http::{Endpoint, HttpTransport};
    use crate::{Incoming, Transport};

    /// One request as the fake saw it: method, headers (names lower-cased), when.
    type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>, Instant)>>>;

    /// A loopback server that answers each connection with the next of
    /// `replies` (raw HTTP, then it closes the connection).
    fn fake(replies: Vec<String>) -> (String, Seen) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        let seen: Seen = Arc::default();
        let record = seen.clone();
        std::thread::spawn(move || {
            for reply in replies {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(match stream.try_clone() {
                    Ok(s) => s,
                    Err(_) => return,
                });
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let method = first.split(' ').next().unwrap_or_default().to_owned();
                let mut headers = Vec::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.trim().split_once(':') {
                        let name = name.trim().to_ascii_lowercase();
                        if name == "content-length" {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        headers.push((name, value.trim().to_owned()));
                    }
                }
                let mut body = vec![0u8; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut body);
                if let Ok(mut seen) = record.lock() {
                    seen.push((method, headers, Instant::now()));
                }
                let _ = stream.write_all(reply.as_bytes());
                let _ = stream.flush();
            }
        });
        (format!("http://127.0.0.1:{port}/mcp"), seen)
    }

    fn stream(events: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{events}"
        )
    }

    fn transport(url: &str) -> HttpTransport {
        let Ok(endpoint) = Endpoint::parse(url, false) else {
            panic!("a loopback endpoint");
        };
        HttpTransport::new(
            endpoint,
            Arc::new(MonotonicClock::start()),
            Duration::from_secs(5),
        )
    }

    fn call(transport: &mut HttpTransport) -> Vec<Incoming> {
        let message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}}});
        let text = message.to_string();
        assert!(transport.send(&message, &text).is_ok());
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Some(incoming) = transport.recv_until(deadline) {
            let done = matches!(&incoming, Incoming::Line { bytes, .. }
                if String::from_utf8_lossy(bytes).contains("\"result\""))
                || matches!(
                    &incoming,
                    Incoming::Failed {
                        request: Some(_),
                        ..
                    }
                );
            got.push(incoming);
            if done {
                break;
            }
        }
        got
    }

    #[test]
    fn a_stream_closed_before_the_response_is_resumed_after_its_retry_delay() {
        let (url, seen) = fake(vec![
            stream("id: ev-1\nretry: 300\ndata:\n\n"),
            stream(
                "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n",
            ),
        ]);
        let got = call(&mut transport(&url));
        assert!(
            matches!(got.last(), Some(Incoming::Line { bytes, .. })
                if String::from_utf8_lossy(bytes).contains("\"id\":7")),
            "the resumed stream's response completes the call: {got:?}"
        );
        assert!(
            !got.iter().any(|i| matches!(i, Incoming::Failed { .. })),
            "{got:?}"
        );
        let Ok(seen) = seen.lock() else {
            panic!("poisoned")
        };
        assert_eq!(seen.len(), 2);
        let (method, headers, at) = &seen[1];
        assert_eq!(method, "GET");
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("last-event-id"), Some("ev-1"));
        assert_eq!(header("accept"), Some("text/event-stream"));
        let waited = at.duration_since(seen[0].2);
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert!(waited < Duration::from_millis(1000), "{waited:?}");
    }

    #[test]
    fn a_stream_without_an_event_id_cannot_be_resumed_and_fails_its_call() {
        let (url, seen) = fake(vec![stream("retry: 10\n\n: nothing\n\n")]);
        let got = call(&mut transport(&url));
        assert!(
            matches!(got.last(), Some(Incoming::Failed { request: Some(7), detail, .. })
                if detail.contains("ended without the response")),
            "{got:?}"
        );
        assert_eq!(seen.lock().map(|s| s.len()).unwrap_or_default(), 1);
    }

    #[test]
    fn a_server_refusing_the_get_ends_the_call_with_its_status() {
        let (url, _) = fake(vec![
            stream("id: 1\nretry: 10\n\n"),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                .into(),
        ]);
        let got = call(&mut transport(&url));
        assert!(
            got.iter().any(
                |i| matches!(i, Incoming::Failed { request: None, detail, .. }
                if detail.contains("GET got HTTP 405"))
            ),
            "{got:?}"
        );
        assert!(matches!(
            got.last(),
            Some(Incoming::Failed {
                request: Some(7),
                ..
            })
        ));
    }
}
