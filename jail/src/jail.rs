//! The jail itself: a fresh directory with the stores copied in, the
//! server launched there in the sandbox, and everything removed after.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustix::io::Errno;
use witness_model::audit::LayerEntry;
use witness_model::vocab::IsolationLayer;
use witness_process::{Controlled, Launch, Pidfd};
use witness_wire::clock::Clock;
use witness_wire::connection::Connection;
use witness_wire::http::{Endpoint, HttpTransport};
use witness_wire::rpc::RpcClient;
use witness_wire::stdio::StdioTransport;

use crate::bounds::{Cgroup, Controller};
use crate::{Isolation, JailedStore, StoreKind, StoreSpec, copy, network, process, sandbox, stale};

/// Environment variables a server inherits; everything else is dropped.
/// `HOME` and `TMPDIR` are always set to directories inside the jail.
pub const ENV_ALLOWLIST: [&str; 5] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/// Starts the cluster of a PostgreSQL store in `stores/NAME` and restores
/// its source. When the auditor is root the cluster runs as an
/// unprivileged account (PostgreSQL refuses root), which must be able to
/// pass through the jail's root and `stores`: those become 0711 (enter,
/// not list) and the jail's other directories 0700.
fn start_cluster(
    root: &Path,
    store: &StoreSpec,
) -> Result<(JailedStore, witness_postgres::Cluster), JailError> {
    use std::os::unix::fs::PermissionsExt;
    let text = store.source.to_string_lossy();
    let cluster_error = |error| JailError::Cluster {
        name: store.name.clone(),
        error,
    };
    let source = if witness_postgres::Source::is_live(&text) {
        witness_postgres::Source::live(&text).map_err(cluster_error)?
    } else if store.source.exists() {
        witness_postgres::Source::of_path(&store.source)
    } else {
        return Err(JailError::NoSource {
            name: store.name.clone(),
            path: store.source.clone(),
        });
    };
    let holder = root.join("stores").join(&store.name);
    std::fs::create_dir_all(&holder).map_err(JailError::Create)?;
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(JailError::Create)
    };
    for (dir, bits) in [
        (root.to_path_buf(), 0o711),
        (root.join("stores"), 0o711),
        (holder.clone(), 0o711),
        (root.join("work"), 0o700),
        (root.join("home"), 0o700),
        (root.join("tmp"), 0o700),
    ] {
        mode(&dir, bits)?;
    }
    let cluster = witness_postgres::Cluster::create(&holder, &source).map_err(cluster_error)?;
    Ok((
        JailedStore {
            spec: store.clone(),
            path: holder,
            existed: true,
        },
        cluster,
    ))
}

/// Why a jail could not be made.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    #[error("cannot create the jail: {0}")]
    Create(std::io::Error),
    /// The cause is in the text, not in the error chain: shown with `{:#}`
    /// it would be said twice.
    #[error("cannot copy store {name} from {path}: {error}")]
    Copy {
        name: String,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("store {name}: clock columns are declared, but only a SQLite store has columns")]
    ClockColumns { name: String },
    #[error(
        "store {name}: {path} does not exist (a PostgreSQL store is restored from a SQL file or a pg_dump archive)"
    )]
    NoSource { name: String, path: PathBuf },
    /// The cause is in the text, as for [`JailError::Copy`].
    #[error("store {name}: cannot make its PostgreSQL cluster: {error}")]
    Cluster {
        name: String,
        error: witness_postgres::ClusterError,
    },
    #[error(
        "store {name}: a PostgreSQL store is a cluster of the jail's own; a remote server's database cannot be observed in place"
    )]
    RemotePostgres { name: String },
    /// A live server's store directory the sandbox cannot let it write.
    #[error("a store's directory cannot be made writable: {0}")]
    Writable(String),
}

impl JailError {
    /// Whether the user named something that cannot be a store (a FIFO, a
    /// socket, a device): an invalid invocation rather than a failure.
    pub fn is_invalid(&self) -> bool {
        match self {
            JailError::Copy { error, .. } => error.kind() == ErrorKind::InvalidInput,
            JailError::ClockColumns { .. }
            | JailError::NoSource { .. }
            | JailError::RemotePostgres { .. } => true,
            // The user's source would not restore: their input, not ours.
            JailError::Cluster { error, .. } => error.is_source_error(),
            // The user named a live store whose directory is not there.
            JailError::Writable(_) => true,
            JailError::Create(_) => false,
        }
    }
}

/// Why a server could not be launched in the jail. The texts are those a
/// report shows after `no session: cannot start the server: `.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("no command given")]
    NoCommand,
    #[error("{}: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the server's pipes could not be opened")]
    Pipes,
    #[error("interrupted by {0} before the server was started")]
    Interrupted(String),
}

/// What to launch and with what.
#[derive(Clone, Debug)]
pub struct JailSpec {
    pub command: Vec<String>,
    pub stores: Vec<StoreSpec>,
    pub env: Vec<(String, String)>,
    pub keep: bool,
    /// Try a network namespace (on by default; the lab's testbed needs no network).
    pub isolate_network: bool,
}

/// Clock columns only mean something to the SQLite observer: declared on
/// another store they would be read by nobody, which is a mistake, not a
/// no-op.
fn check_clock_columns(stores: &[StoreSpec]) -> Result<(), JailError> {
    match stores
        .iter()
        .find(|s| s.kind != StoreKind::Sqlite && !s.clock_columns.is_empty())
    {
        Some(store) => Err(JailError::ClockColumns {
            name: store.name.clone(),
        }),
        None => Ok(()),
    }
}

