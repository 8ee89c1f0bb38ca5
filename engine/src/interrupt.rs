//! Ending cleanly when the auditor is told to stop (SIGTERM, SIGINT, SIGHUP).
//!
//! Signals are process-wide, so this state is too: the binary's signal
//! thread calls [`raise`], and everything that could be stranded by an
//! abrupt end registers itself here while it lives: every launched server
//! (how to kill its whole tree) and every jail directory.
//!
//! On the first signal every live server is killed at once. The audit
//! then notices ([`signal`]): no new process is launched, no further call is
//! made, and the report is assembled as `incomplete` and written, after
//! which the jail is removed as usual. On a second signal the caller kills
//! everything again, removes every live jail ([`remove_jails`]) and exits.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The first signal received, 0 while none was.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

static LIVE: Mutex<Live> = Mutex::new(Live {
    next: 0,
    processes: BTreeMap::new(),
    jails: BTreeMap::new(),
});

struct Live {
    next: u64,
    processes: BTreeMap<u64, KillHandle>,
    jails: BTreeMap<u64, PathBuf>,
}

/// How to kill one launched server and everything it started.
#[derive(Clone, Debug)]
pub(crate) struct KillHandle {
    /// The process group the launched process leads.
    pub(crate) group: i32,
    /// A pidfd of the sandbox's PID-namespace init: killing it ends every
    /// process in the namespace, `setsid` or not.
    pub(crate) namespace_init: Option<Arc<OwnedFd>>,
}

impl KillHandle {
    pub(crate) fn kill(&self) {
        if let Some(pidfd) = &self.namespace_init {
            send_pidfd(pidfd, libc::SIGKILL);
        }
        if self.group > 0 {
            // SAFETY: kill(2) with a negative pid signals a group we created.
            unsafe {
                libc::kill(-self.group, libc::SIGKILL);
            }
        }
    }
}

/// Sends `signal` through a pidfd: it reaches exactly the process it was
/// opened for, even if that pid has since been reused.
pub(crate) fn send_pidfd(pidfd: &OwnedFd, signal: i32) -> bool {
    // SAFETY: pidfd_send_signal with a pidfd we own, no siginfo, no flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    rc == 0
}

/// Something registered while it lives; dropping it unregisters it.
pub(crate) struct Registration(Option<u64>);

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(id) = self.0 {
            let mut live = live();
            live.processes.remove(&id);
            live.jails.remove(&id);
        }
    }
}

fn live() -> MutexGuard<'static, Live> {
    match LIVE.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn next_id(live: &mut Live) -> u64 {
    live.next += 1;
    live.next
}

pub(crate) fn register_process(handle: KillHandle) -> Registration {
    let mut live = live();
    let id = next_id(&mut live);
    live.processes.insert(id, handle);
    Registration(Some(id))
}

pub(crate) fn register_jail(root: PathBuf) -> Registration {
    let mut live = live();
    let id = next_id(&mut live);
    live.jails.insert(id, root);
    Registration(Some(id))
}

/// Records `signal`. True for the first signal, false for any later one.
pub fn raise(signal: i32) -> bool {
    SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// The first signal received, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// Kills every live server with everything it started.
pub fn stop_everything() {
    let handles: Vec<KillHandle> = live().processes.values().cloned().collect();
    for handle in handles {
        handle.kill();
    }
}

/// Removes every live jail directory (after a second signal, when the
/// audit will not get to it).
pub fn remove_jails() {
    let roots: Vec<PathBuf> = live().jails.values().cloned().collect();
    for root in roots {
        let _ = std::fs::remove_dir_all(root);
    }
}

/// The conventional name of the signals the auditor handles.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// The reason an interrupted audit is incomplete.
pub fn reason(signal: i32) -> String {
    format!(
        "interrupted by {}: the server was stopped at once and what had been observed until then is reported",
        signal_name(signal)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_come_and_go() {
        // remove_jails() is not called here: it would remove the jails of
        // every other test running in this process.
        let root = PathBuf::from("/nonexistent/mcp-witness-test-jail");
        let registration = register_jail(root.clone());
        assert!(live().jails.values().any(|p| *p == root));
        drop(registration);
        assert!(!live().jails.values().any(|p| *p == root));
        assert_eq!(signal_name(libc::SIGHUP), "SIGHUP");
    }
}
