//! Streamable HTTP: every client message is its own POST to one endpoint.
//!
//! The server answers a request with either one JSON object or a Server-Sent
//! Events stream that may carry notifications and requests of its own before
//! the final response; a notification or a response we send is answered with
//! `202 Accepted`. Each POST runs on its own thread, which turns whatever comes
//! back into [`Incoming`] messages on the same queue the stdio transport uses,
//! so [`crate::rpc::RpcClient`] cannot tell the transports apart.
//!
//! Legacy sessions (protocol 2025-03-26 to 2025-11-25): the `Mcp-Session-Id`
//! the server assigns is sent back on every later POST and deleted on close,
//! and `MCP-Protocol-Version` carries the negotiated version. For 2026-07-28
//! (messages with the `_meta` envelope) `MCP-Protocol-Version`, `Mcp-Method`
//! and, for `tools/call`, `resources/read` and `prompts/get`, `Mcp-Name` are
//! mirrored from the body.
//!
//! We never open the standing GET stream: whatever a server sends only there
//! is not seen. A POST's stream that ends before its response after an event
//! id is resumed by GET with `Last-Event-ID` (SEP-1699, [`resume`]). A
//! protected endpoint's requests carry what its [`Authorizer`] supplies; a
//! `401` or `403` is handed to it and the request retried, at most
//! [`MAX_AUTH_RETRIES`] times. Bounds: a JSON body or one SSE event's data is kept up to
//! [`MAX_LINE_BYTES`] (cut beyond, like a stdout line); every exchange, body
//! included, ends at the transport's timeout, so a stream that never ends
//! cannot hold us; redirects are not followed and no proxy is used.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::auth::{Authorizer, Credentials, MAX_AUTH_RETRIES};
use crate::clock::Clock;
use crate::headers::{self, ParamHeader};
use crate::{Incoming, MAX_LINE_BYTES, Transport};

mod resume;
pub use resume::{DEFAULT_RETRY_MS, MAX_RESUMES};

/// Longest `Mcp-Session-Id` we keep and send back.
pub const MAX_SESSION_ID_BYTES: usize = 1024;

/// The media types a client must accept.
const ACCEPT: &str = "application/json, text/event-stream";

/// A validated MCP endpoint. Its URL never enters a report.
#[derive(Clone)]
pub struct Endpoint {
    url: String,
    loopback: bool,
    /// The credentials its requests carry, when it is protected.
    auth: Option<Arc<dyn Authorizer>>,
}

impl PartialEq for Endpoint {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url && self.auth.is_some() == other.auth.is_some()
    }
}

impl Eq for Endpoint {}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a token in its query: never print it by accident.
        f.debug_struct("Endpoint")
            .field("loopback", &self.loopback)
            .field("authorized", &self.auth.is_some())
            .finish_non_exhaustive()
    }
}

/// Why `--url` was refused (exit 2, before anything is contacted).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("--url must be an http:// or https:// URL")]
    Scheme,
    #[error("--url must be printable ASCII without spaces")]
    Characters,
    #[error("--url has no host")]
    NoHost,
    #[error("--url must not carry user information (user:password@)")]
    UserInfo,
    #[error("--url must not carry a fragment (#...)")]
    Fragment,
    #[error("--url has an invalid port")]
    Port,
    #[error("--url is not a valid URL")]
    Invalid,
    #[error("--url points at a remote (non-loopback) host: it must use https")]
    RemoteNeedsHttps,
    #[error("--url points at a remote (non-loopback) host: pass --allow-remote-http to allow it")]
    RemoteNotAllowed,
}

