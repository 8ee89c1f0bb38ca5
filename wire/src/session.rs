//! An MCP session on top of [`RpcClient`]: era detection, the handshake,
//! the paginated catalog and tool calls.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::connection::Connection;
use crate::headers;
use crate::mrtr::{self, ClientPolicy, Round};
use crate::rpc::{PROGRESS_CEILING, RpcResponse, WireError};

/// The 2026-07-28 protocol, discovered with `server/discover`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// What we offer in a legacy `initialize`.
pub const LEGACY_OFFER: &str = "2025-11-25";
/// Legacy versions we accept as a counter-offer.
pub const LEGACY_ACCEPTED: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The JSON-RPC error a 2026-07-28 server answers a request with when it
/// does not speak the version the request names; its `data.supported`
/// lists those it does.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Catalog bounds: more than this is an incomplete catalog, never a shorter one.
pub const MAX_PAGES: u32 = 20;
pub const MAX_TOOLS: usize = 10_000;

/// Which era to speak: the word the documents record as requested, so it
/// is defined once, in the model.
pub use witness_model::vocab::EraChoice;

/// The era a session ended up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    Modern,
    Legacy,
}

/// What the handshake established, as the report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Handshake {
    pub requested: EraChoice,
    pub era: Era,
    pub protocol_version: String,
    /// How `server/discover` went, when it was tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discover: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    pub capabilities: Value,
    /// Server instructions are untrusted prose: kept for the record, escaped when shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Why a session could not be opened or went on no further.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot start the server: {0}")]
    Launch(String),
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("handshake refused: {0}")]
    Refused(String),
    /// The server settled on a protocol version we do not speak.
    #[error("handshake refused: {0}")]
    Unsupported(String),
}

/// What a legacy `initialize` offers.
#[derive(Clone, Debug)]
pub struct LegacyOffer {
    pub protocol_version: &'static str,
    /// The client capabilities declared (`{}` for an audit).
    pub capabilities: Value,
}

/// How one `tools/call` ended.
#[derive(Clone, Debug, PartialEq)]
pub enum CallOutcome {
    /// A result; the tool may still report `isError: true` inside it.
    Result(Value),
    /// A JSON-RPC error (e.g. -32602 invalid params).
    RpcError { code: i64, message: String },
    /// The transport failed: timeout, death, broken pipe.
    Transport(String),
    /// The server's last answer was not final: `input_required` with input
    /// the client does not give, past [`mrtr::MAX_INPUT_ROUNDS`], or a
    /// `resultType` it does not know. `result` is that answer.
    InputRequired { result: Value, detail: String },
}

/// The catalog as the server served it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Catalog {
    /// Each tool exactly as served (validated to have a string `name`).
    pub tools: Vec<Value>,
    pub pages: u32,
    pub complete: bool,
    /// Why the catalog is incomplete, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The same, as a fixed kind (never server text).
    #[serde(skip)]
    pub issue: Option<CatalogIssue>,
    /// Tools listed but left out of `tools`: their `x-mcp-header`
    /// declarations cannot be honoured, and SEP-2243 has a client exclude
    /// such a tool rather than call it without its headers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<ExcludedTool>,
}

/// A listed tool the client will not call, and why.
#[derive(Clone, Debug, Serialize)]
pub struct ExcludedTool {
    pub name: String,
    pub reason: String,
}

/// Why a catalog is incomplete, as a fixed kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogIssue {
    /// Pagination did not end within [`MAX_PAGES`].
    PageLimit,
    /// A cursor came back a second time.
    RepeatedCursor,
    /// `nextCursor` was neither a string nor absent.
    MalformedCursor,
    /// A page was a JSON-RPC error.
    ErrorAnswer,
    /// A page had no `tools` array, or an entry no string name or a non-object schema.
    MalformedEntry,
    /// One name listed twice.
    DuplicateTool,
    /// More than [`MAX_TOOLS`] tools.
    TooManyTools,
}

/// A live, initialized session with one server process.
pub struct Session {
    pub server: Connection,
    era: Era,
    envelope: Option<Value>,
    pub timeout: Duration,
    /// Transcripts of processes used only for era detection, then stopped.
    pub discarded: Vec<Connection>,
    /// Tool calls made so far: the next call's progress token.
    calls: u64,
    /// What the client declares, and so answers when asked for input.
    policy: ClientPolicy,
}

