//! The server behind the proxy: how it is reached (launched in its jail, on
//! the live stores, or an upstream URL), what is observed, and the pump that
//! reads it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use witness_jail::observe::{ObserveOptions, ObservedSet, Settle, store_paths};
use witness_jail::{JailError, OpenTarget, Target};
use witness_model::agent::case::FactsSpec;
use witness_model::proxy::{
    PROXY_TRACE_SCHEMA, ProxiedServer, TraceEntry, TraceHeader, TracedStore,
};
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::connection::Connection;
use witness_wire::{Incoming, Outbox};

use crate::Notify;
use crate::record::TraceWriter;
use crate::witness::Witness;

/// Everything the proxy is told.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// The server: launched in a jail on copies of the stores, launched
    /// `live` on the stores themselves, or an upstream URL whose stores are
    /// observed in place.
    pub target: Target,
    pub facts: Vec<FactsSpec>,
    /// How long each answer is held for its call's effects to land
    /// (`--settle-ms`, `--quiet-ms`), as an audit waits for them.
    pub settle: Settle,
    /// Every exchange with an upstream URL ends within this.
    pub timeout: Duration,
    pub trace: PathBuf,
    /// `stdio` or `http`.
    pub host_transport: &'static str,
}

/// A fresh connection to the server: a new process in its jail, or a new
/// connection to the upstream URL. `Err` is one line.
pub fn connect(target: &mut OpenTarget) -> Result<Connection, String> {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    target.connect(clock).map_err(|e| e.to_string())
}

/// A server ready to be proxied: its first connection, the witness, and
/// the opened target, which must live as long as the proxy does.
pub struct Prepared {
    pub connection: Connection,
    pub witness: Witness,
    pub target: OpenTarget,
    pub warning: Option<String>,
}

/// Opens the target (the jail, or the in-place view), takes the pristine
/// moment, starts the server and opens the trace. `Err` is one line.
pub fn prepare(options: &ProxyOptions, notify: Notify) -> Result<Prepared, String> {
    let started = Instant::now();
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut target = options.target.open(options.timeout).map_err(|e| match e {
        JailError::Writable(_) => format!("--live: {e}"),
        e => e.to_string(),
    })?;
    let warning = if options.target.is_live() {
        Some("WARNING: --live: the server writes your real stores; nothing is copied and nothing can be undone")
    } else if options.target.is_remote() {
        Some("WARNING: --url: the server is not jailed; its real stores are observed in place while it writes them")
    } else {
        None
    }
    .map(str::to_owned);
    let view = target.jail();
    let mut observed = ObservedSet::for_jail(
        view,
        &store_paths(&view.stores),
        ObserveOptions::default().budget,
        &options.facts,
    );
    let stores = view
        .stores
        .iter()
        .map(|s| TracedStore {
            name: s.spec.name.clone(),
            kind: s.spec.kind.as_str().to_owned(),
        })
        .collect();
    Witness::pristine(&mut observed)?;
    let connection = connect(&mut target).map_err(|e| format!("cannot start the server: {e}"))?;
    let isolation = match target.is_remote() {
        true => Some(witness_jail::REMOTE_ISOLATION.to_owned()),
        false => target
            .isolation()
            .map(|i| format!("{}: {}", i.level, i.detail)),
    };
    let header = TraceEntry::Header(TraceHeader {
        schema: PROXY_TRACE_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        started_unix_ms,
        host_transport: options.host_transport.into(),
        server: server_entry(options),
        live: options.target.is_live(),
        isolation,
        stores,
        facts: options.facts.clone(),
        settle_ms: u64::try_from(options.settle.bound.as_millis()).unwrap_or(u64::MAX),
    });
    let writer = TraceWriter::create(&options.trace, header, options.target.env(), started)
        .map_err(|e| e.to_string())?;
    Ok(Prepared {
        connection,
        witness: Witness::new(writer, observed, options.settle, notify),
        target,
        warning,
    })
}

