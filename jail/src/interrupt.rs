//! Ending cleanly when the auditor is told to stop (SIGTERM, SIGINT, SIGHUP).
//!
//! Signals are process-wide, so this state is too: the binary's signal
//! thread calls [`raise`], kills every live child at once (the one registry
//! of `witness_process`, where every launched server is), and everything
//! else that could be stranded by an abrupt end registers itself here while
//! it lives: every jail directory (here, since a jail's tmpfs must be
//! unmounted first), and every other temporary directory
//! (`witness_process::scratch`, where the observers' private images of a
//! database are made).
//!
//! After the first signal the audit notices ([`signal`]): no new process is
//! launched, no further call is made, and the report is assembled as
//! `incomplete` and written, after which the jail is removed as usual. On a
//! second request to stop the caller kills everything again, removes every
//! live jail and temporary directory ([`remove_everything`]) and exits.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};

use witness_process::Signal;

/// The first signal received, 0 while none was.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

static LIVE: Mutex<Live> = Mutex::new(Live {
    next: 0,
    closed: false,
    jails: BTreeMap::new(),
});

struct Live {
    next: u64,
    /// Set by [`remove_everything`]: the process is exiting, no jail is made.
    closed: bool,
    jails: BTreeMap<u64, PathBuf>,
}

/// A jail registered while it lives; dropping it unregisters it.
pub(crate) struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        live().jails.remove(&self.0);
    }
}

fn live() -> MutexGuard<'static, Live> {
    match LIVE.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Makes a jail directory with `make` (which gives it and the path to
/// remove) and registers it under one lock, so that no jail is ever on
/// disk unknown to [`remove_everything`], nor made after it ran.
pub(crate) fn make_jail<T>(
    make: impl FnOnce() -> std::io::Result<(T, PathBuf)>,
) -> std::io::Result<(T, PathBuf, Registration)> {
    let mut live = live();
    if live.closed {
        return Err(std::io::Error::other(
            "the auditor is exiting: no jail is made",
        ));
    }
    let (made, root) = make()?;
    live.next += 1;
    let id = live.next;
    live.jails.insert(id, root.clone());
    Ok((made, root, Registration(id)))
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

/// Removes every live jail directory and every other temporary directory
/// of the process (after a second request to stop, when the audit will not
/// get to them: the caller exits next, without unwinding).
pub fn remove_everything() {
    let mut live = live();
    live.closed = true;
    for root in live.jails.values() {
        // A jail's tmpfs goes first: its mount point could not be removed.
        crate::disk::unmount(root);
        let _ = std::fs::remove_dir_all(root);
    }
    live.jails.clear();
    drop(live);
    witness_process::scratch::remove_all();
}

/// The conventional name of the signals the auditor handles.
pub fn signal_name(signal: i32) -> String {
    match signal {
        s if s == Signal::TERM.as_raw() => "SIGTERM".into(),
        s if s == Signal::INT.as_raw() => "SIGINT".into(),
        s if s == Signal::HUP.as_raw() => "SIGHUP".into(),
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
        // remove_everything() is not called here: it would remove the jails of
        // every other test running in this process.
        let root = PathBuf::from("/nonexistent/mcp-witness-test-jail");
        let ((), _, registration) = make_jail(|| Ok(((), root.clone()))).expect("registered");
        assert!(live().jails.values().any(|p| *p == root));
        drop(registration);
        assert!(!live().jails.values().any(|p| *p == root));
        assert_eq!(signal_name(Signal::HUP.as_raw()), "SIGHUP");
    }
}
