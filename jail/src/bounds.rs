//! How much of the machine a launched server may take: memory, processes,
//! the size of what it writes, CPU time and open files.
//!
//! Each bound is enforced by the kernel, with the strongest mechanism that
//! works here:
//!
//! - a **cgroup** beneath the auditor's own, for memory and processes,
//!   where that cgroup may be written (root, or a delegated subtree). Its
//!   limit covers the server's whole tree together, and its counters tell
//!   when the server reached it (`oom_kill`, `pids.events`), so a hit
//!   becomes a `resource-limit` finding;
//! - otherwise **resource limits** (`setrlimit`), set by the sandbox
//!   helper on itself just before it becomes the server, so that neither
//!   bubblewrap nor any auditor process is bound: `RLIMIT_DATA` for memory
//!   (`RLIMIT_AS` would stop Node, whose engine reserves far more address
//!   space than it uses), `RLIMIT_NPROC` inside the sandbox's user
//!   namespace (counted there, per namespace; root outside is exempt from
//!   it, so it is claimed only for an ordinary user), `RLIMIT_FSIZE`,
//!   `RLIMIT_CPU` and `RLIMIT_NOFILE`. A refusal under a resource limit is
//!   an error code inside the server: the kernel counts none of them, and
//!   the report says so.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::process::{Resource, Rlimit};

/// The bounds a server gets: defaults a real server fits in, changed with
/// the command line's `--memory`, `--processes`, `--disk`, `--cpu-seconds`
/// and `--open-files`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes of memory.
    pub memory: u64,
    /// Processes and threads.
    pub processes: u64,
    /// Bytes of any one file written, and of the sandbox's scratch tmpfs.
    pub disk: u64,
    /// Seconds of CPU time per process.
    pub cpu_seconds: u64,
    /// Open files per process.
    pub open_files: u64,
}

const GIB: u64 = 1 << 30;

impl Default for Bounds {
    fn default() -> Self {
        Self {
            memory: 2 * GIB,
            processes: 256,
            disk: GIB,
            cpu_seconds: 600,
            open_files: 1024,
        }
    }
}

static BOUNDS: OnceLock<Bounds> = OnceLock::new();

/// Sets the bounds every launch of this process uses (the binary, from its
/// command line). Without it the defaults apply.
pub fn set_bounds(bounds: Bounds) {
    let _ = BOUNDS.set(bounds);
}

/// The bounds launches use.
pub fn bounds() -> Bounds {
    BOUNDS.get().copied().unwrap_or_default()
}

/// A size as people write it: `2G`, `512M`, `64K`, `1GiB`, or bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (say 2G, 512M or a number of bytes)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (say K, M, G or T)"
            ));
        }
    };
    let bytes = number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes == 0 {
        return Err(format!("{text:?}: a bound must be more than nothing"));
    }
    Ok(bytes)
}

/// A size as the report says it: `2 GiB`, `512 MiB`, or bytes.
pub fn show_bytes(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// One resource limit the helper sets on itself before it becomes the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Data,
    Nproc,
    Fsize,
    Cpu,
    Nofile,
}

impl Limit {
    const ALL: [Limit; 5] = [
        Limit::Data,
        Limit::Nproc,
        Limit::Fsize,
        Limit::Cpu,
        Limit::Nofile,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Limit::Data => "data",
            Limit::Nproc => "nproc",
            Limit::Fsize => "fsize",
            Limit::Cpu => "cpu",
            Limit::Nofile => "nofile",
        }
    }

    fn resource(self) -> Resource {
        match self {
            Limit::Data => Resource::Data,
            Limit::Nproc => Resource::Nproc,
            Limit::Fsize => Resource::Fsize,
            Limit::Cpu => Resource::Cpu,
            Limit::Nofile => Resource::Nofile,
        }
    }
}

/// The helper's `--limit KIND=N` arguments for `limits`.
pub fn limit_args(limits: &[(Limit, u64)]) -> Vec<OsString> {
    limits
        .iter()
        .flat_map(|(limit, value)| {
            [
                OsString::from("--limit"),
                format!("{}={value}", limit.as_str()).into(),
            ]
        })
        .collect()
}

/// Reads one `KIND=N` argument of the helper.
pub fn parse_limit(text: &str) -> Result<(Limit, u64), String> {
    let (kind, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected KIND=N"))?;
    let limit = Limit::ALL
        .into_iter()
        .find(|l| l.as_str() == kind)
        .ok_or_else(|| format!("{kind:?} is not a limit"))?;
    let value = value
        .parse()
        .map_err(|_| format!("{value:?} is not a number"))?;
    Ok((limit, value))
}

/// Sets every limit on the calling process, soft and hard alike (so the
/// server cannot raise them again). CPU time gets one second between the
/// soft limit (SIGXCPU) and the hard one (SIGKILL).
pub fn apply_limits(limits: &[(Limit, u64)]) -> Result<(), String> {
    for &(limit, value) in limits {
        let maximum = if limit == Limit::Cpu {
            value.saturating_add(1)
        } else {
            value
        };
        rustix::process::setrlimit(
            limit.resource(),
            Rlimit {
                current: Some(value),
                maximum: Some(maximum),
            },
        )
        .map_err(|e| format!("cannot set RLIMIT_{}: {e}", limit.as_str().to_uppercase()))?;
    }
    Ok(())
}

/// A cgroup controller the jail may bound a server's tree with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    Memory,
    Pids,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
        }
    }
}

