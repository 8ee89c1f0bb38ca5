//! One process controller: how the auditor starts the processes it runs,
//! waits for them with a deadline, ends them, and knows which are alive.
//!
//! Every child started through [`Launch`] leads a process group of its own,
//! so that ending it ends whatever it started that stayed in the group, and
//! may get a parent-death signal, so that it ends with the thread that
//! started it. While it lives (until it is reaped) it is in the one
//! process-wide [registry](kill_everything), which serves two ends that are
//! process-wide by nature:
//!
//! - the binary's signal thread ends every live child at once with
//!   [`kill_everything`] (all but those launched
//!   [`kept_on_interrupt`](Launch::kept_on_interrupt));
//! - a sweep, the subreaper of its descendants ([`become_subreaper`]), tells
//!   its own children from the orphans handed to it, which [`reap_orphans`]
//!   ends.
//!
//! The temporary directories that must not outlive the process are
//! process-wide too: [`scratch`] makes and registers them, and removes
//! what is left of them when the binary exits without unwinding.
//!
//! A [`Controlled`] child is waited for until a deadline
//! ([`wait_until`](Controlled::wait_until), or
//! [`run_until`](Controlled::run_until), which kills it at the deadline) and
//! ended politely ([`terminate`](Controlled::terminate): a signal to its
//! group, its leader or a given set of pids, a grace period, then SIGKILL to
//! the group and to every [`Pidfd`] attached with
//! [`also_kill`](Controlled::also_kill)). Dropping one that still runs kills
//! it and reaps it: none outlives its owner.
//!
//! Built on rustix's safe system calls; the one `unsafe` is the hook that
//! runs in the child between fork and exec.

mod child;
mod registry;
pub mod scratch;

pub use child::{Controlled, Ended, Launch, Pidfd, Recipients};
pub use registry::{become_subreaper, kill_everything, reap_orphans};
pub use rustix::process::Signal;
