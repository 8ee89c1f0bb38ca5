//! Child processes that cannot outlive their purpose.
//!
//! Installs and audit workers run as children in their own process group,
//! with a deadline. Three rules keep a sweep from stranding processes:
//!
//! - a child gets a parent-death signal (SIGKILL): when the sweep is killed,
//!   its workers die with it, and never finish writing into a directory a
//!   rerun owns;
//! - past its deadline a child's whole group is killed;
//! - the sweep is a child subreaper: a server whose worker was killed is
//!   handed to the sweep instead of init, and the sweep ends it (the engine
//!   starts servers in groups of their own, which a worker's kill misses).
//!
//! The controller and its one registry (`witness_process`) do the work:
//! every process the sweep starts goes through [`spawn`], so that any other
//! child of the sweep is known to be an orphan.

use std::process::Command;
use std::time::Instant;

pub use witness_process::Ended;
use witness_process::{Controlled, Launch, Signal};

/// Spawns `command` in its own process group, to die with this thread.
pub fn spawn(mut command: Command) -> std::io::Result<Controlled> {
    Launch::new().death_signal(Signal::KILL).spawn(&mut command)
}

/// Waits for `child` until `deadline`; past it, kills its group. Then ends
/// whatever it left orphaned.
pub fn wait(child: &mut Controlled, deadline: Instant) -> std::io::Result<Ended> {
    let ended = child.run_until(deadline);
    witness_process::reap_orphans();
    ended
}