impl Endpoint {
    /// Validates `text`. Loopback endpoints (`localhost`, 127.0.0.0/8, `[::1]`)
    /// may use http or https; any other host needs https and `allow_remote`.
    pub fn parse(text: &str, allow_remote: bool) -> Result<Self, EndpointError> {
        if text.is_empty() || !text.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(EndpointError::Characters);
        }
        let lower = text.to_ascii_lowercase();
        let (https, rest) = if let Some(rest) = lower.strip_prefix("https://") {
            (true, &text[text.len() - rest.len()..])
        } else if let Some(rest) = lower.strip_prefix("http://") {
            (false, &text[text.len() - rest.len()..])
        } else {
            return Err(EndpointError::Scheme);
        };
        if text.contains('#') {
            return Err(EndpointError::Fragment);
        }
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(EndpointError::UserInfo);
        }
        let (host, port) = split_host_port(authority)?;
        if host.is_empty() {
            return Err(EndpointError::NoHost);
        }
        if let Some(port) = port
            && !matches!(port.parse::<u16>(), Ok(p) if p > 0)
        {
            return Err(EndpointError::Port);
        }
        if ureq::http::Uri::try_from(text).is_err() {
            return Err(EndpointError::Invalid);
        }
        let loopback = is_loopback(host);
        if !loopback {
            if !https {
                return Err(EndpointError::RemoteNeedsHttps);
            }
            if !allow_remote {
                return Err(EndpointError::RemoteNotAllowed);
            }
        }
        Ok(Self {
            url: text.to_owned(),
            loopback,
            auth: None,
        })
    }

    pub fn is_loopback(&self) -> bool {
        self.loopback
    }

    /// The same endpoint, its requests carrying what `auth` supplies.
    pub fn with_auth(mut self, auth: Arc<dyn Authorizer>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The URL, for the one who must derive other addresses from it (the
    /// OAuth discovery); never for a report.
    pub fn url(&self) -> &str {
        &self.url
    }
}

fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), EndpointError> {
    if let Some(rest) = authority.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(EndpointError::Invalid);
        };
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(EndpointError::Invalid),
            },
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Ok((host, Some(port))),
        None => Ok((authority, None)),
    }
}

fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return v4.is_loopback();
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return IpAddr::V6(v6).is_loopback();
    }
    false
}

/// What the exchanges of one connection share.
#[derive(Default)]
struct Shared {
    session_id: Option<String>,
    protocol_version: Option<String>,
    /// Each tool's parameters mirrored into `Mcp-Param-*` headers (SEP-2243),
    /// as the session read them from the catalog.
    tool_headers: BTreeMap<String, Vec<ParamHeader>>,
}

/// Keeps the wire's order over HTTP, where every POST is an exchange of its
/// own: a notification or a response must have been acknowledged (its
/// status line received) before the next message goes out, so that the
/// server sees `notifications/initialized` before the call that follows
/// it. A request holds nothing back: its answer may stream for as long as
/// it takes while other requests go out beside it.
#[derive(Default)]
struct Order {
    unacknowledged: Mutex<u32>,
    acknowledged: Condvar,
}

