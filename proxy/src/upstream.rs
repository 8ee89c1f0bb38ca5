//! The server behind the proxy: how it is reached (launched in its jail, on
//! the live stores, or an upstream URL), what is observed, and the pump that
//! reads it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use witness_agent::facts::FactsReader;
use witness_engine::audit::{ObservedSet, store_dirs};
use witness_engine::jail::{Jail, JailSpec, StoreKind, StoreSpec, connect};
use witness_model::agent::case::FactsSpec;
use witness_model::proxy::{
    PROXY_TRACE_SCHEMA, ProxiedServer, TraceEntry, TraceHeader, TracedStore,
};
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::connection::Connection;
use witness_wire::http::Endpoint;
use witness_wire::{Incoming, Outbox};

use crate::record::TraceWriter;
use crate::witness::Witness;

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Target {
    /// Launched by the proxy: in a jail on copies of the stores, or with
    /// `live` on the stores themselves.
    Command { command: Vec<String>, live: bool },
    /// Already running behind Streamable HTTP; its stores are observed in place.
    Url(Endpoint),
}

/// Everything the proxy is told.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    pub target: Target,
    pub stores: Vec<StoreSpec>,
    pub env: Vec<(String, String)>,
    pub isolate_network: bool,
    pub facts: Vec<FactsSpec>,
    pub settle: Duration,
    /// Every exchange with an upstream URL ends within this.
    pub timeout: Duration,
    pub trace: PathBuf,
    /// `stdio` or `http`.
    pub host_transport: &'static str,
    pub generator: String,
}

/// How a fresh connection to the server is made.
pub enum Launcher {
    // Boxed: a jail is large, and the enum lives as long as the proxy.
    Jail(Box<Jail>),
    Remote(Endpoint, Duration),
}

impl Launcher {
    pub fn launch(&mut self) -> Result<Connection, String> {
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
        match self {
            Launcher::Jail(jail) => jail.launch(clock).map_err(|e| e.to_string()),
            Launcher::Remote(endpoint, timeout) => Ok(connect(endpoint, clock, *timeout)),
        }
    }
}

/// A server ready to be proxied: its first connection, the witness, and
/// what must live as long as it does.
pub struct Prepared {
    pub connection: Connection,
    pub witness: Witness,
    pub launcher: Launcher,
    /// The jail whose stores are observed in place (live or remote).
    pub observed_jail: Option<Jail>,
    pub warning: Option<String>,
}

