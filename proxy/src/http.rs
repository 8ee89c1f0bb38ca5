//! The proxy over Streamable HTTP (`--listen 127.0.0.1:PORT`), for hosts
//! that reach their servers by URL.
//!
//! A small blocking HTTP/1.1 server of our own, on loopback only: the
//! protocol needs four things (POST, GET, DELETE, a chunked event stream)
//! and a thread per connection, like the wire's client; a server crate
//! would bring an async runtime or buffer event streams, which a relay must
//! never do. Every POSTed message is recorded and forwarded unchanged; a
//! request is answered with an event stream carrying whatever the server
//! sends for it, its answer last. Messages of the server's own (requests,
//! notifications) go on the newest open request stream, else the host's GET
//! stream, else wait for one.
//!
//! Sessions: `initialize` opens one (the proxy issues the
//! `Mcp-Session-Id`). A launched server holds one session at a time, so a
//! second `initialize` starts a fresh process in the same jail (the stores
//! keep what the first session did) and the old session id is answered 404,
//! as an expired session is. 2026-07-28 requests carry no session and go to
//! the current connection.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender as Channel, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use witness_jail::interrupt;
use witness_wire::{Incoming, MAX_LINE_BYTES};

use crate::message::{self, IdKey, Kind};
use crate::stdio::Ended;
use crate::upstream::{OnIncoming, ProxyOptions, Sender, Upstream, connect, prepare};
use crate::witness::Witness;
use crate::{Notice, Notify};
use witness_jail::OpenTarget;

/// Longest request head (request line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// Messages of the server's own kept for a stream that is not open yet.
const MAX_QUEUED: usize = 1_024;
/// An open stream with nothing to carry gets a comment this often, which
/// also finds out when the host has gone.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What the connections share.
struct Hub {
    witness: Option<Witness>,
    session: u32,
    session_id: Option<String>,
    initialized: bool,
    upstream: Option<Upstream>,
    sender: Option<Sender>,
    streams: Vec<(Option<IdKey>, Channel<Vec<u8>>)>,
    get: Option<Channel<Vec<u8>>>,
    queued: VecDeque<Vec<u8>>,
    /// Taken when the proxy stops, so the jail is removed then, whatever
    /// connection threads still hold the hub.
    target: Option<OpenTarget>,
}

type Shared = Arc<Mutex<Hub>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Serves `listen` until a signal. `Err` (one line) means nothing was proxied.
/// What the proxy has to say goes to `notify`.
pub fn run(options: &ProxyOptions, listen: SocketAddr, notify: Notify) -> Result<Ended, String> {
    let listener =
        TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let prepared = prepare(options, notify.clone())?;
    if let Some(warning) = &prepared.warning {
        notify(&Notice::Warning(warning.clone()));
    }
    let hub: Shared = Arc::new(Mutex::new(Hub {
        witness: Some(prepared.witness),
        session: 1,
        session_id: None,
        initialized: false,
        upstream: None,
        sender: None,
        streams: Vec::new(),
        get: None,
        queued: VecDeque::new(),
        target: Some(prepared.target),
    }));
    attach(&hub, prepared.connection, 1)?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    notify(&Notice::Listening(bound));
    let reason = loop {
        if let Some(signal) = interrupt::signal() {
            break crate::stopped_by(signal);
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let hub = hub.clone();
                let _ = std::thread::Builder::new()
                    .name("mcp-witness-conn".into())
                    .spawn(move || serve(stream, &hub));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let upstream = {
        let mut hub = lock(&hub);
        if let Some(w) = hub.witness.as_mut() {
            w.before_stop();
        }
        hub.sender = None;
        hub.upstream.take()
    };
    if let Some(upstream) = upstream {
        upstream.stop();
    }
    let mut hub = lock(&hub);
    hub.streams.clear();
    hub.get = None;
    if let Some(w) = hub.witness.take() {
        w.finish(&reason);
    }
    drop(hub.target.take());
    Ok(Ended { reason })
}

/// Makes `connection` the hub's upstream, for `session`.
fn attach(
    hub: &Shared,
    connection: witness_wire::connection::Connection,
    session: u32,
) -> Result<(), String> {
    let upstream = Upstream::start(connection, route(hub.clone(), session))?;
    let mut state = lock(hub);
    state.sender = Some(upstream.sender());
    state.upstream = Some(upstream);
    Ok(())
}

/// The pump's handler: record, then hand to the stream waiting for it.
fn route(hub: Shared, session: u32) -> OnIncoming {
    Box::new(move |incoming| {
        let mut state = lock(&hub);
        if state.session != session {
            return; // a replaced upstream finishing
        }
        match incoming {
            Incoming::Line { bytes, .. } => {
                let version = state
                    .witness
                    .as_mut()
                    .and_then(|w| w.from_server(Some(session), &bytes));
                if let (Some(version), Some(sender)) = (version, &state.sender) {
                    sender.negotiated(&version);
                }
                if let Some(sender) = &state.sender {
                    sender.learn_tool_headers(&bytes);
                }
                deliver(&mut state, bytes);
            }
            Incoming::Closed { detail, .. } => {
                if let Some(w) = state.witness.as_mut() {
                    w.warn(format!("the server ended: {detail}"));
                }
                state.sender = None;
                state.streams.clear();
            }
            Incoming::Failed {
                request, detail, ..
            } => {
                if let Some(w) = state.witness.as_mut() {
                    w.warn(format!("the upstream exchange failed: {detail}"));
                }
                if let Some(id) = request {
                    let key = id.to_string();
                    state
                        .streams
                        .retain(|(k, _)| k.as_deref() != Some(key.as_str()));
                }
            }
        }
    })
}

/// An answer to the stream of its request; anything else to the newest
/// open request stream, the GET stream, or the queue.
fn deliver(state: &mut Hub, bytes: Vec<u8>) {
    if let Kind::Response { id } = message::read(&bytes).kind {
        if let Some(at) = state
            .streams
            .iter()
            .position(|(k, _)| k.as_ref() == Some(&id))
        {
            let (_, stream) = state.streams.remove(at);
            let _ = stream.send(bytes);
        }
        return;
    }
    if let Some((_, stream)) = state.streams.last()
        && stream.send(bytes.clone()).is_ok()
    {
        return;
    }
    if let Some(get) = &state.get
        && get.send(bytes.clone()).is_ok()
    {
        return;
    }
    if state.queued.len() < MAX_QUEUED {
        state.queued.push_back(bytes);
    }
}

/// One request as read from the host.
struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Serves one connection's requests, one after the other.
fn serve(stream: TcpStream, hub: &Shared) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(300)));
    let Ok(reading) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    let mut writer = stream;
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(status) => {
                let _ = respond(&mut writer, status, &[], b"");
                return;
            }
        };
        let close = request
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        if !answer(&mut writer, hub, &request) || close {
            return;
        }
    }
}