impl Order {
    /// Waits until every earlier notification and response was
    /// acknowledged, or `limit` passed (that exchange then fails on its own
    /// timeout and says so).
    fn wait(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut pending = lock(&self.unacknowledged);
        while *pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            pending = match self.acknowledged.wait_timeout(pending, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    fn hold(&self) {
        *lock(&self.unacknowledged) += 1;
    }

    fn release(&self) {
        let mut pending = lock(&self.unacknowledged);
        *pending = pending.saturating_sub(1);
        self.acknowledged.notify_all();
    }
}

/// Releases the order when the exchange that held it ends, however it ends.
struct Acknowledge(Option<Arc<Order>>);

impl Acknowledge {
    fn now(&mut self) {
        if let Some(order) = self.0.take() {
            order.release();
        }
    }
}

impl Drop for Acknowledge {
    fn drop(&mut self) {
        self.now();
    }
}

/// One Streamable HTTP connection (a legacy session, or a series of
/// self-contained 2026-07-28 requests).
pub struct HttpTransport {
    endpoint: Endpoint,
    agent: ureq::Agent,
    shared: Arc<Mutex<Shared>>,
    order: Arc<Order>,
    tx: SyncSender<Incoming>,
    rx: Receiver<Incoming>,
    clock: Arc<dyn Clock>,
    timeout: Duration,
    closed: bool,
}

impl HttpTransport {
    /// Prepares a connection; nothing is sent until the first message.
    /// `timeout` bounds every exchange, from connecting to the last byte of the body.
    pub fn new(endpoint: Endpoint, clock: Arc<dyn Clock>, timeout: Duration) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .user_agent(concat!("mcp-witness/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let (tx, rx) = sync_channel(1024);
        Self {
            endpoint,
            agent,
            shared: Arc::new(Mutex::new(Shared::default())),
            order: Arc::default(),
            tx,
            rx,
            clock,
            timeout,
            closed: false,
        }
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        lock(&self.shared)
    }

    /// What posting one message needs, detached from the transport.
    fn poster(&self) -> Poster {
        Poster {
            url: self.endpoint.url.clone(),
            auth: self.endpoint.auth.clone(),
            agent: self.agent.clone(),
            shared: self.shared.clone(),
            order: self.order.clone(),
            tx: self.tx.clone(),
            clock: self.clock.clone(),
            timeout: self.timeout,
        }
    }
}

/// Posts messages of one connection; the transport's own sends and its
/// outbox go through one.
struct Poster {
    url: String,
    auth: Option<Arc<dyn Authorizer>>,
    agent: ureq::Agent,
    shared: Arc<Mutex<Shared>>,
    order: Arc<Order>,
    tx: SyncSender<Incoming>,
    clock: Arc<dyn Clock>,
    timeout: Duration,
}

impl Poster {
    /// One POST on its own thread; what comes back joins the transport's
    /// queue. It goes out once every earlier notification and response was
    /// acknowledged ([`Order`]).
    fn post(&self, message: &Value, text: &str) -> std::io::Result<()> {
        self.order.wait(self.timeout);
        let is_request = message.get("method").is_some() && message.get("id").is_some();
        let acknowledge = if is_request {
            Acknowledge(None)
        } else {
            self.order.hold();
            Acknowledge(Some(self.order.clone()))
        };
        let headers = request_headers(message, &lock(&self.shared));
        let request = match (message.get("method"), message.get("id")) {
            (Some(_), Some(id)) => id.as_i64(),
            _ => None,
        };
        let exchange = Exchange {
            agent: self.agent.clone(),
            url: self.url.clone(),
            auth: self.auth.clone(),
            deadline: Instant::now() + timeout_of(&self.agent),
            headers,
            body: text.to_owned(),
            request,
            expects_answer: is_request,
            shared: self.shared.clone(),
            tx: self.tx.clone(),
            clock: self.clock.clone(),
        };
        // Not spawned: the acknowledgement is dropped here, and the order
        // released.
        thread::Builder::new()
            .name("mcp-witness-http".into())
            .spawn(move || exchange.run(acknowledge))
            .map(|_| ())
    }
}

impl crate::Outbox for Poster {
    fn send(&self, message: &Value, text: &str) -> std::io::Result<()> {
        self.post(message, text)
    }

    fn negotiated(&self, protocol_version: &str) {
        lock(&self.shared).protocol_version = Some(protocol_version.to_owned());
    }

    fn tool_headers(&self, tool: &str, declared: Vec<ParamHeader>) {
        remember_tool_headers(&mut lock(&self.shared), tool, declared);
    }
}

/// Keeps (or, with none, forgets) the headers a tool's calls mirror.
fn remember_tool_headers(shared: &mut Shared, tool: &str, declared: Vec<ParamHeader>) {
    if declared.is_empty() {
        shared.tool_headers.remove(tool);
    } else {
        shared.tool_headers.insert(tool.to_owned(), declared);
    }
}

fn lock<T>(shared: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match shared.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> &'static str {
        "http"
    }

    fn now_us(&self) -> u64 {
        self.clock.now_us()
    }

    fn send(&mut self, message: &Value, text: &str) -> std::io::Result<()> {
        if self.closed {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the HTTP connection was closed",
            ));
        }
        self.poster().post(message, text)
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Incoming> {
        let wait = deadline.saturating_duration_since(Instant::now());
        // We hold a sender ourselves, so the queue never disconnects.
        self.rx.recv_timeout(wait).ok()
    }

    fn try_recv(&mut self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }

    fn negotiated(&mut self, protocol_version: &str) {
        self.shared().protocol_version = Some(protocol_version.to_owned());
    }

    fn tool_headers(&mut self, tool: &str, declared: Vec<ParamHeader>) {
        remember_tool_headers(&mut self.shared(), tool, declared);
    }

    fn outbox(&self) -> Option<Box<dyn crate::Outbox>> {
        (!self.closed).then(|| Box::new(self.poster()) as Box<dyn crate::Outbox>)
    }

    /// Deletes a legacy session (best effort, briefly); later sends fail.
    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        let session = self.shared().session_id.clone();
        if let Some(session) = session {
            let mut builder = self
                .agent
                .delete(&self.endpoint.url)
                .header("Mcp-Session-Id", &session);
            if let Some(version) = self.shared().protocol_version.clone() {
                builder = builder.header("MCP-Protocol-Version", &version);
            }
            if let Some(auth) = &self.endpoint.auth {
                for (name, value) in auth.credentials().headers {
                    builder = builder.header(name, value.expose());
                }
            }
            let _ = builder
                .config()
                .timeout_global(Some(self.timeout.min(Duration::from_secs(2))))
                .build()
                .call();
        }
    }
}

