//! Small fakes for the stages' unit tests: a server that answers in
//! process, a store it writes, and observers whose snapshots a test writes.
//! Nothing here starts a process.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use witness_model::audit::*;
use witness_observers::fake::{advance, snapshot_of};
use witness_observers::{Observation, ObserveError, Observer, Snapshot};
use witness_wire::connection::Connection;
use witness_wire::rpc::RpcClient;
use witness_wire::session::{EraChoice, LEGACY_OFFER};
use witness_wire::{Incoming, Transport};

use super::AuditOptions;
use witness_jail::{JailSpec, StoreSpec, Target};

/// A store the fake server writes and [`StoreObserver`] reads: object id →
/// content, and writes that land only once the observer has looked (a
/// server that finishes its work after it answered).
#[derive(Clone, Default)]
pub(super) struct Store(Arc<Mutex<StoreState>>);

#[derive(Default)]
pub(super) struct StoreState {
    pub(super) objects: BTreeMap<String, String>,
    pub(super) landing_late: Vec<(String, String)>,
}

impl Store {
    pub(super) fn lock(&self) -> MutexGuard<'_, StoreState> {
        match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(super) fn write(&self, id: &str, content: &str) {
        self.lock().objects.insert(id.into(), content.into());
    }

    /// A write that lands right after the next snapshot.
    pub(super) fn write_late(&self, id: &str, content: &str) {
        self.lock().landing_late.push((id.into(), content.into()));
    }
}

/// How the fake server answers one `tools/call`.
pub(super) enum Reply {
    Result(Value),
    Error(i64, &'static str),
    /// No answer at all: the client's wait ends as a transport failure.
    Silence,
}

/// What a fake tool does: gets the tool name, its arguments and the store.
pub(super) type Handler = Box<dyn FnMut(&str, &Value, &Store) -> Reply + Send>;

/// An MCP server in process: the legacy handshake, a one-page catalog, and
/// `tools/call` answered by a handler. Answers are queued as lines, as a
/// stdio server's would be.
pub(super) struct FakeServer {
    tools: Vec<Value>,
    handler: Handler,
    store: Store,
    queue: VecDeque<Incoming>,
    t_us: u64,
}

impl FakeServer {
    pub(super) fn new(tools: Vec<Value>, store: Store, handler: Handler) -> Self {
        Self {
            tools,
            handler,
            store,
            queue: VecDeque::new(),
            t_us: 0,
        }
    }

    pub(super) fn connection(self) -> Connection {
        Connection::remote(RpcClient::new(self))
    }

    fn answer(&mut self, method: &str, params: &Value) -> Option<Value> {
        match method {
            "initialize" => Some(json!({"result": {
                "protocolVersion": LEGACY_OFFER,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "0"},
            }})),
            "tools/list" => Some(json!({"result": {"tools": self.tools}})),
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                match (self.handler)(name, &args, &self.store) {
                    Reply::Result(result) => Some(json!({"result": result})),
                    Reply::Error(code, message) => {
                        Some(json!({"error": {"code": code, "message": message}}))
                    }
                    Reply::Silence => None,
                }
            }
            _ => Some(json!({"error": {"code": -32601, "message": "method not found"}})),
        }
    }
}

impl Transport for FakeServer {
    fn kind(&self) -> &'static str {
        "stdio"
    }

    fn now_us(&self) -> u64 {
        self.t_us
    }

    fn send(&mut self, message: &Value, _text: &str) -> std::io::Result<()> {
        self.t_us += 1;
        let (Some(id), Some(method)) = (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) else {
            return Ok(());
        };
        let params = message.get("params").cloned().unwrap_or(json!({}));
        if let Some(Value::Object(mut reply)) = self.answer(method, &params) {
            reply.insert("jsonrpc".into(), json!("2.0"));
            reply.insert("id".into(), id.clone());
            self.queue.push_back(Incoming::Line {
                bytes: Value::Object(reply).to_string().into_bytes(),
                cut_from: None,
                t_us: self.t_us,
            });
        }
        Ok(())
    }

    fn recv_until(&mut self, _deadline: Instant) -> Option<Incoming> {
        self.queue.pop_front()
    }

    fn try_recv(&mut self) -> Option<Incoming> {
        self.queue.pop_front()
    }

    fn close(&mut self) {}
}