/// Answers one request; false when the connection must close.
fn answer(writer: &mut TcpStream, hub: &Shared, request: &Request) -> bool {
    if !local_origin(request.header("origin")) {
        return respond(writer, 403, &[], b"Origin not allowed").is_ok();
    }
    match request.method.as_str() {
        "POST" => post(writer, hub, request),
        "GET" => get(writer, hub),
        "DELETE" => {
            let mut state = lock(hub);
            let matches = state.session_id.is_some()
                && state.session_id.as_deref() == request.header("mcp-session-id");
            if matches {
                state.session_id = None;
            }
            drop(state);
            respond(writer, if matches { 200 } else { 404 }, &[], b"").is_ok()
        }
        _ => respond(writer, 405, &[("Allow", "GET, POST, DELETE")], b"").is_ok(),
    }
}

/// A browser page must not reach the proxy: an `Origin` other than loopback
/// is refused (DNS rebinding).
fn local_origin(origin: Option<&str>) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let host = origin
        .split("://")
        .nth(1)
        .unwrap_or_default()
        .trim_end_matches('/');
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

fn post(writer: &mut TcpStream, hub: &Shared, request: &Request) -> bool {
    let read = message::read(&request.body);
    let (session, issued) = match session_for(hub, request, &read.kind) {
        Ok(found) => found,
        Err(status) => return respond(writer, status, &[], b"").is_ok(),
    };
    let mut waiting = None;
    let sender = {
        let mut state = lock(hub);
        if let Some(w) = state.witness.as_mut() {
            w.from_host(Some(session), &request.body);
        }
        if let Kind::Request { id, .. } = &read.kind {
            let (tx, rx) = channel();
            state.streams.push((Some(id.clone()), tx));
            waiting = Some(rx);
        }
        state.sender.clone()
    };
    let text = String::from_utf8_lossy(&request.body);
    let sent = sender.map(|s| s.send(&text));
    if !matches!(sent, Some(Ok(()))) {
        if let Some(w) = lock(hub).witness.as_mut() {
            w.warn("a host message could not be forwarded: the server is gone".into());
        }
        return respond(writer, 502, &[], b"the server behind the proxy is gone").is_ok();
    }
    let Some(rx) = waiting else {
        return respond(writer, 202, &[], b"").is_ok();
    };
    let mut headers = vec![
        ("Content-Type", "text/event-stream"),
        ("Cache-Control", "no-cache"),
    ];
    if let Some(id) = issued.as_deref() {
        headers.push(("Mcp-Session-Id", id));
    }
    stream_events(writer, &rx, &headers, true)
}