/// Headers for one POST, from the message and what the session has learnt.
fn request_headers(message: &Value, shared: &Shared) -> Vec<(String, String)> {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("Accept".to_owned(), ACCEPT.to_owned()),
    ];
    let modern = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    if let Some(version) = modern {
        headers.push(("MCP-Protocol-Version".to_owned(), header_safe(version)));
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            headers.push(("Mcp-Method".to_owned(), header_safe(method)));
            if matches!(method, "tools/call" | "resources/read" | "prompts/get") {
                let params = message.get("params");
                let name = params
                    .and_then(|p| p.get("name"))
                    .or_else(|| params.and_then(|p| p.get("uri")))
                    .and_then(Value::as_str);
                if let Some(name) = name {
                    headers.push(("Mcp-Name".to_owned(), header_safe(name)));
                    if method == "tools/call"
                        && let Some(declared) = shared.tool_headers.get(name)
                    {
                        let arguments = params
                            .and_then(|p| p.get("arguments"))
                            .and_then(Value::as_object);
                        headers.extend(headers::mirrored(declared, arguments, header_safe));
                    }
                }
            }
        }
    } else {
        if let Some(version) = &shared.protocol_version {
            headers.push(("MCP-Protocol-Version".to_owned(), header_safe(version)));
        }
        if let Some(session) = &shared.session_id {
            headers.push(("Mcp-Session-Id".to_owned(), session.clone()));
        }
    }
    headers
}

