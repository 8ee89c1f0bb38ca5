//! A launched server process and how its whole tree is ended.
//!
//! In a bubblewrap sandbox the server runs in a PID namespace of its own:
//! killing the namespace's init ends every process in it, including any
//! that called `setsid` to leave the process group, and bubblewrap (our
//! child) exits only once the namespace is empty. Without bubblewrap the
//! server leads a process group of its own, which is what can be killed;
//! a `setsid` escapes that, and the report does not list `pid-namespace`.

use std::os::fd::OwnedFd;
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

use witness_wire::connection::Process;

use super::sandbox::namespace_members;
use crate::interrupt::{self, KillHandle, Registration};

/// A server started in the jail. Dropping it kills whatever is left of it.
pub(super) struct JailedProcess {
    child: Child,
    /// The PID-namespace init (bubblewrap only): its pid and a pidfd.
    namespace_init: Option<(i32, Arc<OwnedFd>)>,
    /// Keeps the process known to the signal handler while it lives.
    _registration: Registration,
}

impl JailedProcess {
    pub(super) fn new(child: Child, namespace_init: Option<(i32, OwnedFd)>) -> Self {
        let namespace_init = namespace_init.map(|(pid, fd)| (pid, Arc::new(fd)));
        let handle = KillHandle {
            group: i32::try_from(child.id()).unwrap_or(0),
            namespace_init: namespace_init.as_ref().map(|(_, fd)| fd.clone()),
        };
        Self {
            child,
            namespace_init,
            _registration: interrupt::register_process(handle),
        }
    }

    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asks politely: SIGTERM to every process of the server, never to
    /// bubblewrap itself (which would only make the kernel kill the rest).
    fn terminate(&self) {
        match &self.namespace_init {
            Some((init, _)) => {
                for pid in namespace_members(*init) {
                    // SAFETY: kill(2) of a process in the sandbox we made.
                    unsafe {
                        libc::kill(pid, libc::SIGTERM);
                    }
                }
            }
            None => self.signal_group(libc::SIGTERM),
        }
    }

    /// Insists: the namespace's init (and with it every process in the
    /// namespace), then the process group we launched.
    fn kill(&self) {
        if let Some((_, pidfd)) = &self.namespace_init {
            interrupt::send_pidfd(pidfd, libc::SIGKILL);
        }
        self.signal_group(libc::SIGKILL);
    }

    fn signal_group(&self, signal: i32) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: signals the process group created for this child.
            unsafe {
                libc::kill(-pid, signal);
            }
        }
    }
}

impl Process for JailedProcess {
    /// Waits for the server to leave on its own (its stdin is closed), then
    /// insists: SIGTERM, then SIGKILL of the whole tree, so no process of it
    /// outlives the audit.
    fn stop(&mut self) -> Option<ExitStatus> {
        if interrupt::signal().is_some() {
            // The auditor was told to stop: nothing is waited for.
            self.kill();
            return self.wait_for(Duration::from_millis(2_000));
        }
        let status = self
            .wait_for(Duration::from_millis(1_000))
            .or_else(|| {
                self.terminate();
                self.wait_for(Duration::from_millis(500))
            })
            .or_else(|| {
                self.kill();
                self.wait_for(Duration::from_millis(2_000))
            });
        // Whatever else is in the group goes too.
        self.signal_group(libc::SIGKILL);
        status
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for JailedProcess {
    fn drop(&mut self) {
        if self.exited().is_none() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}