/// Where the auditor's own cgroup for `controller` is, and whether it is
/// the unified (v2) hierarchy.
fn own_cgroup(controller: Controller) -> Result<(PathBuf, bool), String> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let root = Path::new("/sys/fs/cgroup");
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(names), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if names.split(',').any(|n| n == controller.name()) {
            return Ok((root.join(controller.name()).join(relative), false));
        }
        if names.is_empty() {
            // The unified hierarchy: mounted at the root when it is the
            // only one, else beside the others.
            let base = if root.join("cgroup.controllers").is_file() {
                root.to_path_buf()
            } else {
                root.join("unified")
            };
            let dir = base.join(relative);
            let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .unwrap_or_default()
                .split_whitespace()
                .any(|n| n == controller.name());
            if delegated {
                return Ok((dir, true));
            }
        }
    }
    Err(format!(
        "no {} cgroup controller is delegated to this user",
        controller.name()
    ))
}

static SERIAL: AtomicU32 = AtomicU32::new(0);

/// Directories the jail makes beneath the auditor's cgroup start with this.
pub const CGROUP_PREFIX: &str = "mcp-witness-";

/// A cgroup of the jail's own holding one launch of the server, with its
/// limit set. Dropping it removes it (once the server's processes are gone).
#[derive(Debug)]
pub struct Cgroup {
    controller: Controller,
    dir: PathBuf,
    unified: bool,
    /// `cgroup.procs`, opened for the launch to join by writing `0`.
    procs: Option<OwnedFd>,
    /// The counter already reported.
    reported: u64,
}

impl Cgroup {
    /// Makes a cgroup for `controller` with `limit` (bytes, or processes),
    /// or says why one cannot be made here.
    pub fn make(controller: Controller, limit: u64) -> Result<Self, String> {
        let (parent, unified) = own_cgroup(controller)?;
        let name = format!(
            "{CGROUP_PREFIX}{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        // The auditor's own cgroup is not named: it differs between runs.
        std::fs::create_dir(&dir).map_err(|e| {
            format!(
                "cannot make a {} cgroup beneath the auditor's own: {e}",
                controller.name()
            )
        })?;
        let mut made = Self {
            controller,
            dir,
            unified,
            procs: None,
            reported: 0,
        };
        let file = match (controller, unified) {
            (Controller::Memory, false) => "memory.limit_in_bytes",
            (Controller::Memory, true) => "memory.max",
            (Controller::Pids, _) => "pids.max",
        };
        made.write(file, &limit.to_string())?;
        if controller == Controller::Memory && unified {
            // Swap would let the server go past the bound on the disk's
            // time; where swap accounting is off the file is absent.
            let _ = made.write("memory.swap.max", "0");
        }
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(made.dir.join("cgroup.procs"))
            .map_err(|e| {
                format!(
                    "cannot open the {} cgroup's cgroup.procs: {e}",
                    made.controller.name()
                )
            })?;
        made.procs = Some(OwnedFd::from(procs));
        Ok(made)
    }

    /// Errors name the file, not this cgroup's own (per-process) name, so
    /// that a report says the same on every run.
    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join(file))
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(|e| {
                format!(
                    "cannot set the {} cgroup's {file}: {e}",
                    self.controller.name()
                )
            })
    }

    /// The descriptor a child writes `0` to in order to join.
    pub fn procs(&self) -> Option<&OwnedFd> {
        self.procs.as_ref()
    }

    pub fn controller(&self) -> Controller {
        self.controller
    }

    /// How often the kernel held the server at the bound so far: the OOM
    /// kills in it (memory), the forks refused (processes).
    fn count(&self) -> u64 {
        let (file, key) = match (self.controller, self.unified) {
            (Controller::Memory, false) => ("memory.oom_control", "oom_kill"),
            (Controller::Memory, true) => ("memory.events", "oom_kill"),
            (Controller::Pids, _) => ("pids.events", "max"),
        };
        std::fs::read_to_string(self.dir.join(file))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split_once(' '))
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Whether the bound was reached since the last time this was asked.
    pub fn hit_since_last(&mut self) -> bool {
        let now = self.count();
        let hit = now > self.reported;
        self.reported = now;
        hit
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.procs = None;
        // The last processes may still be leaving: a cgroup is removed
        // only once it is empty.
        for _ in 0..50 {
            match std::fs::remove_dir(&self.dir) {
                Err(e) if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error()) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                _ => return,
            }
        }
    }
}

/// Whether a cgroup for `controller` can be made here, tried once.
pub fn probe_cgroup(controller: Controller) -> Result<(), String> {
    let limit = match controller {
        Controller::Memory => bounds().memory,
        Controller::Pids => bounds().processes,
    };
    Cgroup::make(controller, limit).map(drop)
}

/// Removes the empty cgroups an auditor killed outright left beneath this
/// one's (a cgroup that still holds a process cannot be removed).
pub fn sweep_cgroups() {
    for controller in [Controller::Memory, Controller::Pids] {
        let Ok((parent, _)) = own_cgroup(controller) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(owner) = name
                .strip_prefix(CGROUP_PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i32>().ok())
            else {
                continue;
            };
            let alive = Path::new(&format!("/proc/{owner}")).exists();
            if !alive {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_and_shown_as_people_write_them() {
        assert_eq!(parse_bytes("2G"), Ok(2 * GIB));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("2X").is_err());
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("99999999999T").is_err());
        assert_eq!(show_bytes(2 * GIB), "2 GiB");
        assert_eq!(show_bytes(64 << 20), "64 MiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
    }

    #[test]
    fn limits_travel_to_the_helper_and_back() {
        let limits = [(Limit::Data, 1u64 << 31), (Limit::Nproc, 256)];
        let args: Vec<String> = limit_args(&limits)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["--limit", "data=2147483648", "--limit", "nproc=256"]);
        assert_eq!(parse_limit("nproc=256"), Ok((Limit::Nproc, 256)));
        assert!(parse_limit("stack=1").is_err());
        assert!(parse_limit("data").is_err());
    }
}
