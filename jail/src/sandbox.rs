//! The sandbox a launched server runs in, from well-kept parts.
//!
//! Two independent layers, each used where this machine offers it:
//!
//! - **bubblewrap** (`bwrap`): user, mount, PID, network, IPC and UTS
//!   namespaces; the host file system bound read-only, the jail bound
//!   writable at its own path, `/run` hidden, a decoy in each store's
//!   original's place (see `decoy`: a write there is reported, not lost),
//!   a fresh `/proc` that shows only the sandbox's processes, every
//!   capability dropped, no further user namespaces, a new session, and
//!   death with the auditor. It works unprivileged (user namespaces) and as
//!   root, with the same flags, so a root server gains nothing outside.
//! - **Landlock** (the `landlock` crate), applied by this very binary
//!   (`mcp-witness sandbox-exec`, see [`HELPER_COMMAND`]) just before it
//!   becomes the server: the kernel refuses writes outside the jail, TCP
//!   connect and bind, and signals and abstract unix sockets that leave the
//!   sandbox. Landlock cannot be applied to bubblewrap itself (a Landlocked
//!   process may not mount), so the helper runs inside it. Where the jail
//!   has a network namespace of its own, TCP bind is left to it: a
//!   listening socket there reaches no one, so a server that opens a
//!   dashboard or a worker port beside its stdio starts; where it has
//!   none, the kernel refuses every bind.
//!
//! Which layers work is probed once per process ([`availability`]); the
//! helper enforces what was claimed as a hard requirement, so a layer the
//! report says held was in force before the server's first instruction, or
//! the server never ran.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use landlock::{
    ABI, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use rustix::event::{PollFd, PollFlags, Timespec};
use witness_model::audit::LayerEntry;
use witness_model::vocab::{IsolationLayer, IsolationLevel};
use witness_process::Launch;

use crate::bounds::{self, Bounds, Controller, Limit};

/// The hidden subcommand of the binary that applies Landlock and then
/// becomes the server: `mcp-witness sandbox-exec [--write DIR]... [--fs]
/// [--net-bind] [--net-connect] [--scope] -- PROGRAM ARGS...`.
pub const HELPER_COMMAND: &str = "sandbox-exec";

/// The Landlock ABI whose write rights are asked for: 5 adds device
/// ioctls to the file-system rights of 1–4 (truncate, refer).
const FS_ABI: ABI = ABI::V5;

/// Device files a server may write to outside the jail: writing to them
/// changes nothing anyone can see.
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

static HELPER: OnceLock<PathBuf> = OnceLock::new();
static AVAILABLE: OnceLock<Availability> = OnceLock::new();

pub use crate::view::set_visible;

/// Registers the binary that implements [`HELPER_COMMAND`] (the running
/// `mcp-witness`). Without it no Landlock layer is used.
pub fn set_helper(path: PathBuf) {
    let _ = HELPER.set(path);
}

/// What this machine offers, probed by trying each layer once.
#[derive(Clone, Debug)]
pub struct Availability {
    /// A bubblewrap that set up every namespace we ask for, or why not.
    pub bwrap: Result<PathBuf, String>,
    pub landlock_fs: Result<(), String>,
    pub landlock_net: Result<(), String>,
    pub landlock_scope: Result<(), String>,
    /// The helper that applies Landlock, when registered.
    pub helper: Option<PathBuf>,
    /// A memory cgroup of the jail's own can be made, or why not.
    pub memory_cgroup: Result<(), String>,
    /// A pids cgroup of the jail's own can be made, or why not.
    pub pids_cgroup: Result<(), String>,
    /// The auditor's real user is root, whom the kernel exempts from
    /// `RLIMIT_NPROC` (inside a user namespace too: its user outside is root).
    pub root: bool,
}

/// The probes' results, taken on first use and kept for the process.
pub fn availability() -> &'static Availability {
    AVAILABLE.get_or_init(|| Availability {
        bwrap: find_bwrap().and_then(|path| probe_bwrap(&path).map(|()| path)),
        landlock_fs: probe_landlock(LandlockRequest {
            fs: true,
            ..LandlockRequest::default()
        }),
        landlock_net: probe_landlock(LandlockRequest {
            net_bind: true,
            net_connect: true,
            ..LandlockRequest::default()
        }),
        landlock_scope: probe_landlock(LandlockRequest {
            scope: true,
            ..LandlockRequest::default()
        }),
        helper: HELPER.get().cloned(),
        memory_cgroup: bounds::probe_cgroup(Controller::Memory),
        pids_cgroup: bounds::probe_cgroup(Controller::Pids),
        root: rustix::process::getuid().is_root(),
    })
}

/// The Landlock rules the helper applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LandlockRequest {
    /// Directories beneath which writes stay allowed (the jail).
    pub writable: Vec<PathBuf>,
    /// Refuse writes anywhere else.
    pub fs: bool,
    /// Refuse every TCP bind.
    pub net_bind: bool,
    /// Refuse every TCP connect.
    pub net_connect: bool,
    /// Refuse signals and abstract unix sockets that leave the domain.
    pub scope: bool,
}

impl LandlockRequest {
    pub fn any(&self) -> bool {
        self.fs || self.net_bind || self.net_connect || self.scope
    }