/// A header value as the 2026-07-28 transport encodes it: plain when it is
/// visible ASCII without surrounding spaces, else `=?base64?…?=`.
pub fn header_safe(value: &str) -> String {
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let visible = value
        .bytes()
        .all(|b| b == b' ' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let plain = !value.is_empty() && visible && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One POST and whatever comes back, on its own thread.
struct Exchange {
    agent: ureq::Agent,
    url: String,
    auth: Option<Arc<dyn Authorizer>>,
    /// When the exchange, resumptions included, must be over.
    deadline: Instant,
    headers: Vec<(String, String)>,
    body: String,
    /// The id of the client request this POST carries, when it is one.
    request: Option<i64>,
    expects_answer: bool,
    shared: Arc<Mutex<Shared>>,
    tx: SyncSender<Incoming>,
    clock: Arc<dyn Clock>,
}

impl Exchange {
    fn run(self, mut acknowledge: Acknowledge) {
        let mut retries = 0;
        let response = loop {
            let credentials = self
                .auth
                .as_ref()
                .map(|a| a.credentials())
                .unwrap_or_default();
            let mut builder = self.agent.post(&self.url);
            for (name, value) in &self.headers {
                builder = builder.header(name.as_str(), value);
            }
            for (name, value) in &credentials.headers {
                builder = builder.header(name, value.expose());
            }
            let response = match builder.send(self.body.as_bytes()) {
                Ok(response) => response,
                Err(e) => {
                    self.fail(format!("the POST failed: {}", describe(&e)));
                    return;
                }
            };
            let status = response.status().as_u16();
            let Some(auth) = self.auth.as_ref().filter(|_| matches!(status, 401 | 403)) else {
                break response;
            };
            if retries == MAX_AUTH_RETRIES {
                self.fail(format!(
                    "HTTP {status}: the server still refuses after {MAX_AUTH_RETRIES} new credentials"
                ));
                return;
            }
            let challenge = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok());
            let nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok());
            match auth.refused(credentials.generation, status, challenge, nonce) {
                Ok(true) => retries += 1,
                Ok(false) => break response,
                Err(e) => {
                    self.fail(format!("HTTP {status}: authorization failed: {e}"));
                    return;
                }
            }
        };
        // The status line of the POST that counts is in (a refused one was
        // retried first): the next message may go. Every early return above
        // acknowledges by dropping `acknowledge`.
        acknowledge.now();
        let status = response.status().as_u16();
        if let Some(value) = response.headers().get("mcp-session-id") {
            let bytes = value.as_bytes();
            let valid = !bytes.is_empty()
                && bytes.len() <= MAX_SESSION_ID_BYTES
                && bytes.iter().all(|b| (0x21..=0x7e).contains(b));
            if valid {
                let mut shared = lock(&self.shared);
                if shared.session_id.is_none() {
                    shared.session_id = Some(String::from_utf8_lossy(bytes).into_owned());
                }
            } else {
                self.emit(Incoming::Failed {
                    request: None,
                    detail: "the server's Mcp-Session-Id is not a visible-ASCII token of at most \
                             1024 bytes; it was ignored"
                        .into(),
                    t_us: self.clock.now_us(),
                });
            }
        }
        let media = media_type(response.headers());
        let body = response.into_body();
        let answered = match media.as_str() {
            "text/event-stream" => self.read_resumable(body.into_reader()),
            "application/json" => self.read_json(body.into_reader()),
            _ => {
                if !self.expects_answer && (200..300).contains(&status) {
                    // 202 Accepted (or any success without a body we read).
                    return;
                }
                false
            }
        };
        if !answered && self.expects_answer {
            let detail = if (200..300).contains(&status) {
                match media.as_str() {
                    "text/event-stream" => {
                        format!("HTTP {status}: the event stream ended without the response")
                    }
                    "application/json" => {
                        format!("HTTP {status}: the JSON body is not the response")
                    }
                    _ => format!("HTTP {status} without a JSON or event-stream body"),
                }
            } else {
                format!("HTTP {status}: no response to the request")
            };
            self.fail(detail);
        } else if !self.expects_answer && !(200..300).contains(&status) {
            self.fail(format!("HTTP {status} to a message that needs no answer"));
        }
    }

    /// The headers the endpoint's credentials add now.
    fn credentials(&self) -> Vec<(String, String)> {
        let credentials: Credentials = self
            .auth
            .as_ref()
            .map(|a| a.credentials())
            .unwrap_or_default();
        credentials
            .headers
            .into_iter()
            .map(|(name, value)| (name, value.expose().to_owned()))
            .collect()
    }

    fn fail(&self, detail: String) {
        self.emit(Incoming::Failed {
            request: self.request,
            detail,
            t_us: self.clock.now_us(),
        });
    }

    fn emit(&self, incoming: Incoming) -> bool {
        self.tx.send(incoming).is_ok()
    }

    /// Delivers one message; true when it is the answer to our request.
    fn deliver(&self, bytes: Vec<u8>, cut_from: Option<u64>) -> bool {
        let answers = cut_from.is_none() && self.request.is_some_and(|id| is_answer(&bytes, id));
        let sent = self.emit(Incoming::Line {
            bytes,
            cut_from,
            t_us: self.clock.now_us(),
        });
        answers || !sent
    }

    fn read_json(&self, reader: impl Read) -> bool {
        let limit = MAX_LINE_BYTES as u64;
        let mut bytes = Vec::new();
        let mut reader = reader.take(limit + 1);
        if let Err(e) = reader.read_to_end(&mut bytes) {
            self.fail_quietly(format!("the JSON body could not be read: {}", io_kind(&e)));
            return false;
        }
        if bytes.len() as u64 > limit {
            // Count the rest, within the exchange's timeout, to report the size.
            let mut total = bytes.len() as u64;
            let mut rest = reader.into_inner();
            let mut buf = [0u8; 64 * 1024];
            while let Ok(n) = rest.read(&mut buf) {
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            bytes.truncate(MAX_LINE_BYTES);
            return self.deliver(bytes, Some(total));
        }
        self.deliver(bytes, None)
    }

    /// Records a broken body as a finding without failing the request twice:
    /// the caller fails it once it knows no answer came.
    fn fail_quietly(&self, detail: String) {
        self.emit(Incoming::Failed {
            request: None,
            detail,
            t_us: self.clock.now_us(),
        });
    }
}

/// The transport's timeout, which every exchange shares.
fn timeout_of(agent: &ureq::Agent) -> Duration {
    agent
        .config()
        .timeouts()
        .global
        .unwrap_or(Duration::from_secs(60))
}

/// A response's media type, lower-cased, without parameters.
fn media_type(headers: &ureq::http::HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

fn is_answer(bytes: &[u8], id: i64) -> bool {
    let Ok(value) = crate::json::parse(bytes) else {
        // Unreadable: the client's reader decides what it was.
        return false;
    };
    if value.get("method").is_some() {
        return false;
    }
    // The same value of the same type as was sent (see rpc::id_matches).
    match value.get("id") {
        Some(Value::Number(n)) => n.as_i64() == Some(id),
        _ => false,
    }
}

/// A fixed description of a client error: never the URL, never server text.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Timeout(_) => "timed out".into(),
        ureq::Error::HostNotFound => "host not found".into(),
        ureq::Error::ConnectionFailed => "connection failed".into(),
        ureq::Error::Io(e) => format!("I/O error ({})", io_kind(e)),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "TLS error".into(),
        ureq::Error::BadUri(_) => "invalid URL".into(),
        ureq::Error::Protocol(_) => "HTTP protocol error".into(),
        ureq::Error::TooManyRedirects | ureq::Error::RedirectFailed => "redirect refused".into(),
        _ => "HTTP client error".into(),
    }
}