/// The session a POST belongs to, and the id issued when it opens one.
fn session_for(hub: &Shared, request: &Request, kind: &Kind) -> Result<(u32, Option<String>), u16> {
    let opens = matches!(kind, Kind::Request { method, .. } if method == "initialize");
    if matches!(kind, Kind::Other) {
        return Err(400);
    }
    if !opens {
        let state = lock(hub);
        return match (request.header("mcp-session-id"), &state.session_id) {
            (Some(given), Some(current)) if given == current => Ok((state.session, None)),
            (Some(_), _) => Err(404),
            (None, _) => Ok((state.session, None)),
        };
    }
    let (restart, session) = {
        let mut state = lock(hub);
        let restart = state.initialized;
        if restart {
            state.session += 1;
            let old = state.session - 1;
            if let Some(w) = state.witness.as_mut() {
                w.forget_session(Some(old));
            }
        }
        state.initialized = true;
        (restart, state.session)
    };
    if restart {
        restart_upstream(hub, session).map_err(|_| 502u16)?;
    }
    let id = session_id(session);
    lock(hub).session_id = Some(id.clone());
    Ok((session, Some(id)))
}

/// A fresh server process (or upstream connection) for a new session.
fn restart_upstream(hub: &Shared, session: u32) -> Result<(), String> {
    let old = {
        let mut state = lock(hub);
        state.sender = None;
        state.streams.clear();
        state.upstream.take()
    };
    if let Some(old) = old {
        old.stop();
    }
    let connection = match lock(hub).target.as_mut() {
        Some(target) => connect(target),
        None => Err("the proxy is stopping".to_owned()),
    };
    match connection {
        Ok(connection) => attach(hub, connection, session),
        Err(e) => {
            if let Some(w) = lock(hub).witness.as_mut() {
                w.warn(format!("cannot start the server for a new session: {e}"));
            }
            Err(e)
        }
    }
}

/// A session id no one can guess from outside the machine: a digest of the
/// process, the time and the session number.
fn session_id(session: u32) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{}-{now}-{session}", std::process::id());
    blake3::hash(seed.as_bytes()).to_hex()[..32].to_owned()
}

fn get(writer: &mut TcpStream, hub: &Shared) -> bool {
    let (tx, rx) = channel();
    {
        let mut state = lock(hub);
        if state.session_id.is_none() {
            drop(state);
            return respond(writer, 405, &[("Allow", "POST, DELETE")], b"").is_ok();
        }
        while let Some(bytes) = state.queued.pop_front() {
            let _ = tx.send(bytes);
        }
        state.get = Some(tx);
    }
    let headers = [
        ("Content-Type", "text/event-stream"),
        ("Cache-Control", "no-cache"),
    ];
    stream_events(writer, &rx, &headers, false)
}

/// Writes an event stream until its answer went by (`until_answer`) or its
/// channel closed; false when the host went away.
fn stream_events(
    writer: &mut TcpStream,
    rx: &Receiver<Vec<u8>>,
    headers: &[(&str, &str)],
    until_answer: bool,
) -> bool {
    let mut head = String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if writer
        .write_all(head.as_bytes())
        .and_then(|()| writer.flush())
        .is_err()
    {
        return false;
    }
    loop {
        let event = match rx.recv_timeout(KEEP_ALIVE) {
            Ok(bytes) => {
                let answer = matches!(message::read(&bytes).kind, Kind::Response { .. });
                let mut event = b"event: message\ndata: ".to_vec();
                event.extend_from_slice(&bytes);
                event.extend_from_slice(b"\n\n");
                if chunk(writer, &event).is_err() {
                    return false;
                }
                if answer && until_answer {
                    break;
                }
                continue;
            }
            Err(RecvTimeoutError::Timeout) => b": keep-alive\n\n".to_vec(),
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if chunk(writer, &event).is_err() {
            return false;
        }
    }
    writer
        .write_all(b"0\r\n\r\n")
        .and_then(|()| writer.flush())
        .is_ok()
}

fn chunk(writer: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    writer.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
    writer.write_all(bytes)?;
    writer.write_all(b"\r\n")?;
    writer.flush()
}

fn respond(
    writer: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        502 => "Bad Gateway",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    writer.write_all(head.as_bytes())?;
    writer.write_all(body)?;
    writer.flush()
}

/// Reads one request; `Ok(None)` when the host closed the connection, an
/// HTTP status when the request is not one the proxy takes.
fn read_request(reader: &mut BufReader<TcpStream>) -> Result<Option<Request>, u16> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let n = reader
            .by_ref()
            .take((MAX_HEAD - before.min(MAX_HEAD)) as u64 + 1)
            .read_until(b'\n', &mut head)
            .map_err(|_| 400u16)?;
        if n == 0 {
            return if head.is_empty() { Ok(None) } else { Err(400) };
        }
        if head.len() > MAX_HEAD {
            return Err(413);
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
        if head == b"\r\n" || head == b"\n" {
            head.clear(); // a stray line break between requests
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let method = lines
        .next()
        .and_then(|l| l.split_whitespace().next())
        .ok_or(400u16)?
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut request = Request {
        method,
        headers,
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        return Err(411);
    }
    let length: usize = match request.header("content-length") {
        Some(value) => value.parse().map_err(|_| 400u16)?,
        None => 0,
    };
    if length > MAX_LINE_BYTES {
        return Err(413);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|_| 400u16)?;
    request.body = body;
    Ok(Some(request))
}