    /// The helper's arguments, up to and including `--`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![HELPER_COMMAND.into()];
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.clone().into_os_string());
        }
        for (on, flag) in [
            (self.fs, "--fs"),
            (self.net_bind, "--net-bind"),
            (self.net_connect, "--net-connect"),
            (self.scope, "--scope"),
        ] {
            if on {
                args.push(flag.into());
            }
        }
        args.push("--".into());
        args
    }
}

/// Applies `request` to the calling thread (and everything it executes),
/// every part a hard requirement: either all of it is in force, or an error
/// says what is not and nothing should run.
pub fn enforce(request: &LandlockRequest) -> Result<(), String> {
    let status = ruleset(request)?
        .restrict_self()
        .map_err(|e| format!("Landlock: {e}"))?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(format!(
            "Landlock: the rules are not fully enforced here ({:?})",
            status.ruleset
        ));
    }
    Ok(())
}

fn ruleset(request: &LandlockRequest) -> Result<RulesetCreated, String> {
    rules(request).map_err(|e| format!("Landlock: {e}"))
}

fn rules(request: &LandlockRequest) -> Result<RulesetCreated, Box<dyn std::error::Error>> {
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    if request.fs {
        ruleset = ruleset.handle_access(AccessFs::from_write(FS_ABI))?;
    }
    match (request.net_bind, request.net_connect) {
        (true, true) => {
            ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
        }
        (true, false) => ruleset = ruleset.handle_access(AccessNet::BindTcp)?,
        (false, true) => ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?,
        (false, false) => {}
    }
    if request.scope {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    }
    let mut created = ruleset.create()?;
    if request.fs {
        for dir in &request.writable {
            // A decoy may be a file, which takes the file rights only (the
            // kernel refuses directory rights on one).
            let rights = if dir.is_dir() {
                AccessFs::from_write(FS_ABI)
            } else {
                AccessFs::from_write(FS_ABI) & AccessFs::from_file(FS_ABI)
            };
            let fd = PathFd::new(dir)?;
            created = created.add_rule(PathBeneath::new(fd, rights))?;
        }
        for device in WRITABLE_DEVICES {
            if let Ok(fd) = PathFd::new(device) {
                let rights = AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
                created = created.add_rule(PathBeneath::new(fd, rights))?;
            }
        }
    }
    Ok(created)
}

/// Whether `request` can be enforced here: tried on a throwaway thread
/// (Landlock restricts the calling thread only), which then ends.
fn probe_landlock(request: LandlockRequest) -> Result<(), String> {
    std::thread::spawn(move || enforce(&request))
        .join()
        .unwrap_or_else(|_| Err("the probe thread failed".into()))
}

/// `bwrap` on the auditor's PATH.
fn find_bwrap() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| "bubblewrap (bwrap) is not installed".to_owned())
}

/// Makes the network observer's sink for a sandbox that runs `true`, as a
/// launch would (bubblewrap held on `--block-fd` while the helper works),
/// and says whether it could (what `doctor` shows).
pub fn probe_observer(available: &Availability) -> Result<(), String> {
    observer_possible(available, true)?;
    let (Ok(bwrap), Some(helper)) = (&available.bwrap, &available.helper) else {
        return Err("the network observer needs bubblewrap and its helper".into());
    };
    let info = InfoPipe::new().map_err(|e| e.to_string())?;
    let block = InfoPipe::new().map_err(|e| e.to_string())?;
    let (info_fd, block_fd) = (info.write.as_raw_fd(), block.read.as_raw_fd());
    let mut cmd = Command::new(bwrap);
    cmd.args(namespace_flags(true))
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .arg("--info-fd")
        .arg(info_fd.to_string())
        .arg("--block-fd")
        .arg(block_fd.to_string())
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // bubblewrap inherits the two ends.
    let mut child = Launch::new()
        .inherit_fd(info.write.as_fd())
        .inherit_fd(block.read.as_fd())
        .spawn(&mut cmd)
        .map_err(|e| format!("bubblewrap: {e}"))?;
    drop(block.read);
    let outcome = match info.child_pid(Duration::from_secs(5)) {
        Some(pid) => super::network::start_sink(helper, pid).map(drop),
        None => Err("bubblewrap did not report its sandbox".into()),
    };
    drop(block.write);
    let _ = child.wait();
    outcome
}

/// Runs `true` under exactly the namespaces a server gets.
fn probe_bwrap(bwrap: &Path) -> Result<(), String> {
    let mut cmd = Command::new(bwrap);
    cmd.args(namespace_flags(true))
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr.lines().next().unwrap_or("no message").trim();
            Err(format!(
                "bubblewrap cannot make the namespaces here: {}",
                witness_text::clip(first, 200)
            ))
        }
        Err(e) => Err(format!("bubblewrap cannot be run: {e}")),
    }
}

/// The namespaces and privileges every sandbox gets, root or not.
fn namespace_flags(network: bool) -> Vec<&'static str> {
    let mut flags = vec![
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ];
    if network {
        flags.push("--unshare-net");
    }
    flags
}