/// Makes the jail (or the in-place view), takes the pristine moment,
/// starts the server and opens the trace. `Err` is one line.
pub fn prepare(options: &ProxyOptions) -> Result<Prepared, String> {
    let started = Instant::now();
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let spec = |command: Vec<String>, stores: Vec<StoreSpec>| JailSpec {
        command,
        stores,
        env: options.env.clone(),
        keep: false,
        isolate_network: options.isolate_network,
    };
    let (mut launcher, observed_jail, warning) = match &options.target {
        Target::Command {
            command,
            live: false,
        } => {
            let jail = Jail::create(spec(command.clone(), options.stores.clone()))
                .map_err(|e| e.to_string())?;
            (Launcher::Jail(Box::new(jail)), None, None)
        }
        Target::Command {
            command,
            live: true,
        } => {
            let in_place = Jail::in_place(spec(Vec::new(), options.stores.clone()))
                .map_err(|e| e.to_string())?;
            let command = command
                .iter()
                .map(|a| live_paths(a, &options.stores))
                .collect();
            let mut jail = Jail::create(spec(command, Vec::new())).map_err(|e| e.to_string())?;
            jail.also_writable(&live_dirs(&options.stores))
                .map_err(|e| format!("--live: a store's directory cannot be made writable: {e}"))?;
            let warning = "WARNING: --live: the server writes your real stores; nothing is copied and nothing can be undone";
            (
                Launcher::Jail(Box::new(jail)),
                Some(in_place),
                Some(warning.to_owned()),
            )
        }
        Target::Url(endpoint) => {
            let in_place = Jail::in_place(spec(Vec::new(), options.stores.clone()))
                .map_err(|e| e.to_string())?;
            let warning = "WARNING: --url: the server is not jailed; its real stores are observed in place while it writes them";
            (
                Launcher::Remote(endpoint.clone(), options.timeout),
                Some(in_place),
                Some(warning.to_owned()),
            )
        }
    };
    let view: &Jail = match (&observed_jail, &launcher) {
        (Some(jail), _) => jail,
        (None, Launcher::Jail(jail)) => jail,
        (None, Launcher::Remote(..)) => return Err("no stores to observe".into()),
    };
    let mut observed = ObservedSet::for_jail(
        view,
        &store_dirs(&view.stores),
        witness_engine::audit::ObserveOptions::default().budget,
    );
    let specs = options
        .facts
        .iter()
        .filter_map(|spec| {
            let store = view.stores.iter().find(|s| s.spec.name == spec.store)?;
            Some((spec.clone(), store.path.clone()))
        })
        .collect();
    let mut facts = FactsReader::new(specs);
    let stores = view
        .stores
        .iter()
        .map(|s| TracedStore {
            name: s.spec.name.clone(),
            kind: s.spec.kind.as_str().to_owned(),
        })
        .collect();
    Witness::pristine(&mut observed, &mut facts)?;
    let connection = launcher
        .launch()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let isolation = match &launcher {
        Launcher::Jail(jail) => jail
            .isolation()
            .map(|i| format!("{}: {}", i.level, i.detail)),
        Launcher::Remote(..) => Some(witness_engine::jail::REMOTE_ISOLATION.to_owned()),
    };
    let header = TraceEntry::Header(TraceHeader {
        schema: PROXY_TRACE_SCHEMA.into(),
        generator: options.generator.clone(),
        started_unix_ms,
        host_transport: options.host_transport.into(),
        server: server_entry(options),
        live: matches!(options.target, Target::Command { live: true, .. }),
        isolation,
        stores,
        facts: options.facts.clone(),
        settle_ms: u64::try_from(options.settle.as_millis()).unwrap_or(u64::MAX),
    });
    let writer = TraceWriter::create(&options.trace, header, &options.env, started)
        .map_err(|e| e.to_string())?;
    Ok(Prepared {
        connection,
        witness: Witness::new(writer, observed, facts, options.settle),
        launcher,
        observed_jail,
        warning,
    })
}

fn server_entry(options: &ProxyOptions) -> ProxiedServer {
    let (command, transport) = match &options.target {
        Target::Command { command, .. } => (command.clone(), "stdio"),
        Target::Url(_) => (Vec::new(), "http"),
    };
    ProxiedServer {
        command,
        transport: transport.into(),
        env: options.env.iter().map(|(k, _)| k.clone()).collect(),
    }
}

/// Where a live server writes: a tree (a git repository too, `.git` inside)
/// itself; beside a file, its directory
/// (SQLite's journal and WAL, a JSON-lines file's replacement, are made
/// there). A PostgreSQL store has none: it cannot be observed in place, and
/// the in-place view refuses it first.
fn live_dirs(stores: &[StoreSpec]) -> Vec<PathBuf> {
    stores
        .iter()
        .filter_map(|store| match store.kind {
            StoreKind::Fs | StoreKind::Git => Some(store.source.clone()),
            StoreKind::Sqlite | StoreKind::Jsonl => match store.source.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => Some(parent.to_path_buf()),
                _ => Some(PathBuf::from(".")),
            },
            StoreKind::Postgres => None,
        })
        .collect()
}

/// `{NAME}` as the live path of store NAME (`{jail}` is left to the jail).
fn live_paths(arg: &str, stores: &[StoreSpec]) -> String {
    let mut out = arg.to_owned();
    for store in stores {
        out = out.replace(
            &format!("{{{}}}", store.name),
            &store.source.to_string_lossy(),
        );
    }
    out
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
