//! Small fakes for the stages' unit tests: a server that answers in
//! process, a store it writes, and observers whose snapshots a test writes.
//! Nothing here starts a process.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use witness_model::audit::*;
use witness_observers::{ObjectState, Observation, ObserveError, Observer, Snapshot, diff};
use witness_probes::NullProbe;
use witness_wire::connection::Connection;
use witness_wire::rpc::RpcClient;
use witness_wire::session::{EraChoice, LEGACY_OFFER};
use witness_wire::{Incoming, Transport};

use super::AuditOptions;
use crate::jail::JailSpec;

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

/// Makes `now` the reference, giving the changes since the old one.
fn advance(last: &mut Snapshot, now: Snapshot, changes: bool) -> Observation {
    let delta = if changes {
        diff(last, &now)
    } else {
        Default::default()
    };
    let warnings = now.warnings.clone();
    *last = now;
    Observation { delta, warnings }
}

/// A snapshot holding `objects` as `id → content`.
pub(super) fn snapshot_of(objects: &BTreeMap<String, String>) -> Snapshot {
    Snapshot {
        objects: objects
            .iter()
            .map(|(id, content)| (id.clone(), ObjectState::whole(content.as_bytes())))
            .collect(),
        warnings: Vec::new(),
    }
}

/// One scripted snapshot: objects and warnings, or a failure.
pub(super) enum Scripted {
    Objects(
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    ),
    Fails(&'static str),
}

/// Gives the scripted snapshots in order, then the last one forever.
pub(super) struct ScriptedObserver {
    script: VecDeque<Scripted>,
    last: Snapshot,
}

impl ScriptedObserver {
    pub(super) fn new(script: Vec<Scripted>) -> Self {
        Self {
            script: script.into(),
            last: Snapshot::default(),
        }
    }
}

impl Observer for ScriptedObserver {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let now = match self.script.pop_front() {
            Some(Scripted::Objects(objects, warnings)) => {
                let map = objects
                    .iter()
                    .map(|(id, content)| (id.to_string(), content.to_string()))
                    .collect();
                let mut now = snapshot_of(&map);
                now.warnings = warnings.iter().map(|w| w.to_string()).collect();
                now
            }
            Some(Scripted::Fails(reason)) => {
                return Err(ObserveError::Unusable {
                    path: PathBuf::from("/fake/store"),
                    reason: reason.into(),
                });
            }
            None => self.last.clone(),
        };
        Ok(advance(&mut self.last, now, changes))
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        self.last.objects.keys().for_each(|id| visit(id));
        Ok(())
    }
}

/// Options for an audit of a fake server: legacy era, no settling, the
/// null probe, no stores.
pub(super) fn options() -> AuditOptions {
    AuditOptions {
        jail: JailSpec {
            command: vec!["fake-server".into()],
            stores: Vec::new(),
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        },
        era: EraChoice::Legacy,
        plan: None,
        timeout: Duration::from_millis(50),
        settle: Duration::ZERO,
        observe: super::ObserveOptions::default(),
        deterministic: true,
        probe: Box::new(NullProbe),
        label: None,
        pinned_version: None,
        events: BTreeMap::new(),
        include_destructive: false,
        session_per_call: false,
        min_coverage: None,
    }
}

/// The skeleton of an audit of a fake server.
pub(super) fn report() -> AuditReport {
    super::prepare::skeleton(&options(), &[])
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
        expect: Vec::new(),
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
        response: None,
        frames: None,
        effects,
        late_effects: Vec::new(),
        probes: Vec::new(),
        events_after: Vec::new(),
        event_effects: Vec::new(),
        network: Vec::new(),
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