/// How one launch is to be sandboxed: decided from what works here.
#[derive(Clone, Debug)]
pub(crate) struct Decision {
    pub(crate) bwrap: Option<PathBuf>,
    pub(crate) landlock: LandlockRequest,
    pub(crate) helper: Option<PathBuf>,
    /// Try a network namespace without bubblewrap (root only).
    pub(crate) direct_netns: bool,
    /// Whether the network observer's sink is to be set up in the
    /// sandbox's namespace, or why not.
    pub(crate) observe_network: Result<(), String>,
    pub(crate) layers: Vec<LayerEntry>,
    /// The resource limits the helper sets on itself before the server.
    pub(crate) limits: Vec<(Limit, u64)>,
    /// The cgroups (controller, limit) the server's tree is put in.
    pub(crate) cgroups: Vec<(Controller, u64)>,
    /// The decoys in the stores' originals' places, in the sandbox: the
    /// helper's Landlock rules let the server write them (the write is the
    /// evidence), and only them, of everything outside the jail. Never
    /// bound from the host by these paths.
    pub(crate) decoys: Vec<PathBuf>,
}

impl Decision {
    /// The helper, when it has anything to do (Landlock rules or limits).
    pub(crate) fn helper_needed(&self) -> Option<&PathBuf> {
        self.helper
            .as_ref()
            .filter(|_| self.landlock.any() || !self.limits.is_empty())
    }

    /// The helper's arguments, up to and including `--`.
    pub(crate) fn helper_args(&self) -> Vec<OsString> {
        let mut landlock = self.landlock.clone();
        if landlock.fs {
            landlock.writable.extend(self.decoys.iter().cloned());
        }
        let mut args = landlock.to_args();
        let end = args.pop();
        args.extend(bounds::limit_args(&self.limits));
        args.extend(end);
        args
    }
}

/// How the resource bounds are kept for one launch: the layer entries, the
/// limits the helper sets and the cgroups (controller, limit) the tree joins.
type BoundsDecision = (Vec<LayerEntry>, Vec<(Limit, u64)>, Vec<(Controller, u64)>);

/// How each resource bound is kept for a launch here.
fn decide_bounds(available: &Availability, bounds: Bounds, user_namespace: bool) -> BoundsDecision {
    let mut limits = Vec::new();
    let mut cgroups = Vec::new();
    let mut layers = Vec::new();
    let no_helper = "resource limits need the mcp-witness binary as the sandbox's helper";
    let memory = bounds::show_bytes(bounds.memory);
    let entry = |layer, outcome: Result<String, String>| match outcome {
        Ok(detail) => LayerEntry {
            layer,
            held: true,
            detail,
        },
        Err(detail) => LayerEntry {
            layer,
            held: false,
            detail,
        },
    };
    let helper = available.helper.is_some();
    layers.push(entry(
        IsolationLayer::Memory,
        match (&available.memory_cgroup, helper) {
            (Ok(()), _) => {
                cgroups.push((Controller::Memory, bounds.memory));
                Ok(format!(
                    "memory cgroup: {memory} for the server's processes together; the kernel ends the one that goes past it, and each time is a resource-limit finding"
                ))
            }
            (Err(why), true) => {
                limits.push((Limit::Data, bounds.memory));
                Ok(format!(
                    "RLIMIT_DATA: {memory} of data for each server process (no memory cgroup: {why}); a refused allocation is an error inside the server, not counted"
                ))
            }
            (Err(why), false) => Err(format!("{no_helper}; no memory cgroup: {why}")),
        },
    ));
    let processes = bounds.processes;
    layers.push(entry(
        IsolationLayer::Processes,
        match (&available.pids_cgroup, helper) {
            (Ok(()), _) => {
                cgroups.push((Controller::Pids, processes));
                Ok(format!(
                    "pids cgroup: {processes} processes and threads for the server's tree; each refused fork is counted and is a resource-limit finding"
                ))
            }
            (Err(why), true) if user_namespace && !available.root => {
                limits.push((Limit::Nproc, processes));
                Ok(format!(
                    "RLIMIT_NPROC inside the sandbox's user namespace: {processes} processes and threads (no pids cgroup: {why}); a refused fork is not counted"
                ))
            }
            (Err(why), true) if available.root => Err(format!(
                "root is exempt from RLIMIT_NPROC, and no pids cgroup could be made: {why}"
            )),
            (Err(why), true) => Err(format!(
                "RLIMIT_NPROC outside a user namespace would count every process of the auditor's user; no pids cgroup: {why}"
            )),
            (Err(why), false) => Err(format!("{no_helper}; no pids cgroup: {why}")),
        },
    ));
    let disk = disk_layer(
        bounds.disk,
        helper,
        user_namespace,
        crate::disk::available(),
    );
    if helper {
        limits.push((Limit::Fsize, bounds.disk));
    }
    layers.push(entry(IsolationLayer::Disk, disk));
    let simple = [
        (
            IsolationLayer::CpuTime,
            Limit::Cpu,
            bounds.cpu_seconds,
            format!(
                "RLIMIT_CPU: {} s of CPU time for each server process, then SIGXCPU and SIGKILL",
                bounds.cpu_seconds
            ),
        ),
        (
            IsolationLayer::OpenFiles,
            Limit::Nofile,
            bounds.open_files,
            format!(
                "RLIMIT_NOFILE: {} open files for each server process",
                bounds.open_files
            ),
        ),
    ];
    for (layer, limit, value, detail) in simple {
        if helper {
            limits.push((limit, value));
            layers.push(entry(layer, Ok(detail)));
        } else {
            layers.push(entry(layer, Err(no_helper.to_owned())));
        }
    }
    (layers, limits, cgroups)
}