fn client_info() -> Value {
    json!({"name": "mcp-witness", "version": env!("CARGO_PKG_VERSION")})
}

fn envelope(policy: &ClientPolicy) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": policy.capabilities(),
        "io.modelcontextprotocol/clientInfo": client_info(),
    })
}

impl Session {
    /// Starts a server with `launch` and establishes a session in the
    /// chosen era, with an audit's client: nothing declared, every
    /// elicitation refused.
    pub fn open(
        launch: &mut dyn FnMut() -> Result<Connection, String>,
        choice: EraChoice,
        timeout: Duration,
    ) -> Result<(Session, Handshake), (SessionError, Vec<Connection>)> {
        Self::open_with(launch, choice, timeout, ClientPolicy::default())
    }

    /// [`Self::open`] with the client `policy` declares (2026-07-28: its
    /// `clientCapabilities`, and how it answers `input_required`).
    pub fn open_with(
        launch: &mut dyn FnMut() -> Result<Connection, String>,
        choice: EraChoice,
        timeout: Duration,
        policy: ClientPolicy,
    ) -> Result<(Session, Handshake), (SessionError, Vec<Connection>)> {
        let mut discarded = Vec::new();
        let mut discover_note = None;
        if choice != EraChoice::Legacy {
            let mut server = launch().map_err(|e| (SessionError::Launch(e), Vec::new()))?;
            let params = json!({"_meta": envelope(&policy)});
            let mut answer = server
                .rpc
                .request("server/discover", params.clone(), timeout);
            // A server may refuse the version a request names (SEP-2575)
            // and list those it speaks: when ours is among them the request
            // is sent once more, under a new id, naming it.
            let mut retried = false;
            if let Ok(RpcResponse::Error { code, data, .. }) = &answer
                && *code == UNSUPPORTED_PROTOCOL_VERSION
                && lists_modern(data.as_ref().and_then(|d| d.get("supported")))
            {
                retried = true;
                answer = server.rpc.request("server/discover", params, timeout);
            }
            match answer {
                Ok(RpcResponse::Result(result)) if supports_modern(&result) => {
                    let note = if retried {
                        "supported: 2026-07-28 listed in supportedVersions, on a second request \
                         (the first was refused as an unsupported version)"
                    } else {
                        "supported: 2026-07-28 listed in supportedVersions"
                    };
                    let handshake = Handshake {
                        requested: choice,
                        era: Era::Modern,
                        protocol_version: MODERN_VERSION.into(),
                        discover: Some(note.into()),
                        server_info: result
                            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                            .or_else(|| result.get("serverInfo"))
                            .cloned(),
                        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
                        instructions: result
                            .get("instructions")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    };
                    let session = Session {
                        server,
                        era: Era::Modern,
                        envelope: Some(envelope(&policy)),
                        timeout,
                        discarded,
                        calls: 0,
                        policy,
                    };
                    return Ok((session, handshake));
                }
                Ok(RpcResponse::Result(_)) => {
                    discover_note =
                        Some("answered without 2026-07-28 in supportedVersions".to_string());
                }
                Ok(RpcResponse::Error { code, .. }) => {
                    discover_note = Some(format!("refused with JSON-RPC error {code}"));
                }
                Err(e) => discover_note = Some(format!("no usable answer: {e}")),
            }
            server.shutdown();
            discarded.push(server);
            if choice == EraChoice::Modern {
                let note = discover_note.unwrap_or_default();
                return Err((
                    SessionError::Refused(format!("--era modern, but server/discover {note}")),
                    discarded,
                ));
            }
        }
        // Legacy: always on a fresh process. A server that answered discover may
        // refuse initialize on the same connection.
        let server = match launch() {
            Ok(server) => server,
            Err(e) => return Err((SessionError::Launch(e), discarded)),
        };
        let offer = LegacyOffer {
            protocol_version: LEGACY_OFFER,
            capabilities: policy.capabilities(),
        };
        match Session::initialize(server, &offer, timeout) {
            Ok((mut session, mut handshake)) => {
                handshake.requested = choice;
                handshake.discover = discover_note;
                session.discarded = discarded;
                session.policy = policy;
                Ok((session, handshake))
            }
            Err((error, server)) => {
                discarded.push(*server);
                Err((error, discarded))
            }
        }
    }