/// A live jail. Dropping it stops its PostgreSQL clusters, then removes
/// the directory unless it is kept.
pub struct Jail {
    /// Declared first so they stop before the directory holding them is
    /// removed (fields drop in order).
    _clusters: Vec<witness_postgres::Cluster>,
    /// The jail's bounded tmpfs, unmounted after the clusters stopped and
    /// before the (then empty) directory is removed.
    mount: Option<crate::disk::JailMount>,
    /// Why the jail's total is not bounded (`None`: it is).
    disk_unbounded: Option<String>,
    /// Whether the jail's tmpfs was full when last asked (a bound reached
    /// is reported once, when it fills).
    disk_full: bool,
    dir: Option<JailDir>,
    root: PathBuf,
    pub stores: Vec<JailedStore>,
    spec: JailSpec,
    isolation: Option<Isolation>,
    /// How each store came into the jail: viewed, or copied and why.
    method: crate::cow::Method,
    /// What the copies left out or changed (links out, special files).
    copy_warnings: Vec<String>,
    /// The network observer's recorder for the server running now.
    sink: Option<witness_netsink::Sink>,
    /// Where the listening sockets of the running server's own network
    /// namespace (the sandbox's init's) are read, less the sink's (`None`
    /// without a namespace).
    netns: Option<crate::listening::Listeners>,
    /// Every TCP socket a server of this jail was seen listening on.
    listening: std::collections::BTreeSet<witness_model::audit::ListeningSocket>,
    /// Why some launch ran without the network observer (the first reason).
    unobserved: Option<String>,
    /// Whether the server was launched at least once.
    launched: bool,
    /// What the sinks of servers that ended recorded and nobody took yet.
    carried: witness_netsink::recorder::Window,
    /// Directories outside the jail the server may write too ([`Jail::also_writable`]).
    also_writable: Vec<PathBuf>,
    /// The cgroups holding the server running now (resource bounds).
    cgroups: Vec<Cgroup>,
    /// Bounds reached by servers that ended, not yet taken.
    carried_hits: Vec<String>,
    /// The decoys in the stores' originals' places, made at the first
    /// launch inside bubblewrap (`None` before it, or without bubblewrap).
    decoys: crate::decoy::OriginalWrites,
    /// Keeps the directory known to the signal handler while it lives.
    _registration: Option<crate::interrupt::Registration>,
    /// Tells a later audit's sweep that this jail has a live owner.
    _lock: Option<std::fs::File>,
}

/// What removes a jail's directory when the jail drops. A launching jail's
/// is registered with the interrupt (its tmpfs is unmounted first); a
/// remote target's holds nothing mounted, an ordinary scratch directory.
enum JailDir {
    Launching {
        _dir: tempfile::TempDir,
    },
    Remote {
        _dir: witness_process::scratch::ScratchDir,
    },
}

/// A fresh directory under the temporary directory, named `prefix` and
/// twelve lowercase hex digits. Not tempfile's mixed-case suffix: a server
/// that case-folds the paths it is given (as code written for
/// case-insensitive filesystems does) would then look for its store under
/// a name that does not exist, and fail for the jail's sake, not its own.
fn lowercase_tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    use std::hash::{BuildHasher, Hasher};
    let mut last = None;
    for attempt in 0u64..32 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(attempt);
        hasher.write_u32(std::process::id());
        let suffix = format!("{:012x}", hasher.finish() & 0xffff_ffff_ffff);
        match tempfile::Builder::new()
            .prefix(&format!("{prefix}{suffix}"))
            .rand_bytes(0)
            .tempdir()
        {
            Ok(dir) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free jail directory name")))
}

impl Jail {
    pub fn create(spec: JailSpec) -> Result<Self, JailError> {
        check_clock_columns(&spec.stores)?;
        stale::sweep(&std::env::temp_dir());
        crate::bounds::sweep_cgroups();
        let prefix = if spec.keep {
            stale::KEPT_PREFIX
        } else {
            stale::PREFIX
        };
        let make = || {
            let dir = lowercase_tempdir(prefix)?;
            // Canonical, so the sandbox binds it and Landlock allows it
            // under the same name the server is given.
            let root = dir
                .path()
                .canonicalize()
                .unwrap_or_else(|_| dir.path().to_path_buf());
            Ok((dir, root))
        };
        // A kept jail is meant to outlive the process, however it ends.
        let (dir, root, registration) = if spec.keep {
            let (dir, root) = make().map_err(JailError::Create)?;
            (dir, root, None)
        } else {
            let (dir, root, registration) =
                crate::interrupt::make_jail(make).map_err(JailError::Create)?;
            (dir, root, Some(registration))
        };
        let lock = (!spec.keep).then(|| stale::hold(dir.path())).flatten();
        // Mounted after the lock is taken: the lock is on the directory
        // beneath, which other auditors' sweeps see.
        std::fs::create_dir_all(root.join("stores")).map_err(JailError::Create)?;
        let (mount, disk_unbounded) = if spec.keep {
            (
                None,
                Some("a kept jail (--keep-jail) stays on disk, to be read afterwards".to_owned()),
            )
        } else {
            match crate::disk::JailMount::mount(&root, crate::bounds::bounds().disk) {
                Ok(mount) => (Some(mount), None),
                Err(why) => (None, Some(why)),
            }
        };
        for sub in ["work", "home", "tmp", "stores"] {
            std::fs::create_dir_all(root.join(sub)).map_err(JailError::Create)?;
        }
        let layers = crate::cow::layers_dir(spec.keep, mount.as_ref(), disk_unbounded.as_deref());
        let mut method = crate::cow::Method::default();
        let mut stores = Vec::new();
        let mut copy_warnings = Vec::new();
        let mut clusters = Vec::new();
        for store in &spec.stores {
            if store.kind == StoreKind::Postgres {
                let (jailed, cluster) = start_cluster(&root, store)?;
                clusters.push(cluster);
                stores.push(jailed);
                continue;
            }
            let (jailed, warnings) = copy_in(&root, store, &layers, &mut method)?;
            copy_warnings.extend(warnings);
            stores.push(jailed);
        }
        let (dir, root) = if spec.keep {
            let kept = dir.keep();
            (None, kept.canonicalize().unwrap_or(kept))
        } else {
            (Some(JailDir::Launching { _dir: dir }), root)
        };
        Ok(Self {
            _clusters: clusters,
            mount,
            disk_unbounded,
            disk_full: false,
            dir,
            root,
            stores,
            spec,
            isolation: None,
            method,
            copy_warnings,
            sink: None,
            netns: None,
            listening: Default::default(),
            unobserved: None,
            launched: false,
            carried: Default::default(),
            also_writable: Vec::new(),
            cgroups: Vec::new(),
            carried_hits: Vec::new(),
            decoys: Default::default(),
            _registration: registration,
            _lock: lock,
        })
    }