/// How the disk bound is kept: the jail's tmpfs (its whole total), the
/// helper's `RLIMIT_FSIZE` (each file), bubblewrap's `/tmp`; held when the
/// jail's tmpfs or the file limit is in force.
pub(crate) fn disk_layer(
    disk: u64,
    helper: bool,
    bwrap: bool,
    jail_tmpfs: Result<(), String>,
) -> Result<String, String> {
    let size = bounds::show_bytes(disk);
    let mut parts = Vec::new();
    let total = match &jail_tmpfs {
        Ok(()) => {
            parts.push(format!(
                "HOME, TMPDIR, the working directory and all else the server makes in the jail are one tmpfs of {size}: a write past it is refused with ENOSPC, in whatever file; the stores' copies stay on the auditor's disk, each file bounded, their total not"
            ));
            None
        }
        Err(why) => Some(why.clone()),
    };
    if helper {
        parts.push(format!(
            "RLIMIT_FSIZE: no file the server writes grows past {size}"
        ));
    }
    if bwrap {
        parts.push(format!("/tmp is a tmpfs of {size}"));
    }
    if jail_tmpfs.is_err() && !helper {
        return Err(format!(
            "resource limits need the mcp-witness binary as the sandbox's helper, and the jail's total is not bounded: {}",
            total.unwrap_or_default()
        ));
    }
    let mut text = parts.join("; ");
    if let Some(why) = total {
        text.push_str(&format!(
            "; the jail's own directories are on the auditor's disk, where many files under the bound can add up: their total is not bounded ({why})"
        ));
    }
    Ok(text)
}

/// Whether a sink can be made in a sandbox launched here: bubblewrap's
/// network namespace, the binary as the setup helper, and `ip` and `nft`.
fn observer_possible(available: &Availability, network: bool) -> Result<(), String> {
    if !network {
        return Err(NO_NETWORK_REQUESTED.into());
    }
    if let Err(why) = &available.bwrap {
        return Err(format!(
            "the network observer needs bubblewrap's network namespace: {why}"
        ));
    }
    if available.helper.is_none() {
        return Err("the network observer needs the mcp-witness binary as its setup helper".into());
    }
    for (tool, package) in [("ip", "iproute2"), ("nft", "nftables")] {
        if witness_netsink::setup::find_tool(tool).is_none() {
            return Err(format!(
                "the network observer needs {tool} ({package}), which is not installed"
            ));
        }
    }
    Ok(())
}

pub(crate) fn decide(
    available: &Availability,
    bounds: Bounds,
    jail: &Path,
    network: bool,
) -> Decision {
    let bwrap = available.bwrap.as_ref().ok().cloned();
    let bwrap_missing = available.bwrap.as_ref().err().cloned().unwrap_or_default();
    let helper = available.helper.clone();
    let landlock_ok = |probe: &Result<(), String>| -> Result<(), String> {
        match (&helper, probe) {
            (None, _) => Err("Landlock needs the mcp-witness binary as its helper".into()),
            (Some(_), Err(e)) => Err(e.clone()),
            (Some(_), Ok(())) => Ok(()),
        }
    };
    let fs = landlock_ok(&available.landlock_fs);
    let observe_network = observer_possible(available, network);
    let net_rule = net_rule(network, bwrap.is_some(), observe_network.is_ok());
    let net = match &net_rule {
        NetRule::LeftToNamespace => Err(LANDLOCK_NET_LEFT_TO_NAMESPACE.to_owned()),
        _ => landlock_ok(&available.landlock_net),
    };
    let scope = landlock_ok(&available.landlock_scope);
    let namespaces = |_: IsolationLayer| -> Result<(), String> {
        if bwrap.is_some() {
            Ok(())
        } else {
            Err(bwrap_missing.clone())
        }
    };
    let netns: Result<(), String> = match (network, &bwrap) {
        (false, _) => Err(NO_NETWORK_REQUESTED.into()),
        (true, Some(_)) => Ok(()),
        // Settled at spawn: the kernel lets root alone make one without
        // a user namespace.
        (true, None) => Err(format!("{bwrap_missing}; not root")),
    };
    let outcome = |layer: IsolationLayer| match layer {
        IsolationLayer::UserNamespace
        | IsolationLayer::MountNamespace
        | IsolationLayer::PidNamespace => namespaces(layer),
        IsolationLayer::NetworkNamespace => netns.clone(),
        IsolationLayer::LandlockFs => fs.clone(),
        IsolationLayer::LandlockNet => net.clone(),
        IsolationLayer::LandlockScope => scope.clone(),
        // Decided by `decide_bounds`; never asked for here.
        IsolationLayer::Memory
        | IsolationLayer::Processes
        | IsolationLayer::Disk
        | IsolationLayer::CpuTime
        | IsolationLayer::OpenFiles => Ok(()),
    };
    let mut layers: Vec<LayerEntry> = IsolationLayer::CONTAINMENT
        .iter()
        .map(|&layer| layer_entry(layer, outcome(layer)))
        .collect();
    let (bound_layers, limits, cgroups) = decide_bounds(available, bounds, bwrap.is_some());
    layers.extend(bound_layers);
    if let Some(detail) = net_rule.detail() {
        for entry in layers
            .iter_mut()
            .filter(|l| l.layer == IsolationLayer::LandlockNet && l.held)
        {
            entry.detail = detail.into();
        }
    }
    // Without bubblewrap Landlock alone keeps writes in, and what it refuses
    // is seen by nobody: no decoy can stand in for an original.
    if bwrap.is_none() {
        for entry in layers
            .iter_mut()
            .filter(|l| l.layer == IsolationLayer::LandlockFs && l.held)
        {
            entry.detail = format!(
                "{}; {}",
                entry.detail,
                crate::view::UNREPORTED_WITHOUT_DECOYS
            );
        }
    }
    Decision {
        direct_netns: network && bwrap.is_none(),
        observe_network: observe_network.clone(),
        bwrap,
        landlock: LandlockRequest {
            writable: vec![jail.to_path_buf()],
            fs: fs.is_ok(),
            net_bind: net.is_ok() && net_rule.refuses_bind(),
            net_connect: net.is_ok() && net_rule.refuses_connect(),
            scope: scope.is_ok(),
        },
        helper,
        layers,
        limits,
        cgroups,
        decoys: Vec::new(),
    }
}

