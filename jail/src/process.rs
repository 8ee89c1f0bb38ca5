//! A launched server process and how its whole tree is ended.
//!
//! In a bubblewrap sandbox the server runs in a PID namespace of its own:
//! killing the namespace's init ends every process in it, including any
//! that called `setsid` to leave the process group, and bubblewrap (our
//! child) exits only once the namespace is empty. Without bubblewrap the
//! server leads a process group of its own, which is what can be killed;
//! a `setsid` escapes that, and the report does not list `pid-namespace`.

use std::process::ExitStatus;
use std::time::Duration;

use witness_process::{Controlled, Pidfd, Recipients, Signal};
use witness_wire::connection::Process;

use super::sandbox::namespace_members;
use crate::interrupt;

/// A server started in the jail. Dropping it kills whatever is left of it.
pub(super) struct JailedProcess {
    /// bubblewrap, or the server itself; registered, so that the signal
    /// thread kills it (and the namespace init) at once.
    process: Controlled,
    /// The PID-namespace init's pid (bubblewrap only).
    namespace_init: Option<i32>,
}

impl JailedProcess {
    pub(super) fn new(mut process: Controlled, namespace_init: Option<(i32, Pidfd)>) -> Self {
        let namespace_init = namespace_init.map(|(pid, pidfd)| {
            process.also_kill(pidfd);
            pid
        });
        Self {
            process,
            namespace_init,
        }
    }

    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.process.wait_for(limit).ok().flatten()
    }
}

impl Process for JailedProcess {
    /// Waits for the server to leave on its own (its stdin is closed), then
    /// insists: SIGTERM to every process of the server (never to
    /// bubblewrap itself, which would only make the kernel kill the rest),
    /// then SIGKILL of the whole tree, so no process of it outlives the
    /// audit.
    fn stop(&mut self) -> Option<ExitStatus> {
        if interrupt::signal().is_some() {
            // The auditor was told to stop: nothing is waited for.
            self.process.kill();
            return self.wait_for(Duration::from_millis(2_000));
        }
        let status = self.wait_for(Duration::from_millis(1_000)).or_else(|| {
            let members = self.namespace_init.map(namespace_members);
            let asked = match &members {
                Some(pids) => Recipients::Pids(pids),
                None => Recipients::Group,
            };
            self.process
                .terminate(Signal::TERM, asked, Duration::from_millis(500))
                .ok()
                .flatten()
        });
        // Whatever else is in the group goes too.
        self.process.signal_group(Signal::KILL);
        status
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.process.try_wait().ok().flatten()
    }
}