fn server_entry(options: &ProxyOptions) -> ProxiedServer {
    let target = &options.target;
    ProxiedServer {
        command: target.command().to_vec(),
        transport: target.transport().into(),
        env: target.env().iter().map(|(k, _)| k.clone()).collect(),
    }
}

/// What the pump does with each thing the server sends.
pub type OnIncoming = Box<dyn FnMut(Incoming) + Send>;

/// One connection to the server, read by its own thread.
pub struct Upstream {
    outbox: Arc<Mutex<Option<Box<dyn Outbox>>>>,
    stop: Arc<AtomicBool>,
    pump: Option<JoinHandle<Connection>>,
}

impl Upstream {
    /// Starts reading `connection`; everything it sends goes to `on_incoming`,
    /// in order, on the pump thread.
    pub fn start(mut connection: Connection, mut on_incoming: OnIncoming) -> Result<Self, String> {
        let outbox = connection
            .rpc
            .transport()
            .outbox()
            .ok_or("the transport cannot be relayed")?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let pump = std::thread::Builder::new()
            .name("mcp-witness-upstream".into())
            .spawn(move || {
                pump(&mut connection, &stopping, &mut on_incoming);
                connection
            })
            .map_err(|e| format!("cannot start the relay: {e}"))?;
        Ok(Self {
            outbox: Arc::new(Mutex::new(Some(outbox))),
            stop,
            pump: Some(pump),
        })
    }

    /// A handle other threads send through; it fails once the upstream stops.
    pub fn sender(&self) -> Sender {
        Sender(self.outbox.clone())
    }

    /// Closes the server's input, lets it finish what it was answering
    /// (briefly), then stops it and everything it started.
    pub fn stop(mut self) {
        drop(lock(&self.outbox).take());
        self.stop.store(true, Ordering::SeqCst);
        if let Some(pump) = self.pump.take()
            && let Ok(mut connection) = pump.join()
        {
            connection.shutdown();
        }
    }
}

/// Sends to the server from any thread.
#[derive(Clone)]
pub struct Sender(Arc<Mutex<Option<Box<dyn Outbox>>>>);

impl Sender {
    pub fn send(&self, text: &str) -> std::io::Result<()> {
        let guard = lock(&self.0);
        let Some(outbox) = guard.as_ref() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the server connection is closed",
            ));
        };
        let message: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        outbox.send(&message, text)
    }

    pub fn negotiated(&self, version: &str) {
        if let Some(outbox) = lock(&self.0).as_ref() {
            outbox.negotiated(version);
        }
    }

    /// Learns, from a message the server sent, the `Mcp-Param-*` headers
    /// later calls carry (SEP-2243): a result listing tools declares them.
    /// The host's own headers do not cross the proxy, so the upstream
    /// transport mirrors them from each call's arguments as any client
    /// would; a tool whose declarations cannot be honoured mirrors none.
    pub fn learn_tool_headers(&self, bytes: &[u8]) {
        // Most messages list no tools: read only those that may.
        if !bytes.windows(7).any(|w| w == b"\"tools\"") {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        let Some(tools) = message.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        let guard = lock(&self.0);
        let Some(outbox) = guard.as_ref() else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let declared = witness_wire::headers::declarations(tool).unwrap_or_default();
            outbox.tool_headers(name, declared);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// How long a stopping server may take to answer what it was asked and
/// close its output, before it is stopped by signals.
const GRACE: Duration = Duration::from_millis(1_500);

fn pump(connection: &mut Connection, stop: &AtomicBool, on_incoming: &mut OnIncoming) {
    let mut closing: Option<Instant> = None;
    loop {
        if closing.is_none() && stop.load(Ordering::SeqCst) {
            connection.rpc.close();
            closing = Some(Instant::now() + GRACE);
        }
        let deadline = match closing {
            Some(limit) if Instant::now() >= limit => return,
            Some(limit) => limit,
            None => Instant::now() + Duration::from_millis(100),
        };
        if let Some(incoming) = connection.rpc.transport_mut().recv_until(deadline) {
            let closed = matches!(incoming, Incoming::Closed { .. });
            on_incoming(incoming);
            if closed {
                return;
            }
        }
    }
}