/// What Landlock's network rule refuses, by what holds the network besides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NetRule {
    /// The jail's own network namespace with the observer: a listening
    /// socket there reaches no one, and a connect must reach the sink to
    /// be seen. Nothing is left for Landlock to refuse.
    LeftToNamespace,
    /// The namespace without the observer: connects are refused (they
    /// would fail in the empty namespace anyway; the kernel says so
    /// first), binds are left to it.
    ConnectOnly,
    /// Network isolation asked for, and no namespace known to hold: every
    /// bind and connect is refused.
    BindAndConnect,
    /// `--no-netns`: the server may connect, but a listening socket would
    /// be reachable on the host's network, so every bind is refused.
    BindOnly,
}

impl NetRule {
    fn refuses_bind(self) -> bool {
        matches!(self, Self::BindAndConnect | Self::BindOnly)
    }

    fn refuses_connect(self) -> bool {
        matches!(self, Self::BindAndConnect | Self::ConnectOnly)
    }

    /// The layer's detail where it is not the layer's plain guarantee.
    fn detail(self) -> Option<&'static str> {
        match self {
            Self::LeftToNamespace | Self::BindAndConnect => None,
            Self::ConnectOnly => Some(LANDLOCK_NET_CONNECT_ONLY),
            Self::BindOnly => Some(LANDLOCK_NET_BIND_ONLY),
        }
    }
}

/// Bubblewrap's network namespace is the one that is sure at decision
/// time; without bubblewrap, root's own `unshare` is settled only at spawn,
/// so binds stay refused there.
fn net_rule(network: bool, bwrap: bool, observer: bool) -> NetRule {
    match (network, bwrap, observer) {
        (false, _, _) => NetRule::BindOnly,
        (true, false, _) => NetRule::BindAndConnect,
        (true, true, true) => NetRule::LeftToNamespace,
        (true, true, false) => NetRule::ConnectOnly,
    }
}

/// Why `landlock-net` is not applied beside the jail's network namespace
/// and its observer.
pub const LANDLOCK_NET_LEFT_TO_NAMESPACE: &str = "not applied: the jail's own network namespace holds every socket (a listening one reaches no one outside it; every connect reaches the network observer's sink), so TCP bind and connect are left to it";

/// What `landlock-net` guarantees in the jail's network namespace without
/// the observer.
pub const LANDLOCK_NET_CONNECT_ONLY: &str = "the kernel refuses every TCP connect; TCP binds are left to the jail's own network namespace, where a listening socket reaches no one";

/// What `landlock-net` guarantees with `--no-netns`.
pub const LANDLOCK_NET_BIND_ONLY: &str = "the kernel refuses every TCP bind: without a network namespace of its own a listening socket would be reachable on the host's network; connects are allowed (--no-netns)";

/// Whether the network observer would be used for a server launched here,
/// or why not (what `doctor` shows).
pub fn observer_here(available: &Availability) -> Result<(), String> {
    observer_possible(available, true)
}

/// The layers a server launched here would get (what `doctor` shows).
pub fn layers_here(available: &Availability, network: bool) -> Vec<LayerEntry> {
    decide(available, bounds::bounds(), &std::env::temp_dir(), network).layers
}

/// Why the network layers are off when the user asked for that.
pub const NO_NETWORK_REQUESTED: &str = "network isolation was not requested (--no-netns)";

pub(crate) fn layer_entry(layer: IsolationLayer, outcome: Result<(), String>) -> LayerEntry {
    match outcome {
        Ok(()) => LayerEntry {
            layer,
            held: true,
            detail: layer.guarantee().into(),
        },
        Err(why) => LayerEntry {
            layer,
            held: false,
            detail: why,
        },
    }
}