    /// The bytes the stores take on the auditor's disk in this jail: what
    /// the server changed of a view (its upper layer, and a view's links),
    /// or a copy whole. What `bench/run.py` reports as a jail's disk use.
    pub fn stores_disk_use(&self) -> u64 {
        let mut places: Vec<PathBuf> = self
            .stores
            .iter()
            .filter(|s| s.spec.kind != StoreKind::Postgres && !self.method.is_viewed(&s.spec.name))
            .map(|s| s.path.clone())
            .collect();
        // A view's upper layer and its work directory; never its lower
        // layer, whose links are the originals' own blocks.
        if let Some(mount) = &self.mount {
            let layers = mount.hidden_dir();
            for store in &self.stores {
                if self.method.is_viewed(&store.spec.name) {
                    for sub in ["upper", "work"] {
                        places.push(layers.join(&store.spec.name).join(sub));
                    }
                }
            }
        }
        places.iter().map(|p| crate::cow::disk_use(p)).sum()
    }

    /// How the stores came into the jail, as the isolation detail ends
    /// (`None` when no store was viewed or copied).
    pub fn stores_method(&self) -> Option<String> {
        self.method.sentence()
    }

    /// What the store copies left out or changed, one line each, prefixed
    /// with the store's name.
    pub fn copy_warnings(&self) -> &[String] {
        &self.copy_warnings
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the directory outlives the audit (`--keep-jail`).
    pub fn kept(&self) -> bool {
        self.dir.is_none()
    }

    /// Lets the server write beneath `dirs` as well as in the jail: the
    /// sandbox binds them writable and Landlock allows them. Only for a
    /// server the user chose to run on real data (`proxy --live`); the
    /// isolation stated after a launch says so. A directory that does not
    /// exist is refused (one line).
    pub fn also_writable(&mut self, dirs: &[PathBuf]) -> Result<(), String> {
        for dir in dirs {
            let real = dir
                .canonicalize()
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            if !real.is_dir() {
                return Err(format!("{}: not a directory", dir.display()));
            }
            if !self.also_writable.contains(&real) {
                self.also_writable.push(real);
            }
        }
        Ok(())
    }

    /// Isolation achieved by the last launch (`None` before any launch).
    pub fn isolation(&self) -> Option<&Isolation> {
        self.isolation.as_ref()
    }

    /// Whether every launch so far had the network observer, and by what
    /// (`None` before any launch of a launched server).
    pub fn network_observer(&self) -> Option<witness_model::audit::NetworkObserverEntry> {
        use witness_model::audit::NetworkObserverEntry;
        match (&self.unobserved, self.launched) {
            (Some(why), _) => Some(NetworkObserverEntry {
                observed: false,
                detail: format!("the network was not observed: {why}"),
            }),
            (None, true) => Some(NetworkObserverEntry {
                observed: true,
                detail: witness_netsink::METHOD.into(),
            }),
            (None, false) => None,
        }
    }

    /// The outbound attempts recorded since the last call (empty when the
    /// network is not observed). The audit calls this around each call.
    pub fn network_window(&mut self) -> witness_netsink::recorder::Window {
        self.look_for_listeners();
        let mut window = std::mem::take(&mut self.carried);
        if let Some(sink) = &self.sink {
            match sink.take() {
                Some(now) => {
                    window.attempts.extend(now.attempts);
                    window.dropped += now.dropped;
                    window.attempts.sort();
                }
                None => self.lose_sink(),
            }
        }
        window
    }

    /// Every TCP socket a server of this jail listened on in its network
    /// namespace, as seen around each call and now.
    pub fn listening(&mut self) -> Vec<witness_model::audit::ListeningSocket> {
        self.look_for_listeners();
        self.listening.iter().cloned().collect()
    }

    fn look_for_listeners(&mut self) {
        if let Some(listeners) = &mut self.netns {
            self.listening.extend(listeners.read());
        }
    }

    /// The resource bounds the server reached since this was last asked,
    /// each as `memory 2 GiB` (only where the kernel counts: a cgroup's,
    /// and the jail's tmpfs, which is full).
    pub fn bounds_hit(&mut self) -> Vec<String> {
        let mut hits = std::mem::take(&mut self.carried_hits);
        for cgroup in &mut self.cgroups {
            if cgroup.hit_since_last() {
                hits.push(bound_text(cgroup.controller()));
            }
        }
        if let Some(mount) = &self.mount {
            let full = mount.full();
            if full && !self.disk_full {
                hits.push(format!(
                    "disk {}",
                    crate::bounds::show_bytes(crate::bounds::bounds().disk)
                ));
            }
            self.disk_full = full;
        }
        hits.dedup();
        hits
    }

    /// The paths of the stores' originals the server wrote since this was
    /// last asked, as the report names them: the writes landed in the
    /// decoys that stand in for the originals (none without bubblewrap,
    /// where no decoy can be placed and a refused write is not seen).
    pub fn original_writes(&mut self) -> Vec<String> {
        self.decoys.take()
    }

    /// The same comparison, for an observed set made from this jail before
    /// its first launch placed the decoys.
    pub fn original_writes_handle(&self) -> crate::decoy::OriginalWrites {
        self.decoys.clone()
    }

    /// The recorder stopped answering: from here on the network is not
    /// observed, and the report says so rather than "nothing was sent".
    fn lose_sink(&mut self) {
        self.sink = None;
        self.unobserved
            .get_or_insert_with(|| "the network observer's recorder stopped answering".into());
    }

    /// `{NAME}` → jailed store path, `{jail}` → the jail root.
    pub fn expand(&self, text: &str) -> String {
        let mut out = text.replace("{jail}", &self.root.to_string_lossy());
        for store in &self.stores {
            out = out.replace(&format!("{{{}}}", store.spec.name), &store.handle());
        }
        out
    }

    /// The environment the server gets: the allowlist, the jail's HOME and
    /// TMPDIR, then the user's `--env` pairs (placeholders expanded).
    pub fn environment(&self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        for key in ENV_ALLOWLIST {
            if let Ok(value) = std::env::var(key) {
                env.insert(key.to_owned(), value);
            }
        }
        env.insert(
            "HOME".into(),
            self.root.join("home").to_string_lossy().into_owned(),
        );
        env.insert(
            "TMPDIR".into(),
            self.root.join("tmp").to_string_lossy().into_owned(),
        );
        for (k, v) in &self.spec.env {
            env.insert(k.clone(), self.expand(v));
        }
        env
    }

    /// Starts one server process in the jail, in the strongest sandbox this
    /// machine offers (see [`sandbox`]).
    pub fn launch(&mut self, clock: Arc<dyn Clock>) -> Result<Connection, LaunchError> {
        if let Some(signal) = crate::interrupt::signal() {
            return Err(LaunchError::Interrupted(crate::interrupt::signal_name(
                signal,
            )));
        }
        let Some((program, args)) = self.spec.command.split_first() else {
            return Err(LaunchError::NoCommand);
        };
        let program = resolve_program(program);
        let args: Vec<String> = args.iter().map(|a| self.expand(a)).collect();
        let network = self.spec.isolate_network;
        let mut decision = sandbox::decide(
            sandbox::availability(),
            crate::bounds::bounds(),
            &self.root,
            network,
        );
        decision
            .landlock
            .writable
            .extend(self.also_writable.iter().cloned());
        // The layer as this jail has it: a jail left on disk (kept, or where
        // the tmpfs could not be mounted or bounded) says its total is not
        // bounded, and why.
        if let Some(why) = &self.disk_unbounded {
            let helper = decision.helper.is_some();
            let detail = sandbox::disk_layer(
                crate::bounds::bounds().disk,
                helper,
                decision.bwrap.is_some(),
                Err(why.clone()),
            );
            for entry in decision
                .layers
                .iter_mut()
                .filter(|l| l.layer == IsolationLayer::Disk)
            {
                entry.held = detail.is_ok();
                entry.detail = detail.clone().unwrap_or_else(|e| e);
            }
        }
        let spawn_error = |source| LaunchError::Spawn {
            program: program.clone(),
            source,
        };
        // The sink of a server that ended is done with; what it recorded
        // since the last window is carried into the next.
        self.netns = None;
        if let Some(old) = self.sink.take() {
            match old.take() {
                Some(window) => {
                    self.carried.attempts.extend(window.attempts);
                    self.carried.dropped += window.dropped;
                }
                None => self.lose_sink(),
            }
        }
        // The last server's cgroups: what it reached is carried, then they
        // go (it has been stopped), and the new server gets its own.
        for mut old in std::mem::take(&mut self.cgroups) {
            if old.hit_since_last() {
                self.carried_hits.push(bound_text(old.controller()));
            }
        }
        let mut cgroups = Vec::new();
        for &(controller, limit) in &decision.cgroups {
            match Cgroup::make(controller, limit) {
                Ok(cgroup) => cgroups.push(cgroup),
                Err(why) => {
                    let layer = match controller {
                        Controller::Memory => IsolationLayer::Memory,
                        Controller::Pids => IsolationLayer::Processes,
                    };
                    for entry in decision.layers.iter_mut().filter(|l| l.layer == layer) {
                        *entry = sandbox::layer_entry(layer, Err(why.clone()));
                    }
                }
            }
        }
        self.cgroups = cgroups;
        let ((mut child, init, layers), sink) = match decision.bwrap.clone() {
            Some(bwrap) => {
                let path_var = self.environment().get("PATH").map(std::ffi::OsString::from);
                let install =
                    crate::view::install_dirs(&program, &args, path_var.as_deref(), &self.root);
                self.place_decoys(&decision, &install);
                decision.decoys = self.decoy_paths().into_iter().map(|(at, _)| at).collect();
                self.spawn_bwrap(&bwrap, &decision, &program, &args, &install)
                    .map_err(spawn_error)?
            }
            None => (
                self.spawn_direct(&decision, &program, &args)
                    .map_err(spawn_error)?,
                Err("the network observer needs bubblewrap's network namespace".into()),
            ),
        };
        self.launched = true;
        let in_netns = layers
            .iter()
            .any(|l| l.layer == IsolationLayer::NetworkNamespace && l.held)
            && decision.bwrap.is_some();
        let (sink, sink_sockets) = match sink {
            Ok((sink, inodes)) => (Ok(sink), inodes),
            Err(why) => (Err(why), Vec::new()),
        };
        // Without a namespace of its own the table would be the host's.
        self.netns = in_netns
            .then(|| {
                init.as_ref()
                    .map(|(pid, _)| crate::listening::Listeners::new(*pid, sink_sockets))
            })
            .flatten();
        match sink {
            Ok(sink) => self.sink = Some(sink),
            Err(why) => {
                self.unobserved.get_or_insert(why);
            }
        }
        self.isolation = Some(
            Isolation::of_layers(layers)
                .writable_beyond(&self.also_writable)
                .with_stores(self.method.sentence()),
        );
        let pipes = child.child_mut();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (pipes.stdin.take(), pipes.stdout.take(), pipes.stderr.take())
        else {
            drop(process::JailedProcess::new(child, init));
            return Err(LaunchError::Pipes);
        };
        let transport = StdioTransport::new(stdin, stdout, stderr, clock);
        Ok(Connection::launched(
            RpcClient::new(transport),
            Box::new(process::JailedProcess::new(child, init)),
        ))
    }

    /// Where a server starts: the first directory store (a vault, a
    /// project tree, a repository), as a user starts a server in the
    /// folder it is to work on, so that a relative path or a default
    /// output folder lands in what is observed, and a server that acts on
    /// "the current repository" finds one. Without a directory store, the
    /// jail's own empty `work` folder.
    pub fn work_dir(&self) -> PathBuf {
        self.stores
            .iter()
            .find(|s| matches!(s.spec.kind, StoreKind::Fs | StoreKind::Git) && s.path.is_dir())
            .map_or_else(|| self.root.join("work"), |s| s.path.clone())
    }

    /// The command with the environment, working directory and pipes every
    /// server gets (the launch puts it in a process group of its own).
    fn base_command(&self, mut cmd: Command) -> Command {
        cmd.env_clear()
            .envs(self.environment())
            .current_dir(self.work_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// The server inside bubblewrap (and Landlock inside that, where it
    /// works). Gives the child, the namespace's init, and the layers.
    fn spawn_bwrap(
        &self,
        bwrap: &Path,
        decision: &sandbox::Decision,
        program: &Path,
        args: &[String],
        install: &[PathBuf],
    ) -> std::io::Result<(Spawned, Result<StartedSink, String>)> {
        let info = sandbox::InfoPipe::new()?;
        let info_fd = info.write.as_raw_fd();
        // bubblewrap waits on this pipe before the server runs, while the
        // network observer's sink is made.
        let block = match decision.observe_network {
            Ok(()) => Some(sandbox::InfoPipe::new()?),
            Err(_) => None,
        };
        let block_fd = block.as_ref().map(|b| b.read.as_raw_fd());
        let network = self.spec.isolate_network;
        let decoys = self.decoy_paths();
        let hidden: Vec<PathBuf> = self
            .originals()
            .into_iter()
            .filter(|file| !decoys.iter().any(|(at, _)| file.starts_with(at)))
            .collect();
        let workdir = self.work_dir();
        let visible = sandbox::Visible {
            workdir: &workdir,
            install,
            extra: crate::view::extra(),
            decoys: &decoys,
            hidden: &hidden,
            scratch: crate::bounds::bounds().disk,
        };
        let mut cmd = sandbox::bwrap_command(
            bwrap, decision, &self.root, network, &visible, info_fd, block_fd,
        );
        cmd.arg(program).args(args);
        let mut cmd = self.base_command(cmd);
        // bubblewrap (only) inherits the write end of the info pipe and the
        // read end of the block pipe.
        let mut launch = self.launch_in_cgroups().inherit_fd(info.write.as_fd());
        if let Some(b) = &block {
            launch = launch.inherit_fd(b.read.as_fd());
        }
        let spawned = launch.spawn(&mut cmd);
        drop(launch);
        let block = block.map(|b| {
            drop(b.read);
            b.write
        });
        let child = spawned?;
        let pid = info.child_pid(Duration::from_secs(5));
        let sink = match (&block, pid, &decision.helper) {
            (Some(_), Some(pid), Some(helper)) => network::start_sink(helper, pid),
            (Some(_), _, _) => Err("bubblewrap did not report its sandbox".into()),
            (None, _, _) => Err(decision.observe_network.clone().err().unwrap_or_default()),
        };
        if let Some(go) = block {
            // Written or not, closing the pipe lets bubblewrap go on.
            let mut go = std::fs::File::from(go);
            let _ = std::io::Write::write_all(&mut go, b"g");
        }
        let init = pid.and_then(|pid| Pidfd::open(pid).ok().map(|fd| (pid, fd)));
        let mut layers = decision.layers.clone();
        for entry in layers
            .iter_mut()
            .filter(|l| l.layer == IsolationLayer::MountNamespace && l.held)
        {
            entry.detail = crate::view::describe(
                install.len(),
                crate::view::extra(),
                decoys.len(),
                hidden.len(),
            );
        }
        Ok(((child, init, layers), sink))
    }

    /// Makes the decoys for the stores' originals, once per jail: where the
    /// sandbox shows `install` and binds what `decision` says. A jail whose
    /// decoys cannot be made hides its originals behind `/dev/null`.
    fn place_decoys(&mut self, decision: &sandbox::Decision, install: &[PathBuf]) {
        if self.decoys.placed() {
            return;
        }
        // Neither beneath nor above: what the sandbox shows of the host, the
        // kernel's /proc, the jail and whatever else is bound writable.
        let mut views: Vec<PathBuf> = crate::view::SYSTEM
            .iter()
            .map(PathBuf::from)
            .chain([PathBuf::from("/etc"), PathBuf::from("/proc")])
            .chain(install.iter().cloned())
            .chain(crate::view::extra().iter().cloned())
            .chain([self.root.clone()])
            .chain(decision.helper.iter().cloned())
            .chain(decision.landlock.writable.iter().cloned())
            .collect();
        views.retain(|v| v.exists());
        // Never above: the sandbox's own tmpfs mounts, on which a decoy may be
        // placed (an original beneath /tmp).
        let mounts = [PathBuf::from("/tmp"), PathBuf::from("/dev")];
        let originals = crate::decoy::Original::of_stores(&self.stores);
        let placements = crate::decoy::place(&originals, &views, &mounts);
        self.decoys
            .place(crate::decoy::Decoys::make(&self.root, placements).unwrap_or_default());
    }

    /// Each decoy as (the original's path, the decoy on the host).
    fn decoy_paths(&self) -> Vec<(PathBuf, PathBuf)> {
        self.decoys.paths()
    }

    /// The server without bubblewrap: Landlock through the helper where it
    /// works, and a network namespace where the kernel lets us make one.
    fn spawn_direct(
        &self,
        decision: &sandbox::Decision,
        program: &Path,
        args: &[String],
    ) -> std::io::Result<Spawned> {
        let build = || {
            let cmd = match decision.helper_needed() {
                Some(helper) => {
                    let mut cmd = Command::new(helper);
                    cmd.args(decision.helper_args()).arg(program).args(args);
                    cmd
                }
                None => {
                    let mut cmd = Command::new(program);
                    cmd.args(args);
                    cmd
                }
            };
            self.base_command(cmd)
        };
        let mut layers = decision.layers.clone();
        if !decision.direct_netns {
            return Ok((self.launch_in_cgroups().spawn(&mut build())?, None, layers));
        }
        let (netns, spawned) = spawn_isolated(self.launch_in_cgroups(), build())?;
        let child = match spawned {
            Some(child) => child,
            None => self.launch_in_cgroups().spawn(&mut build())?,
        };
        if let Some(entry) = layers
            .iter_mut()
            .find(|l| l.layer == IsolationLayer::NetworkNamespace)
        {
            *entry = sandbox::layer_entry(IsolationLayer::NetworkNamespace, netns);
        }
        Ok((child, None, layers))
    }

    /// A launch that puts the server in the jail's cgroups.
    fn launch_in_cgroups(&self) -> Launch<'_> {
        self.cgroups
            .iter()
            .filter_map(Cgroup::procs)
            .fold(Launch::new(), |launch, fd| launch.join_cgroup(fd.as_fd()))
    }

    /// The stores' original files, hidden from the server in the sandbox
    /// (behind `/dev/null` where no decoy stands in for them). A tree (a
    /// repository too) gets a decoy only where nothing else the sandbox
    /// shows lies in it: it may hold the server's own code.
    fn originals(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for store in &self.stores {
            if matches!(store.spec.kind, StoreKind::Fs | StoreKind::Git) || !store.existed {
                continue;
            }
            for suffix in WITH_COMPANIONS {
                let path = with_suffix(&store.spec.source, suffix);
                if let Ok(real) = path.canonicalize()
                    && real.metadata().is_ok_and(|m| m.is_file())
                {
                    files.push(real);
                }
            }
        }
        files
    }

    /// A jail for a remote server (`--url`): nothing is copied and nothing is
    /// launched here; each store is observed in place, where the server writes
    /// it. Observers only read, without perturbing what they read.
    pub fn in_place(stores: Vec<StoreSpec>) -> Result<Self, JailError> {
        if let Some(store) = stores.iter().find(|s| s.kind == StoreKind::Postgres) {
            return Err(JailError::RemotePostgres {
                name: store.name.clone(),
            });
        }
        let dir =
            witness_process::scratch::tempdir("mcp-witness-remote-").map_err(JailError::Create)?;
        let root = dir.path().to_path_buf();
        let jailed = stores
            .iter()
            .map(|store| JailedStore {
                spec: store.clone(),
                path: store.source.clone(),
                existed: store.source.exists(),
            })
            .collect();
        let (stores, spec_stores) = (jailed, stores);
        // Nothing is launched from this jail: it has no command of its own.
        let spec = JailSpec {
            command: Vec::new(),
            stores: spec_stores,
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        };
        Ok(Self {
            _clusters: Vec::new(),
            mount: None,
            disk_unbounded: None,
            disk_full: false,
            dir: Some(JailDir::Remote { _dir: dir }),
            root,
            stores,
            spec,
            isolation: Some(Isolation::none(REMOTE_ISOLATION)),
            method: Default::default(),
            copy_warnings: Vec::new(),
            sink: None,
            netns: None,
            listening: Default::default(),
            unobserved: Some("a remote server is not launched here".into()),
            launched: false,
            carried: Default::default(),
            also_writable: Vec::new(),
            cgroups: Vec::new(),
            carried_hits: Vec::new(),
            decoys: Default::default(),
            _registration: None,
            _lock: None,
        })
    }
}

/// How a reached bound is named in a `resource-limit` finding.
fn bound_text(controller: Controller) -> String {
    let bounds = crate::bounds::bounds();
    match controller {
        Controller::Memory => format!("memory {}", crate::bounds::show_bytes(bounds.memory)),
        Controller::Pids => format!("processes {}", bounds.processes),
    }
}

/// How a remote server's isolation is stated in a report.
pub const REMOTE_ISOLATION: &str = "remote server: not jailed; stores observed in place, read-only";

/// A fresh connection to an HTTP endpoint, shaped like a launched server.
pub fn connect(endpoint: &Endpoint, clock: Arc<dyn Clock>, timeout: Duration) -> Connection {
    Connection::remote(RpcClient::new(HttpTransport::new(
        endpoint.clone(),
        clock,
        timeout,
    )))
}

/// A spawned server: the child, the sandbox's PID-namespace init (pid and
/// pidfd) when there is one, and the layers it got.
type Spawned = (Controlled, Option<(i32, Pidfd)>, Vec<LayerEntry>);

/// The network observer's recorder and the inodes of its own sockets.
type StartedSink = (witness_netsink::Sink, Vec<u64>);

/// Spawns `cmd` in a new network namespace (root only, without
/// bubblewrap). When the kernel refuses one, no child is started and the
/// error says why: the caller starts the server without it. Any other
/// failure to spawn is an error.
fn spawn_isolated(
    launch: Launch<'_>,
    mut cmd: Command,
) -> std::io::Result<(Result<(), String>, Option<Controlled>)> {
    match launch.new_network_namespace().spawn(&mut cmd) {
        Ok(child) => Ok((Ok(()), Some(child))),
        Err(e)
            if e.kind() == ErrorKind::PermissionDenied
                || [Errno::PERM, Errno::INVAL, Errno::NOSPC]
                    .iter()
                    .any(|errno| e.raw_os_error() == Some(errno.raw_os_error())) =>
        {
            let why = format!("the kernel refused a network namespace ({e})");
            Ok((Err(why), None))
        }
        Err(e) => Err(e),
    }
}

/// `mcp-witness` in a target command means this very binary, so the lab and
/// the README never need to find a second executable.
fn resolve_program(program: &str) -> PathBuf {
    if program == "mcp-witness"
        && let Ok(exe) = std::env::current_exe()
    {
        return exe;
    }
    let path = PathBuf::from(program);
    // The server starts inside the jail, so a relative path the user typed
    // must be made absolute against where they typed it.
    if program.contains('/')
        && path.is_relative()
        && let Ok(cwd) = std::env::current_dir()
    {
        return cwd.join(path);
    }
    path
}

/// A SQLite or JSON-lines store's file and the companions SQLite keeps
/// beside it: what hiding an original, or standing a decoy in its place,
/// must cover.
pub(crate) const WITH_COMPANIONS: [&str; 4] = ["", "-wal", "-journal", "-shm"];

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Brings one declared store into the jail, as a copy-on-write view where
/// `layers` says this jail can have them (else, or where the store's view
/// cannot be mounted, as a copy), and records which in `method`. Gives the
/// jailed store and what the copy had to leave out, each line prefixed with
/// the store.
fn copy_in(
    root: &Path,
    store: &StoreSpec,
    layers: &Result<PathBuf, String>,
    method: &mut crate::cow::Method,
) -> Result<(JailedStore, Vec<String>), JailError> {
    let holder = root.join("stores").join(&store.name);
    std::fs::create_dir_all(&holder).map_err(JailError::Create)?;
    let copy_err = |error| JailError::Copy {
        name: store.name.clone(),
        path: store.source.clone(),
        error,
    };
    // A link the user named counts by what it names.
    let existed = std::fs::metadata(&store.source).is_ok();
    let mut warnings = Vec::new();
    let path = match store.kind {
        // A repository is a tree like any other: `.git` travels inside it,
        // byte for byte, so the copy is the same repository.
        StoreKind::Fs | StoreKind::Git => {
            let tree = holder.join(if store.kind == StoreKind::Git {
                "repo"
            } else {
                "tree"
            });
            if store.kind == StoreKind::Git && store.source.join(".git").is_file() {
                // A linked worktree or a submodule: its `.git` file names a
                // git directory outside the copy, which the server would
                // then write to.
                return Err(copy_err(std::io::Error::other(
                    "its .git is a file pointing to a git directory elsewhere; give the main working directory",
                )));
            }
            if existed {
                let viewed = match layers {
                    Ok(layers) => crate::cow::view_tree(layers, &store.name, &store.source, &tree),
                    Err(why) => Err(crate::cow::ViewError::Fallback(why.clone())),
                };
                warnings = match viewed {
                    Ok(warnings) => {
                        method.viewed(&store.name);
                        warnings
                    }
                    Err(crate::cow::ViewError::Failed(error)) => return Err(copy_err(error)),
                    Err(crate::cow::ViewError::Fallback(why)) => {
                        method.copied(&store.name, why);
                        copy::copy_tree(&store.source, &tree).map_err(copy_err)?
                    }
                };
            } else {
                std::fs::create_dir_all(&tree).map_err(copy_err)?;
            }
            tree
        }
        StoreKind::Sqlite | StoreKind::Jsonl => {
            let file_name = store
                .source
                .file_name()
                .map(|n| n.to_owned())
                .unwrap_or_else(|| "store".into());
            let target = holder.join(file_name);
            // A store mid-transaction travels with its companions.
            let companions: &[&str] = if store.kind == StoreKind::Sqlite {
                &["", "-wal", "-journal"]
            } else {
                &[""]
            };
            let viewed = match (existed, layers) {
                (false, _) => Err(None),
                (true, Ok(layers)) => {
                    crate::cow::view_file(layers, &store.name, &store.source, companions, &holder)
                        .map_err(Some)
                }
                (true, Err(why)) => Err(Some(crate::cow::ViewError::Fallback(why.clone()))),
            };
            match viewed {
                Ok(()) => method.viewed(&store.name),
                Err(Some(crate::cow::ViewError::Failed(error))) => return Err(copy_err(error)),
                Err(Some(crate::cow::ViewError::Fallback(why))) => method.copied(&store.name, why),
                Err(None) => {}
            }
            if existed && !method.is_viewed(&store.name) {
                copy::copy_store_file(&store.source, &target).map_err(copy_err)?;
                if store.kind == StoreKind::Sqlite {
                    // A store mid-transaction travels with its companions.
                    for suffix in ["-wal", "-journal"] {
                        let from = with_suffix(&store.source, suffix);
                        if from.exists() {
                            copy::copy_store_file(&from, &with_suffix(&target, suffix))
                                .map_err(copy_err)?;
                        }
                    }
                }
            }
            target
        }
        // Never copied: `start_cluster` restores it into a cluster.
        StoreKind::Postgres => holder,
    };
    let warnings = warnings
        .into_iter()
        .map(|w| format!("store {}: {w}", store.name))
        .collect();
    let jailed = JailedStore {
        spec: store.clone(),
        path,
        existed,
    };
    Ok((jailed, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_spec(source: &Path) -> JailSpec {
        JailSpec {
            command: vec!["true".into()],
            stores: vec![StoreSpec {
                name: "repo".into(),
                kind: StoreKind::Git,
                source: source.to_path_buf(),
                shown: None,
                clock_columns: Vec::new(),
            }],
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        }
    }

    #[test]
    fn a_git_store_is_copied_with_its_git_directory_and_a_linked_one_refused() {
        let spec = StoreSpec::parse("repo=git:/src/project").map_err(|e| e.to_string());
        assert_eq!(spec.map(|s| s.kind), Ok(StoreKind::Git));
        let source = tempfile::tempdir().expect("tempdir");
        for (path, text) in [(".git/HEAD", "ref: refs/heads/main\n"), ("a.txt", "a\n")] {
            let file = source.path().join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, text).expect("write");
        }
        let jail = Jail::create(git_spec(source.path())).expect("jail");
        let copy = &jail.stores[0].path;
        assert!(copy.ends_with("stores/repo/repo"), "{}", copy.display());
        assert_eq!(
            std::fs::read_to_string(copy.join(".git/HEAD"))
                .ok()
                .as_deref(),
            Some("ref: refs/heads/main\n")
        );
        let linked = tempfile::tempdir().expect("tempdir");
        std::fs::write(linked.path().join(".git"), "gitdir: /elsewhere\n").expect("write");
        let refused = Jail::create(git_spec(linked.path())).map(|_| ());
        assert!(
            refused.as_ref().is_err_and(|e| e
                .to_string()
                .contains("pointing to a git directory elsewhere")),
            "{refused:?}"
        );
    }

    #[test]
    fn clock_columns_on_a_store_without_columns_are_refused() {
        use witness_observers::sqlite::ClockColumn;
        let column = ClockColumn::parse("t.created_at").into_iter().collect();
        let spec = JailSpec {
            command: vec!["true".into()],
            stores: vec![StoreSpec {
                name: "files".into(),
                kind: StoreKind::Fs,
                source: "/nonexistent/tree".into(),
                shown: None,
                clock_columns: column,
            }],
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        };
        let error = Jail::create(spec).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("store files: clock columns are declared, but only a SQLite store has columns")
        );
    }

    #[test]
    fn jail_directories_are_named_in_lowercase_and_never_twice() {
        let a = lowercase_tempdir(stale::PREFIX).expect("a jail directory");
        let b = lowercase_tempdir(stale::PREFIX).expect("another");
        for dir in [&a, &b] {
            let name = dir
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            assert!(name.starts_with(stale::PREFIX), "{name}");
            assert_eq!(name, name.to_lowercase(), "{name}");
        }
        assert_ne!(a.path(), b.path());
    }

    #[test]
    fn placeholders_expand_to_jailed_paths_and_env_is_scrubbed() {
        let spec = JailSpec {
            command: vec!["true".into()],
            stores: vec![StoreSpec {
                name: "db".into(),
                kind: StoreKind::Sqlite,
                source: "/nonexistent/never.db".into(),
                shown: None,
                clock_columns: Vec::new(),
            }],
            env: vec![("DB".into(), "{db}".into())],
            keep: false,
            isolate_network: false,
        };
        let jail = match Jail::create(spec) {
            Ok(jail) => jail,
            Err(e) => panic!("jail: {e}"),
        };
        let store = &jail.stores[0];
        assert!(!store.existed);
        assert!(store.path.starts_with(jail.root()));
        assert_eq!(
            jail.expand("--store={db}"),
            format!("--store={}", store.path.display())
        );
        let env = jail.environment();
        assert_eq!(env.get("DB").map(PathBuf::from), Some(store.path.clone()));
        assert!(env["HOME"].starts_with(&*jail.root().to_string_lossy()));
        for key in env.keys() {
            assert!(
                ENV_ALLOWLIST.contains(&key.as_str())
                    || ["HOME", "TMPDIR", "DB"].contains(&key.as_str()),
                "unexpected variable {key}"
            );
        }
        let root = jail.root().to_path_buf();
        drop(jail);
        assert!(!root.exists(), "the jail is removed unless kept");
    }
}