    /// The legacy handshake on a connection that has seen nothing yet:
    /// `initialize` with `offer`, then `notifications/initialized`. On failure
    /// the connection comes back (boxed) so its transcript can be kept.
    pub fn initialize(
        mut server: Connection,
        offer: &LegacyOffer,
        timeout: Duration,
    ) -> Result<(Session, Handshake), (SessionError, Box<Connection>)> {
        // The server's requests are answered by what this offer declares.
        server.rpc.answer_roots = offer.capabilities.get("roots").is_some();
        server.rpc.confirm = offer.capabilities.get("elicitation").is_some();
        let params = json!({
            "protocolVersion": offer.protocol_version,
            "capabilities": offer.capabilities,
            "clientInfo": client_info(),
        });
        let result = match server.rpc.request("initialize", params, timeout) {
            Ok(RpcResponse::Result(result)) => result,
            Ok(RpcResponse::Error { code, message, .. }) => {
                let error = SessionError::Refused(format!(
                    "initialize answered JSON-RPC error {code} ({})",
                    witness_text::clip(&message, 200)
                ));
                return Err((error, Box::new(server)));
            }
            Err(e) => return Err((e.into(), Box::new(server))),
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if !LEGACY_ACCEPTED.contains(&version.as_str()) {
            return Err((
                SessionError::Unsupported(format!(
                    "server counter-offered protocol version {:?}, which mcp-witness does not speak",
                    witness_text::clip(&version, 40)
                )),
                Box::new(server),
            ));
        }
        server.rpc.negotiated(&version);
        if let Err(e) = server.rpc.notify("notifications/initialized", json!({})) {
            return Err((e.into(), Box::new(server)));
        }
        let handshake = Handshake {
            requested: EraChoice::Legacy,
            era: Era::Legacy,
            protocol_version: version,
            discover: None,
            server_info: result.get("serverInfo").cloned(),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        Ok((
            Session {
                server,
                era: Era::Legacy,
                envelope: None,
                timeout,
                discarded: Vec::new(),
                calls: 0,
                policy: ClientPolicy::default(),
            },
            handshake,
        ))
    }

    pub fn era(&self) -> Era {
        self.era
    }

    /// What the client declares and answers.
    pub fn policy(&self) -> ClientPolicy {
        self.policy
    }

    pub(crate) fn params(&self, params: Map<String, Value>) -> Value {
        self.params_with_token(params, None)
    }

    /// `params` with the era's `_meta` envelope, and `progressToken` in it
    /// when a token is given.
    fn params_with_token(&self, mut params: Map<String, Value>, token: Option<Value>) -> Value {
        let mut meta = match &self.envelope {
            Some(Value::Object(envelope)) => envelope.clone(),
            _ => Map::new(),
        };
        if let Some(token) = token {
            meta.insert("progressToken".into(), token);
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(params)
    }

    /// The params of the session's next `tools/call` (with `extra` beside
    /// the name and arguments), and the progress token they carry.
    pub(crate) fn tool_call(
        &mut self,
        name: &str,
        arguments: &Value,
        mut extra: Map<String, Value>,
    ) -> (Value, Value) {
        self.calls += 1;
        let token = Value::String(format!("call-{}", self.calls));
        extra.insert("name".into(), Value::String(name.to_owned()));
        extra.insert("arguments".into(), arguments.clone());
        (self.params_with_token(extra, Some(token.clone())), token)
    }

    /// Fetches the whole catalog, page by page, within [`MAX_PAGES`] and
    /// [`MAX_TOOLS`]. Any irregularity makes it incomplete rather than shorter.
    pub fn list_tools(&mut self) -> Result<Catalog, WireError> {
        let mut catalog = Catalog::default();
        let mut names = BTreeSet::new();
        let mut cursors = BTreeSet::new();
        let mut cursor: Option<String> = None;
        loop {
            if catalog.pages == MAX_PAGES {
                catalog.problem = Some(format!("pagination did not end within {MAX_PAGES} pages"));
                catalog.issue = Some(CatalogIssue::PageLimit);
                return Ok(catalog);
            }
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let params = self.params(params);
            let answer = self
                .server
                .rpc
                .request("tools/list", params, self.timeout)?;
            catalog.pages += 1;
            let result = match answer {
                RpcResponse::Result(result) => result,
                RpcResponse::Error { code, .. } => {
                    catalog.issue = Some(CatalogIssue::ErrorAnswer);
                    catalog.problem = Some(format!(
                        "tools/list page {} answered JSON-RPC error {code}",
                        catalog.pages
                    ));
                    return Ok(catalog);
                }
            };
            let Some(tools) = result.get("tools").and_then(Value::as_array) else {
                catalog.issue = Some(CatalogIssue::MalformedEntry);
                catalog.problem = Some(format!(
                    "tools/list page {} has no tools array",
                    catalog.pages
                ));
                return Ok(catalog);
            };
            for (i, tool) in tools.iter().enumerate() {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    catalog.issue = Some(CatalogIssue::MalformedEntry);
                    catalog.problem = Some(format!(
                        "tools/list page {} entry {i} is malformed: no string name",
                        catalog.pages
                    ));
                    return Ok(catalog);
                };
                if tool.get("inputSchema").is_some_and(|s| !s.is_object()) {
                    catalog.issue = Some(CatalogIssue::MalformedEntry);
                    catalog.problem = Some(format!(
                        "tool {:?} is malformed: inputSchema is not an object",
                        witness_text::clip(name, 80)
                    ));
                    return Ok(catalog);
                }
                if !names.insert(name.to_owned()) {
                    catalog.issue = Some(CatalogIssue::DuplicateTool);
                    catalog.problem = Some(format!(
                        "tool {:?} is listed twice",
                        witness_text::clip(name, 80)
                    ));
                    return Ok(catalog);
                }
                if catalog.tools.len() == MAX_TOOLS {
                    catalog.issue = Some(CatalogIssue::TooManyTools);
                    catalog.problem = Some(format!("more than {MAX_TOOLS} tools"));
                    return Ok(catalog);
                }
                match headers::declarations(tool) {
                    Ok(declared) => {
                        self.server.rpc.transport_mut().tool_headers(name, declared);
                        catalog.tools.push(tool.clone());
                    }
                    Err(refused) => catalog.excluded.push(ExcludedTool {
                        name: name.to_owned(),
                        reason: refused.to_string(),
                    }),
                }
            }
            match result.get("nextCursor") {
                None | Some(Value::Null) => {
                    catalog.complete = true;
                    return Ok(catalog);
                }
                Some(Value::String(next)) => {
                    if !cursors.insert(next.clone()) {
                        catalog.issue = Some(CatalogIssue::RepeatedCursor);
                        catalog.problem = Some(format!(
                            "tools/list repeated a cursor on page {}",
                            catalog.pages
                        ));
                        return Ok(catalog);
                    }
                    cursor = Some(next.clone());
                }
                Some(_) => {
                    catalog.issue = Some(CatalogIssue::MalformedCursor);
                    catalog.problem = Some(format!(
                        "tools/list page {} has a nextCursor that is not a string",
                        catalog.pages
                    ));
                    return Ok(catalog);
                }
            }
        }
    }

    /// Calls one tool. Never fails: every way it can end is a [`CallOutcome`].
    ///
    /// The call carries a progress token (`call-1`, `call-2`, … in the
    /// session), so a long-running tool may report progress, and each report
    /// gives the call its timeout again, up to [`PROGRESS_CEILING`] in all.
    ///
    /// In 2026-07-28 an `input_required` answer is answered (SEP-2322,
    /// [`mrtr`]): the call is sent again, as a new request with a new id and
    /// progress token, carrying the client's `inputResponses` and the
    /// server's `requestState` exactly as it came, until a final result,
    /// at most [`mrtr::MAX_INPUT_ROUNDS`] rounds. The answers are in the
    /// transcript: each round's request carries them.
    pub fn call_tool(&mut self, name: &str, arguments: &Value) -> CallOutcome {
        let mut extra = Map::new();
        let mut round = 0;
        loop {
            round += 1;
            let (params, token) = self.tool_call(name, arguments, extra);
            let answer = self.server.rpc.request_with_progress(
                "tools/call",
                params,
                token,
                self.timeout,
                PROGRESS_CEILING,
            );
            let result = match answer {
                Ok(RpcResponse::Result(result)) => result,
                Ok(RpcResponse::Error { code, message, .. }) => {
                    return CallOutcome::RpcError { code, message };
                }
                Err(e) => return CallOutcome::Transport(e.to_string()),
            };
            if self.era != Era::Modern {
                // Results had no resultType before 2026-07-28: a field of
                // that name in an older server's result means nothing.
                return CallOutcome::Result(result);
            }
            let roots = self.server.rpc.answer_roots;
            match mrtr::next_round(&result, round, &self.policy, roots) {
                Round::Complete => return CallOutcome::Result(result),
                Round::Retry(next) => {
                    for line in mrtr::elicitations_in(&result, &next) {
                        self.server.rpc.log_elicitation(line);
                    }
                    extra = next
                }
                Round::Stop(detail) => return CallOutcome::InputRequired { result, detail },
            }
        }
    }
}

fn supports_modern(result: &Value) -> bool {
    lists_modern(result.get("supportedVersions"))
}

/// Whether a list of versions names the one we speak in the modern era.
fn lists_modern(versions: Option<&Value>) -> bool {
    versions
        .and_then(Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v.as_str() == Some(MODERN_VERSION)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::*;
    use crate::fake::{self, Sent};

    const TIMEOUT: Duration = Duration::from_millis(50);

    fn discover_result() -> Value {
        json!({"supportedVersions": [MODERN_VERSION], "capabilities": {"tools": {}},
               "serverInfo": {"name": "fake", "version": "1"}})
    }

    fn refusal(request: &Value, supported: Value) -> Option<Value> {
        Some(json!({"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": UNSUPPORTED_PROTOCOL_VERSION, "message": "Unsupported protocol version",
            "data": {"supported": supported, "requested": MODERN_VERSION}}}))
    }

    /// A 2026-07-28 server that refuses the first request it gets as an
    /// unsupported version, listing `supported`, and answers the rest.
    fn refusing_once(supported: Value) -> (Connection, Sent) {
        let mut refused = false;
        fake::connection(move |request| {
            if !refused {
                refused = true;
                return refusal(request, supported.clone());
            }
            match request["method"].as_str() {
                Some("server/discover") => fake::result(request, discover_result()),
                Some("tools/list") => fake::result(request, json!({"tools": []})),
                Some("tools/call") => fake::result(request, json!({"content": []})),
                _ => None,
            }
        })
    }

    fn open(
        connections: Vec<Connection>,
        choice: EraChoice,
    ) -> Result<(Session, Handshake), SessionError> {
        let mut connections = connections.into_iter();
        let mut launch = move || connections.next().ok_or_else(|| "no more".to_string());
        Session::open(&mut launch, choice, TIMEOUT).map_err(|(error, _)| error)
    }

    #[test]
    fn every_modern_request_carries_the_envelope() {
        let (server, sent) = refusing_once(json!([MODERN_VERSION]));
        let (mut session, handshake) = open(vec![server], EraChoice::Auto).expect("session");
        assert_eq!(handshake.era, Era::Modern);
        session.list_tools().expect("catalog");
        assert!(matches!(
            session.call_tool("echo", &json!({})),
            CallOutcome::Result(_)
        ));
        let sent = sent.lock().expect("sent").clone();
        let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            [
                "server/discover",
                "server/discover",
                "tools/list",
                "tools/call"
            ]
        );
        for message in &sent {
            let meta = &message["params"]["_meta"];
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"],
                json!(MODERN_VERSION),
                "{message}"
            );
            assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
            assert_eq!(
                meta["io.modelcontextprotocol/clientInfo"]["name"],
                json!("mcp-witness")
            );
        }
    }