/// The level the layers add up to, and one sentence that says so.
pub fn level_of(layers: &[LayerEntry]) -> (IsolationLevel, String) {
    let held = |layer: IsolationLayer| layers.iter().any(|l| l.layer == layer && l.held);
    let writes = layers.iter().any(|l| l.held && l.layer.confines_writes());
    let network = held(IsolationLayer::NetworkNamespace);
    let names: Vec<&str> = layers
        .iter()
        .filter(|l| l.held && !l.layer.is_bound())
        .map(|l| l.layer.as_str())
        .collect();
    if writes && network {
        let detail = format!(
            "sandboxed ({}): writes outside the jail and the network were out of the server's reach",
            names.join(", ")
        );
        (IsolationLevel::Contained, detail)
    } else if names.is_empty() {
        let detail = "no isolation layer held: the server could write anywhere its user may and reach the network".to_owned();
        (IsolationLevel::None, detail)
    } else {
        let missing = match (writes, network) {
            (false, false) => "writes outside the jail and the network were within its reach",
            (false, true) => "writes outside the jail were within its reach",
            _ => "the network was within its reach",
        };
        (
            IsolationLevel::Partial,
            format!("partly sandboxed ({}): {missing}", names.join(", ")),
        )
    }
}

/// What one server's sandbox shows of the host besides the system's
/// runtime and the jail.
pub(crate) struct Visible<'a> {
    /// The server's install directories (read-only).
    pub(crate) install: &'a [PathBuf],
    /// What the user added with `--ro-bind` (read-only).
    pub(crate) extra: &'a [PathBuf],
    /// Decoys in the place of the stores' originals: (the original's path,
    /// the decoy on the host), bound writable.
    pub(crate) decoys: &'a [(PathBuf, PathBuf)],
    /// The stores' original files without a decoy, hidden behind `/dev/null`.
    pub(crate) hidden: &'a [PathBuf],
    /// The size of the scratch tmpfs at `/tmp`.
    pub(crate) scratch: u64,
    /// Where the server starts ([`crate::Jail::work_dir`]).
    pub(crate) workdir: &'a Path,
}

/// The bubblewrap command for one server: everything up to the program.
pub(crate) fn bwrap_command(
    bwrap: &Path,
    decision: &Decision,
    jail: &Path,
    network: bool,
    visible: &Visible<'_>,
    info_fd: i32,
    block_fd: Option<i32>,
) -> Command {
    let mut cmd = Command::new(bwrap);
    cmd.args(namespace_flags(network));
    // The root is an empty tmpfs: only what is bound below exists, so a
    // socket in a temporary or home directory, under /run or in another
    // audit's jail has no name here (a read-only mount would not stop a
    // connect).
    for dir in crate::view::SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            // A merged /usr: /bin is a link into it, and stays one.
            Ok(target) => {
                cmd.arg("--symlink").arg(target).arg(path);
            }
            Err(_) if path.is_dir() => {
                cmd.arg("--ro-bind").arg(path).arg(path);
            }
            Err(_) => {}
        }
    }
    // Of /etc, only what programs read to run: never shadow, keys or the
    // credentials some system configs hold.
    for entry in crate::view::etc_entries(Path::new("/etc")) {
        match entry {
            crate::view::EtcEntry::Bind(path) => {
                cmd.arg("--ro-bind").arg(&path).arg(&path);
            }
            crate::view::EtcEntry::Link { path, target } => {
                cmd.arg("--symlink").arg(target).arg(path);
            }
        }
    }
    cmd.args(["--dev", "/dev", "--proc", "/proc"]);
    cmd.arg("--size")
        .arg(visible.scratch.to_string())
        .args(["--tmpfs", "/tmp"]);
    for dir in visible.install.iter().chain(visible.extra) {
        cmd.arg("--ro-bind").arg(dir).arg(dir);
    }
    if let Some(helper) = decision.helper_needed() {
        cmd.arg("--ro-bind").arg(helper).arg(helper);
    }
    // The jail first (it is the first writable directory), then any other
    // the user allowed (`proxy --live`).
    cmd.arg("--bind").arg(jail).arg(jail);
    for dir in decision.landlock.writable.iter().filter(|d| *d != jail) {
        cmd.arg("--bind").arg(dir).arg(dir);
    }
    // After the jail, so that a decoy whose original lies beneath /tmp is
    // mounted on the scratch tmpfs, not under it.
    for (original, decoy) in visible.decoys {
        cmd.arg("--bind").arg(decoy).arg(original);
    }
    for original in visible.hidden {
        cmd.arg("--ro-bind").arg("/dev/null").arg(original);
    }
    if !visible.decoys.is_empty() {
        // The decoys' own directory in the jail is covered by an empty,
        // read-only tmpfs: the server reaches a decoy only by its
        // original's path, so whatever lands in one was meant for the
        // original.
        let decoys = jail.join(crate::decoy::DIR);
        cmd.args(["--size", "4096", "--tmpfs"])
            .arg(&decoys)
            .arg("--remount-ro")
            .arg(&decoys);
    }
    cmd.arg("--chdir").arg(visible.workdir);
    cmd.arg("--info-fd").arg(info_fd.to_string());
    if let Some(fd) = block_fd {
        cmd.arg("--block-fd").arg(fd.to_string());
    }
    cmd.arg("--");
    if let Some(helper) = decision.helper_needed() {
        cmd.arg(helper).args(decision.helper_args());
    }
    cmd
}