fn io_kind(error: &std::io::Error) -> String {
    // A ureq timeout surfaces as an io::Error wrapping ureq::Error::Timeout.
    if let Some(inner) = error.get_ref()
        && let Some(ureq::Error::Timeout(_)) = inner.downcast_ref::<ureq::Error>()
    {
        return "timed out".into();
    }
    format!("{:?}", error.kind())
        .chars()
        .flat_map(|c| {
            if c.is_ascii_uppercase() {
                vec![' ', c.to_ascii_lowercase()]
            } else {
                vec![c]
            }
        })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// One Server-Sent Event.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when present.
    pub kind: Option<String>,
    /// The `data:` lines joined with `\n`, cut at [`MAX_LINE_BYTES`].
    pub data: Vec<u8>,
    /// Total data bytes, when the data was cut.
    pub cut_from: Option<u64>,
    /// The `id:` field, when present: what a resumed stream starts after.
    pub id: Option<String>,
    /// The `retry:` field in milliseconds, when present and all digits.
    pub retry_ms: Option<u64>,
}

/// A bounded Server-Sent Events parser: lines end with CRLF, LF or CR; lines
/// starting with `:` are comments (keep-alives); a blank line ends an event.
/// No line or event grows beyond [`MAX_LINE_BYTES`].
pub struct SseReader<R: Read> {
    reader: BufReader<R>,
    /// The previous line ended with CR: skip one LF.
    after_cr: bool,
    limit: usize,
}

/// One line, bounded.
struct Line {
    bytes: Vec<u8>,
    total: u64,
}

impl<R: Read> SseReader<R> {
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, MAX_LINE_BYTES)
    }

    /// A parser with another bound (tests).
    pub fn with_limit(reader: R, limit: usize) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, reader),
            after_cr: false,
            limit,
        }
    }

    /// The next event, or `None` at the end of the stream (an unfinished
    /// event at the end is dropped, as the format requires).
    pub fn next_event(&mut self) -> std::io::Result<Option<SseEvent>> {
        let mut event = SseEvent::default();
        let mut has_data = false;
        let mut data_total: u64 = 0;
        loop {
            let Some(line) = self.next_line()? else {
                return Ok(None);
            };
            if line.total == 0 {
                if has_data
                    || event.id.is_some()
                    || event.kind.is_some()
                    || event.retry_ms.is_some()
                {
                    if data_total > self.limit as u64 {
                        event.cut_from = Some(data_total);
                    }
                    return Ok(Some(event));
                }
                continue;
            }
            if line.bytes.first() == Some(&b':') {
                continue; // a comment: keep-alive
            }
            let (field, value) = match line.bytes.iter().position(|b| *b == b':') {
                Some(i) => {
                    let value = &line.bytes[i + 1..];
                    (&line.bytes[..i], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (&line.bytes[..], &[][..]),
            };
            match field {
                b"data" => {
                    let value_total = line.total - (line.bytes.len() - value.len()) as u64;
                    if has_data {
                        data_total += 1;
                        if event.data.len() < self.limit {
                            event.data.push(b'\n');
                        }
                    }
                    has_data = true;
                    data_total += value_total;
                    let room = self.limit.saturating_sub(event.data.len());
                    event
                        .data
                        .extend_from_slice(&value[..value.len().min(room)]);
                }
                b"event" => event.kind = Some(String::from_utf8_lossy(value).into_owned()),
                // An id with a NUL is ignored, as the SSE rules say.
                b"id" if !value.contains(&0) => {
                    event.id = Some(String::from_utf8_lossy(value).into_owned())
                }
                b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                    event.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                }
                _ => {} // unknown fields are ignored
            }
        }
    }

    /// The next line without its terminator, cut at the bound; `None` at the end.
    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Line {
            bytes: Vec::new(),
            total: 0,
        };
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok(any.then_some(line));
            }
            let mut start = 0;
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    start = 1;
                }
            }
            let rest = &chunk[start..];
            match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                Some(i) => {
                    take(self.limit, &mut line, &rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    self.reader.consume(start + i + 1);
                    return Ok(Some(line));
                }
                None => {
                    let n = rest.len();
                    if n > 0 {
                        any = true;
                    }
                    take(self.limit, &mut line, rest);
                    self.reader.consume(start + n);
                }
            }
        }
    }
}