    #[test]
    fn a_refused_version_is_retried_under_a_new_id_when_the_server_lists_it() {
        let (server, sent) = refusing_once(json!([MODERN_VERSION]));
        let (_, handshake) = open(vec![server], EraChoice::Modern).expect("session");
        assert_eq!(handshake.protocol_version, MODERN_VERSION);
        assert!(
            handshake
                .discover
                .as_deref()
                .is_some_and(|n| n.contains("second request")),
            "{:?}",
            handshake.discover
        );
        let sent = sent.lock().expect("sent").clone();
        assert_eq!(sent.len(), 2);
        assert_ne!(sent[0]["id"], sent[1]["id"]);
    }

    #[test]
    fn a_refusal_that_lists_only_older_versions_falls_back_to_initialize() {
        let (modern, sent) = refusing_once(json!(["2025-11-25"]));
        let (legacy, _) = fake::connection(|request| match request["method"].as_str() {
            Some("initialize") => fake::result(
                request,
                json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            ),
            _ => None,
        });
        let (_, handshake) = open(vec![modern, legacy], EraChoice::Auto).expect("session");
        assert_eq!(handshake.era, Era::Legacy);
        // Not sent again: the server does not speak it.
        assert_eq!(sent.lock().expect("sent").len(), 1);
        let refused = open(
            vec![refusing_once(json!(["2025-11-25"])).0],
            EraChoice::Modern,
        );
        assert!(matches!(refused, Err(SessionError::Refused(_))));
    }