/// Observes a [`Store`]: one object per entry, its content's digest.
pub(super) struct StoreObserver(pub(super) Store, pub(super) Snapshot);

impl StoreObserver {
    pub(super) fn new(store: Store) -> Self {
        Self(store, Snapshot::default())
    }
}

impl Observer for StoreObserver {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let mut state = self.0.lock();
        let now = snapshot_of(&state.objects);
        let late = std::mem::take(&mut state.landing_late);
        state.objects.extend(late);
        Ok(advance(&mut self.1, now, changes))
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        self.1.objects.keys().for_each(|id| visit(id));
        Ok(())
    }
}

/// Options for an audit of a fake server: legacy era, no settling, the
/// null probe, no stores.
pub(super) fn options() -> AuditOptions {
    AuditOptions {
        era: EraChoice::Legacy,
        timeout: Duration::from_millis(50),
        settle: Duration::ZERO,
        deterministic: true,
        ..AuditOptions::new(Target::launched(JailSpec {
            command: vec!["fake-server".into()],
            stores: Vec::new(),
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        }))
    }
}

/// [`options`] for a server behind a loopback URL nothing listens on, its
/// `stores` observed in place.
pub(super) fn remote(stores: Vec<StoreSpec>) -> AuditOptions {
    let Ok(endpoint) = witness_wire::http::Endpoint::parse("http://127.0.0.1:9/mcp", false) else {
        panic!("a loopback endpoint parses");
    };
    AuditOptions {
        target: Target::remote(endpoint, stores),
        ..options()
    }
}

/// The skeleton of an audit of a fake server.
pub(super) fn report() -> AuditReport {
    let mut report = super::prepare::skeleton(&options(), &[]);
    // A finished audit's catalog arrived; a test that needs it not to says so.
    report.catalog.complete = true;
    report.catalog.pages = 1;
    report
}

/// A tool as a server lists it.
pub(super) fn listed(name: &str, annotations: Value, required: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = required
        .iter()
        .map(|p| (p.to_string(), json!({"type": "string"})))
        .collect();
    json!({
        "name": name,
        "annotations": annotations,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    })
}

/// A call record of `tool` that ended with `status`, on arguments of
/// `source`, with `effects`.
pub(super) fn call(
    id: u32,
    tool: &str,
    status: CallStatus,
    source: Provenance,
    effects: Vec<Effect>,
) -> CallRecord {
    CallRecord {
        id,
        step: id,
        session: 0,
        tool: tool.into(),
        repeat_of: None,
        page_of: None,
        retry_after: None,
        after_change: None,
        answers: None,
        confirms: None,
        expect: Vec::new(),
        form: None,
        arguments: vec![Argument {
            name: "id".into(),
            value: json!("witness"),
            source,
            from: None,
            object: None,
            parts: Vec::new(),
        }],
        outcome: Outcome {
            status,
            code: None,
            detail: None,
        },
        task: None,
        response: None,
        frames: None,
        effects,
        late_effects: Vec::new(),
        background: Vec::new(),
        probes: Vec::new(),
        events_after: Vec::new(),
        event_effects: Vec::new(),
        network: Vec::new(),
        original_writes: Vec::new(),
        confirmations: Vec::new(),
    }
}

/// A change to `object` of `store`.
pub(super) fn effect(store: &str, object: &str, op: Op) -> Effect {
    Effect {
        store: store.into(),
        object: object.into(),
        op,
        overwrite: (op == Op::Update).then_some(true),
        before: None,
        after: None,
    }
}