/// A pipe whose write end a child inherits (for `--info-fd`) and whose read
/// end the parent keeps.
pub(crate) struct InfoPipe {
    pub(crate) read: OwnedFd,
    pub(crate) write: OwnedFd,
}

impl InfoPipe {
    pub(crate) fn new() -> std::io::Result<Self> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok(Self { read, write })
    }

    /// The sandbox's PID-namespace init as bubblewrap reports it, read
    /// until bubblewrap closes its end or `limit` passes.
    pub(crate) fn child_pid(self, limit: Duration) -> Option<i32> {
        drop(self.write);
        let deadline = Instant::now() + limit;
        let mut file = std::fs::File::from(self.read);
        let mut text = Vec::new();
        let mut buf = [0u8; 512];
        while Instant::now() < deadline && text.len() < 64 * 1024 {
            let wait = Timespec::try_from(deadline.saturating_duration_since(Instant::now())).ok();
            let mut poll = [PollFd::new(&file, PollFlags::IN)];
            if !matches!(rustix::event::poll(&mut poll, wait.as_ref()), Ok(1..)) {
                break;
            }
            match file.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => text.extend_from_slice(&buf[..n]),
            }
            if let Ok(info) = serde_json::from_slice::<serde_json::Value>(&text) {
                return info
                    .get("child-pid")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(|p| i32::try_from(p).ok());
            }
        }
        None
    }
}