    #[test]
    fn tools_with_invalid_header_declarations_are_excluded() {
        let (server, _) = fake::connection(|request| match request["method"].as_str() {
            Some("server/discover") => fake::result(request, discover_result()),
            Some("tools/list") => fake::result(
                request,
                json!({"tools": [
                    {"name": "good", "inputSchema": {"type": "object", "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"}}}},
                    {"name": "bad", "inputSchema": {"type": "object", "properties": {
                        "score": {"type": "number", "x-mcp-header": "Score"}}}},
                ]}),
            ),
            _ => None,
        });
        let (mut session, _) = open(vec![server], EraChoice::Modern).expect("session");
        let catalog = session.list_tools().expect("catalog");
        assert!(catalog.complete);
        let names: Vec<&str> = catalog
            .tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["good"]);
        assert_eq!(catalog.excluded.len(), 1);
        assert_eq!(catalog.excluded[0].name, "bad");
        assert!(catalog.excluded[0].reason.contains("number"));
    }

    /// A 2026-07-28 server whose `ask` tool wants a confirmation, with
    /// state, `rounds` times before it answers.
    fn asking(rounds: usize) -> (Connection, Sent) {
        let mut asked = 0;
        fake::connection(move |request| match request["method"].as_str() {
            Some("server/discover") => fake::result(request, discover_result()),
            Some("tools/call") if request["params"]["name"] == "ask" && asked < rounds => {
                asked += 1;
                fake::result(
                    request,
                    json!({"resultType": "input_required", "requestState": format!("s{asked}"),
                        "inputRequests": {"ok": {"method": "elicitation/create", "params": {
                            "message": "Go?", "requestedSchema": {"type": "object",
                            "properties": {"go": {"type": "boolean"}}}}}}}),
                )
            }
            Some("tools/call") => fake::result(
                request,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
            ),
            _ => None,
        })
    }

    fn calls(sent: &Sent) -> Vec<Value> {
        sent.lock()
            .expect("sent")
            .iter()
            .filter(|m| m["method"] == "tools/call")
            .cloned()
            .collect()
    }

    #[test]
    fn input_required_is_answered_with_state_echoed_under_new_ids() {
        let (server, sent) = asking(2);
        let (mut session, _) = open(vec![server], EraChoice::Modern).expect("session");
        let outcome = session.call_tool("ask", &json!({"x": 1}));
        assert!(
            matches!(&outcome, CallOutcome::Result(r) if r["content"][0]["text"] == "done"),
            "{outcome:?}"
        );
        let calls = calls(&sent);
        assert_eq!(calls.len(), 3);
        let ids: BTreeSet<String> = calls.iter().map(|c| c["id"].to_string()).collect();
        assert_eq!(ids.len(), 3, "every round has an id of its own");
        assert!(calls[0]["params"].get("requestState").is_none());
        assert_eq!(calls[1]["params"]["requestState"], json!("s1"));
        assert_eq!(calls[2]["params"]["requestState"], json!("s2"));
        for call in &calls[1..] {
            assert_eq!(call["params"]["arguments"], json!({"x": 1}));
            // An audit's client declared nothing, and refuses.
            assert_eq!(
                call["params"]["inputResponses"],
                json!({"ok": {"action": "decline"}})
            );
        }
        // The next call is a call of its own: nothing carried over.
        session.call_tool("other", &json!({}));
        let last = calls_last(&sent);
        assert!(last["params"].get("requestState").is_none());
        assert!(last["params"].get("inputResponses").is_none());
    }

    fn calls_last(sent: &Sent) -> Value {
        calls(sent).pop().expect("a call")
    }

    #[test]
    fn a_confirm_policy_declares_elicitation_and_confirms() {
        let (server, sent) = asking(1);
        let mut connections = vec![server].into_iter();
        let mut launch = move || connections.next().ok_or_else(|| "no more".to_string());
        let policy = ClientPolicy {
            elicitation: mrtr::Elicitation::Confirm,
        };
        let (mut session, _) = Session::open_with(&mut launch, EraChoice::Modern, TIMEOUT, policy)
            .map_err(|(e, _)| e)
            .expect("session");
        assert_eq!(session.policy(), policy);
        assert!(matches!(
            session.call_tool("ask", &json!({})),
            CallOutcome::Result(_)
        ));
        let calls = calls(&sent);
        assert_eq!(
            calls[1]["params"]["inputResponses"]["ok"],
            json!({"action": "accept", "content": {"go": true}})
        );
        assert_eq!(
            calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {"form": {}}})
        );
    }

    #[test]
    fn a_server_that_keeps_asking_is_given_up_on_at_the_round_limit() {
        let (server, sent) = asking(usize::MAX);
        let (mut session, _) = open(vec![server], EraChoice::Modern).expect("session");
        let outcome = session.call_tool("ask", &json!({}));
        assert!(
            matches!(&outcome, CallOutcome::InputRequired { result, .. }
                if result["resultType"] == "input_required"),
            "{outcome:?}"
        );
        assert_eq!(calls(&sent).len(), mrtr::MAX_INPUT_ROUNDS as usize);
    }

    #[test]
    fn a_legacy_result_is_final_whatever_fields_it_has() {
        let (server, sent) = fake::connection(|request| match request["method"].as_str() {
            Some("initialize") => fake::result(
                request,
                json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            ),
            Some("tools/call") => fake::result(
                request,
                json!({"resultType": "input_required", "requestState": "s"}),
            ),
            _ => None,
        });
        let (mut session, _) = open(vec![server], EraChoice::Legacy).expect("session");
        assert!(matches!(
            session.call_tool("ask", &json!({})),
            CallOutcome::Result(_)
        ));
        assert_eq!(calls(&sent).len(), 1);
    }

    #[test]
    fn a_served_schema_round_trips_unchanged_through_the_catalog_and_back() {
        // Every JSON Schema 2020-12 keyword the conformance suite's
        // json-schema-2020-12-preservation serves, in a deliberately
        // unsorted order, and a vendor keyword the client knows nothing of.
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false,
            "x-vendor": {"kept": true}
        });
        let served = json!({"name": "rich", "inputSchema": schema});
        let echo = json!({"name": "echo", "inputSchema": {"type": "object",
            "properties": {"schema": {"type": "object"}}, "required": ["schema"]}});
        let tools = json!({"tools": [served.clone(), echo]});
        let (server, sent) = fake::connection(move |request| match request["method"].as_str() {
            Some("server/discover") => fake::result(request, discover_result()),
            Some("tools/list") => fake::result(request, tools.clone()),
            Some("tools/call") => fake::result(request, json!({"content": []})),
            _ => None,
        });
        let (mut session, _) = open(vec![server], EraChoice::Modern).expect("session");
        let catalog = session.list_tools().expect("catalog");
        assert_eq!(catalog.tools[0], served);
        // Key for key and in the served order, not merely equal as a map.
        assert_eq!(catalog.tools[0].to_string(), served.to_string());
        let held = &catalog.tools[0]["inputSchema"];
        assert!(matches!(
            session.call_tool("echo", &json!({"schema": held})),
            CallOutcome::Result(_)
        ));
        let echoed = &calls_last(&sent)["params"]["arguments"]["schema"];
        assert_eq!(echoed.to_string(), schema.to_string());
    }
}