/// Appends to a line, keeping at most the bound plus room for a field name.
fn take(limit: usize, line: &mut Line, part: &[u8]) {
    let room = (limit + 8).saturating_sub(line.bytes.len());
    line.bytes.extend_from_slice(&part[..part.len().min(room)]);
    line.total += part.len() as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, limit: usize) -> Vec<SseEvent> {
        let mut reader = SseReader::with_limit(text.as_bytes(), limit);
        let mut out = Vec::new();
        while let Ok(Some(event)) = reader.next_event() {
            out.push(event);
        }
        out
    }

    #[test]
    fn sse_events_with_ids_comments_and_every_line_ending() {
        let text = ": keep-alive\r\n\r\nevent: message\r\nid: 7\r\ndata: {\"a\":1}\r\n\r\n\
                    data: one\ndata: two\n\n: ping\rdata: three\r\r";
        let got = events(text, 1024);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].kind.as_deref(), Some("message"));
        assert_eq!(got[0].id.as_deref(), Some("7"));
        assert_eq!(got[0].data, b"{\"a\":1}");
        assert_eq!(got[1].data, b"one\ntwo");
        assert_eq!(got[2].data, b"three");
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_dropped() {
        assert!(events("data: half", 1024).is_empty());
    }

    #[test]
    fn oversized_event_data_is_cut_and_its_size_counted() {
        let big = "x".repeat(100);
        let got = events(&format!("data: {big}\ndata: {big}\n\n"), 64);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data.len(), 64);
        assert_eq!(got[0].cut_from, Some(201));
    }

    #[test]
    fn urls_are_checked_before_anything_is_contacted() {
        assert!(Endpoint::parse("http://127.0.0.1:8080/mcp", false).is_ok());
        assert!(Endpoint::parse("http://localhost/mcp", false).is_ok());
        assert!(Endpoint::parse("http://[::1]:9/mcp", false).is_ok());
        assert!(Endpoint::parse("http://127.5.0.1:9/mcp", false).is_ok());
        assert_eq!(
            Endpoint::parse("http://example.invalid/mcp", true),
            Err(EndpointError::RemoteNeedsHttps)
        );
        assert_eq!(
            Endpoint::parse("https://example.invalid/mcp", false),
            Err(EndpointError::RemoteNotAllowed)
        );
        assert!(Endpoint::parse("https://example.invalid/mcp", true).is_ok());
        assert_eq!(
            Endpoint::parse("ftp://127.0.0.1/", false),
            Err(EndpointError::Scheme)
        );
        assert_eq!(
            Endpoint::parse("http://u:p@127.0.0.1/", false),
            Err(EndpointError::UserInfo)
        );
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:0/", false),
            Err(EndpointError::Port)
        );
        assert_eq!(
            Endpoint::parse("http://127.0.0.1/a b", false),
            Err(EndpointError::Characters)
        );
        assert_eq!(
            Endpoint::parse("http:///mcp", false),
            Err(EndpointError::NoHost)
        );
        // A look-alike host is not loopback.
        assert_eq!(
            Endpoint::parse("http://127.0.0.1.example.invalid/", false),
            Err(EndpointError::RemoteNeedsHttps)
        );
        let endpoint = Endpoint::parse("http://127.0.0.1/mcp?token=abc", false);
        assert!(!format!("{endpoint:?}").contains("token"));
    }

    #[test]
    fn header_values_are_plain_or_base64_sentinels() {
        assert_eq!(header_safe("get_weather"), "get_weather");
        assert_eq!(
            header_safe("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_safe(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_safe("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_safe("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn modern_messages_mirror_method_and_name_legacy_ones_carry_the_session() {
        let modern = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let shared = Shared {
            session_id: Some("abc".into()),
            protocol_version: Some("2025-06-18".into()),
            tool_headers: BTreeMap::new(),
        };
        let headers = request_headers(&modern, &shared);
        let get = |h: &[(String, String)], k: &str| {
            h.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        };
        assert_eq!(
            get(&headers, "MCP-Protocol-Version").as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(get(&headers, "Mcp-Method").as_deref(), Some("tools/call"));
        assert_eq!(get(&headers, "Mcp-Name").as_deref(), Some("echo"));
        assert_eq!(get(&headers, "Mcp-Session-Id"), None);
        let legacy =
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let headers = request_headers(&legacy, &shared);
        assert_eq!(get(&headers, "Mcp-Session-Id").as_deref(), Some("abc"));
        assert_eq!(
            get(&headers, "MCP-Protocol-Version").as_deref(),
            Some("2025-06-18")
        );
        assert_eq!(get(&headers, "Mcp-Method"), None);
        assert_eq!(
            get(&headers, "Accept").as_deref(),
            Some("application/json, text/event-stream")
        );
    }

    #[test]
    fn a_modern_call_mirrors_its_declared_parameters_into_headers() {
        let tool = serde_json::json!({"name": "route", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "note": {"type": "string", "x-mcp-header": "Note"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "query": {"type": "string"}}}});
        let mut shared = Shared::default();
        shared
            .tool_headers
            .insert("route".into(), headers::declarations(&tool).expect("valid"));
        let call = |name: &str| {
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": name, "arguments": {"region": "us-west1", "note": "Hello, 世界",
                "priority": 42, "query": "SELECT 1"},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
        };
        let headers = request_headers(&call("route"), &shared);
        let params: Vec<(&str, &str)> = headers
            .iter()
            .filter(|(n, _)| n.starts_with("Mcp-Param-"))
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("Mcp-Param-Region", "us-west1"),
                ("Mcp-Param-Note", "=?base64?SGVsbG8sIOS4lueVjA==?="),
                ("Mcp-Param-Priority", "42"),
            ]
        );
        // Another tool's call mirrors nothing, whatever its arguments.
        let headers = request_headers(&call("other"), &shared);
        assert!(!headers.iter().any(|(n, _)| n.starts_with("Mcp-Param-")));
    }

    #[test]
    fn a_relay_handle_teaches_the_connection_a_tools_headers() {
        let endpoint = Endpoint::parse("http://127.0.0.1:9/mcp", false).expect("endpoint");
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::MonotonicClock::start());
        let http = HttpTransport::new(endpoint, clock, Duration::from_secs(1));
        let outbox = crate::Transport::outbox(&http).expect("an outbox");
        let tool = serde_json::json!({"name": "route", "inputSchema": {"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}});
        outbox.tool_headers("route", headers::declarations(&tool).expect("valid"));
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "route", "arguments": {"region": "eu"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let headers = request_headers(&call, &http.shared());
        assert!(
            headers
                .iter()
                .any(|(n, v)| n == "Mcp-Param-Region" && v == "eu"),
            "{headers:?}"
        );
        outbox.tool_headers("route", Vec::new());
        let headers = request_headers(&call, &http.shared());
        assert!(!headers.iter().any(|(n, _)| n.starts_with("Mcp-Param-")));
    }

    /// A server on loopback that holds a notification's 202 back for
    /// `hold`, and answers a request at once; it notes when each message
    /// arrived and when each acknowledgement left.
    /// What the fake server saw, in order, and when.
    type Log = Arc<Mutex<Vec<(String, Instant)>>>;

    fn slow_acknowledger(hold: Duration) -> (String, Log) {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let log: Log = Arc::default();
        let seen = log.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = seen.clone();
                // Each exchange on its own thread: the server would take
                // the call while the notification is held, were it sent.
                thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0u8; length];
                    reader.read_exact(&mut body).expect("body");
                    let message: Value = serde_json::from_slice(&body).expect("json");
                    let method = message["method"].as_str().unwrap_or_default().to_owned();
                    lock(&seen).push((format!("in {method}"), Instant::now()));
                    let mut stream = stream;
                    if message.get("id").is_some() {
                        let answer = format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{}}}}",
                            message["id"]
                        );
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                            answer.len()
                        );
                    } else {
                        thread::sleep(hold);
                        lock(&seen).push((format!("ack {method}"), Instant::now()));
                        let _ = write!(
                            stream,
                            "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                    }
                });
            }
        });
        (url, log)
    }

    #[test]
    fn a_notification_is_acknowledged_before_the_next_message_is_sent() {
        let (url, log) = slow_acknowledger(Duration::from_millis(300));
        let endpoint = Endpoint::parse(&url, false).expect("endpoint");
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::MonotonicClock::start());
        let mut http = HttpTransport::new(endpoint, clock, Duration::from_secs(5));
        let initialized =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}});
        http.send(&initialized, &initialized.to_string())
            .expect("send");
        http.send(&call, &call.to_string()).expect("send");
        let answer = http.recv_until(Instant::now() + Duration::from_secs(5));
        assert!(matches!(answer, Some(Incoming::Line { .. })), "{answer:?}");
        let order: Vec<String> = lock(&log).iter().map(|(what, _)| what.clone()).collect();
        assert_eq!(
            order,
            [
                "in notifications/initialized",
                "ack notifications/initialized",
                "in tools/call"
            ]
        );
    }

    #[test]
    fn requests_are_not_held_back_by_one_another() {
        let (url, log) = slow_acknowledger(Duration::from_millis(300));
        let endpoint = Endpoint::parse(&url, false).expect("endpoint");
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::MonotonicClock::start());
        let mut http = HttpTransport::new(endpoint, clock, Duration::from_secs(5));
        let started = Instant::now();
        for id in [1, 2, 3] {
            let call = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            http.send(&call, &call.to_string()).expect("send");
        }
        // Sending never waited on an answer: the three went out at once.
        assert!(
            started.elapsed() < Duration::from_millis(300),
            "{:?}",
            started.elapsed()
        );
        for _ in 0..3 {
            let answer = http.recv_until(Instant::now() + Duration::from_secs(5));
            assert!(matches!(answer, Some(Incoming::Line { .. })), "{answer:?}");
        }
        assert_eq!(lock(&log).len(), 3);
    }
}