/// Every process in the PID namespace whose init is `init` (`init` itself
/// left out), found by comparing `/proc/<pid>/ns/pid`.
pub(crate) fn namespace_members(init: i32) -> Vec<i32> {
    let Ok(target) = std::fs::read_link(format!("/proc/{init}/ns/pid")) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| *pid != init)
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/ns/pid"))
                .ok()
                .as_ref()
                == Some(&target)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available(bwrap: bool, landlock: bool) -> Availability {
        let probe = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err("no Landlock".to_owned())
            }
        };
        Availability {
            bwrap: if bwrap {
                Ok("/usr/bin/bwrap".into())
            } else {
                Err("bubblewrap (bwrap) is not installed".into())
            },
            landlock_fs: probe(landlock),
            landlock_net: probe(landlock),
            landlock_scope: probe(landlock),
            helper: Some("/usr/bin/mcp-witness".into()),
            memory_cgroup: Err("no memory cgroup".into()),
            pids_cgroup: Err("no pids cgroup".into()),
            root: false,
        }
    }

    fn held(decision: &Decision) -> Vec<&'static str> {
        decision
            .layers
            .iter()
            .filter(|l| l.held)
            .map(|l| l.layer.as_str())
            .collect()
    }

    #[test]
    fn every_layer_that_works_is_used_and_the_level_follows() {
        let jail = Path::new("/tmp/jail");
        let all = decide(&available(true, true), Bounds::default(), jail, true);
        // With the observer (ip and nft on this machine) landlock-net is
        // left to the namespace, and not applied.
        let observer = observer_possible(&available(true, true), true).is_ok();
        assert_eq!(held(&all).len(), if observer { 11 } else { 12 });
        // Without cgroups the bounds are the helper's resource limits.
        assert_eq!(
            all.limits.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            [
                Limit::Data,
                Limit::Nproc,
                Limit::Fsize,
                Limit::Cpu,
                Limit::Nofile
            ]
        );
        assert_eq!(level_of(&all.layers).0, IsolationLevel::Contained);
        assert!(all.landlock.fs && all.landlock.scope);
        // In the jail's own namespace binds are left to it; connects too
        // where the observer's sink takes them.
        assert!(!all.landlock.net_bind);
        assert_eq!(all.landlock.net_connect, !observer);
        let net = all
            .layers
            .iter()
            .find(|l| l.layer == IsolationLayer::LandlockNet)
            .expect("landlock-net");
        if observer {
            assert!(!net.held && net.detail == LANDLOCK_NET_LEFT_TO_NAMESPACE);
        } else {
            assert!(net.held && net.detail == LANDLOCK_NET_CONNECT_ONLY);
        }

        let no_net = decide(&available(true, true), Bounds::default(), jail, false);
        assert!(!held(&no_net).contains(&"network-namespace"));
        // --no-netns: connects allowed, and no listening on the host's network.
        assert!(no_net.landlock.net_bind && !no_net.landlock.net_connect);
        assert!(
            no_net
                .layers
                .iter()
                .any(|l| l.layer == IsolationLayer::LandlockNet
                    && l.held
                    && l.detail == LANDLOCK_NET_BIND_ONLY)
        );
        assert_eq!(level_of(&no_net.layers).0, IsolationLevel::Partial);

        let landlock_only = decide(&available(false, true), Bounds::default(), jail, true);
        // Without a user namespace RLIMIT_NPROC would count the auditor's
        // user's every process: not claimed.
        assert_eq!(
            held(&landlock_only),
            [
                "landlock-fs",
                "landlock-net",
                "landlock-scope",
                "memory",
                "disk",
                "cpu-time",
                "open-files"
            ]
        );
        assert!(landlock_only.direct_netns);
        // No namespace is sure before the spawn: every bind is refused.
        assert!(landlock_only.landlock.net_bind && landlock_only.landlock.net_connect);
        assert!(
            landlock_only
                .layers
                .iter()
                .any(|l| l.layer == IsolationLayer::LandlockFs
                    && l.detail.ends_with(crate::view::UNREPORTED_WITHOUT_DECOYS)),
            "{:?}",
            landlock_only.layers
        );
        assert!(
            !all.layers
                .iter()
                .any(|l| l.detail.contains(crate::view::UNREPORTED_WITHOUT_DECOYS)),
            "with bubblewrap the decoys report attempts"
        );
        let (level, detail) = level_of(&landlock_only.layers);
        assert_eq!(level, IsolationLevel::Partial);
        assert!(
            detail.ends_with("the network was within its reach"),
            "{detail}"
        );

        let mut bare = available(false, false);
        bare.helper = None;
        let nothing = decide(&bare, Bounds::default(), jail, true);
        assert!(held(&nothing).is_empty());
        assert_eq!(level_of(&nothing.layers).0, IsolationLevel::None);
        assert_eq!(
            nothing.layers[0].detail,
            "bubblewrap (bwrap) is not installed"
        );
    }

    #[test]
    fn root_gets_a_pids_cgroup_or_no_process_bound_and_a_cgroup_replaces_the_limits() {
        let jail = Path::new("/tmp/jail");
        let mut root = available(true, true);
        root.root = true;
        let decision = decide(&root, Bounds::default(), jail, true);
        let processes = decision
            .layers
            .iter()
            .find(|l| l.layer == IsolationLayer::Processes);
        assert!(processes.is_some_and(|l| !l.held && l.detail.contains("root is exempt")));
        assert!(!decision.limits.iter().any(|(l, _)| *l == Limit::Nproc));
        root.pids_cgroup = Ok(());
        root.memory_cgroup = Ok(());
        let decision = decide(&root, Bounds::default(), jail, true);
        assert_eq!(
            decision.cgroups,
            [(Controller::Memory, 2 << 30), (Controller::Pids, 256)]
        );
        assert!(
            !decision
                .limits
                .iter()
                .any(|(l, _)| matches!(l, Limit::Nproc | Limit::Data))
        );
        // Bounds never enter the containment sentence.
        let (_, detail) = level_of(&decision.layers);
        assert!(!detail.contains("memory"), "{detail}");
    }

    #[test]
    fn the_disk_layer_says_whether_the_jails_total_is_bounded() {
        let on_tmpfs = disk_layer(64 << 20, true, true, Ok(()));
        assert!(
            on_tmpfs.as_ref().is_ok_and(|d| d.starts_with(
                "HOME, TMPDIR, the working directory and all else the server makes in the jail are one tmpfs of 64 MiB"
            ) && d.contains("RLIMIT_FSIZE") && !d.contains("not bounded")),
            "{on_tmpfs:?}"
        );
        let on_disk = disk_layer(64 << 20, true, false, Err("no mount here".into()));
        assert!(
            on_disk.as_ref().is_ok_and(|d| d
                .starts_with("RLIMIT_FSIZE: no file the server writes grows past 64 MiB")
                && d.ends_with("their total is not bounded (no mount here)")
                && !d.contains("/tmp")),
            "{on_disk:?}"
        );
        // Neither the tmpfs nor the helper: nothing bounds the disk.
        assert!(disk_layer(64 << 20, false, true, Err("no mount here".into())).is_err());
        assert!(disk_layer(64 << 20, false, true, Ok(())).is_ok());
    }

    #[test]
    fn binds_are_refused_only_where_no_network_namespace_holds_them() {
        // The jail's own namespace and its observer: nothing for Landlock.
        assert_eq!(net_rule(true, true, true), NetRule::LeftToNamespace);
        for rule in [NetRule::LeftToNamespace, NetRule::ConnectOnly] {
            assert!(!rule.refuses_bind(), "{rule:?}");
        }
        assert_eq!(net_rule(true, true, false), NetRule::ConnectOnly);
        // No bubblewrap (root's unshare is settled only at spawn), or
        // --no-netns: a listening socket could be reached, so no bind.
        for rule in [net_rule(true, false, false), net_rule(false, true, true)] {
            assert!(rule.refuses_bind(), "{rule:?}");
        }
        assert!(!net_rule(false, true, true).refuses_connect());
        let request = LandlockRequest {
            net_bind: true,
            ..LandlockRequest::default()
        };
        let args: Vec<String> = request
            .to_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["sandbox-exec", "--net-bind", "--"]);
    }

    #[test]
    fn the_helper_arguments_say_what_to_enforce() {
        let request = LandlockRequest {
            writable: vec!["/j".into()],
            fs: true,
            net_bind: false,
            net_connect: false,
            scope: true,
        };
        let args: Vec<String> = request
            .to_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            ["sandbox-exec", "--write", "/j", "--fs", "--scope", "--"]
        );
    }
}
