//! The one registry of this process's live children.
//!
//! Signals and orphans are process-wide, so this is too: every child
//! [`Launch`](crate::Launch) spawns is entered here under the same lock as
//! the spawn itself (so that no scan can see a child before it is known)
//! and leaves when it is reaped.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};

use rustix::process::{Pid, Signal, WaitOptions};

use crate::child::{Pidfd, kill_tree};

static LIVE: Mutex<Live> = Mutex::new(Live {
    next: 0,
    children: BTreeMap::new(),
});

struct Live {
    next: u64,
    children: BTreeMap<u64, Entry>,
}

/// How to end one child and everything it started.
#[derive(Clone)]
struct Entry {
    /// The child, leader of its own process group.
    leader: Pid,
    /// Processes of its tree outside the group (a sandbox's init).
    pidfds: Vec<Pidfd>,
    kept_on_interrupt: bool,
}

fn live() -> MutexGuard<'static, Live> {
    // Every change is one insert, push or remove: a panic elsewhere cannot
    // leave the registry half-changed.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Spawns `command` and enters the child; gives it and its entry's id.
pub(crate) fn spawn(command: &mut Command, kept_on_interrupt: bool) -> io::Result<(Child, u64)> {
    let mut live = live();
    let child = command.spawn()?;
    live.next += 1;
    let id = live.next;
    live.children.insert(
        id,
        Entry {
            leader: Pid::from_child(&child),
            pidfds: Vec::new(),
            kept_on_interrupt,
        },
    );
    Ok((child, id))
}

pub(crate) fn attach(id: u64, pidfd: Pidfd) {
    if let Some(entry) = live().children.get_mut(&id) {
        entry.pidfds.push(pidfd);
    }
}

pub(crate) fn forget(id: u64) {
    live().children.remove(&id);
}

#[cfg(test)]
pub(crate) fn is_registered(pid: u32) -> bool {
    live()
        .children
        .values()
        .any(|e| u32::try_from(e.leader.as_raw_pid()) == Ok(pid))
}

/// Kills every live child with everything it started (its group and every
/// pidfd attached to it), but those launched
/// [`kept_on_interrupt`](crate::Launch::kept_on_interrupt): what the first
/// signal to the auditor does at once.
pub fn kill_everything() {
    let doomed: Vec<Entry> = live()
        .children
        .values()
        .filter(|e| !e.kept_on_interrupt)
        .cloned()
        .collect();
    for entry in doomed {
        kill_tree(entry.leader, &entry.pidfds);
    }
}

/// Makes this process the reaper of its orphaned descendants: a process
/// whose parent dies is handed to it instead of to init.
pub fn become_subreaper() -> io::Result<()> {
    Ok(rustix::process::set_child_subreaper(Some(
        rustix::process::getpid(),
    ))?)
}

/// Kills and reaps every child of this process that the registry does not
/// know: orphans handed to a subreaper by a child that was killed, or that
/// left them behind.
pub fn reap_orphans() {
    // Held throughout, so that nothing spawned meanwhile is taken for an
    // orphan.
    let live = live();
    let ours: HashSet<Pid> = live.children.values().map(|e| e.leader).collect();
    let me = rustix::process::getpid();
    let my_group = rustix::process::getpgrp();
    for (pid, group) in children_of(me) {
        if ours.contains(&pid) {
            continue;
        }
        // An orphan leading a group of its own takes the group with it.
        let _ = match group {
            Some(group) if group != my_group && !group.is_init() => {
                rustix::process::kill_process_group(group, Signal::KILL)
            }
            _ => rustix::process::kill_process(pid, Signal::KILL),
        };
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
    }
}

/// `(pid, process group)` of every process whose parent is `parent`.
fn children_of(parent: Pid) -> Vec<(Pid, Option<Pid>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(positive_pid) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold anything, so read
        // after its closing parenthesis.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace().skip(1);
        let ppid = fields.next().and_then(positive_pid);
        let group = fields.next().and_then(positive_pid);
        if ppid == Some(parent) {
            out.push((pid, group));
        }
    }
    out
}

/// A pid read from /proc: only a positive number is one (`Pid::from_raw`
/// asserts it is not negative, and a stat read while its process exits, or
/// of a process of another namespace, may hold anything).
fn positive_pid(text: &str) -> Option<Pid> {
    text.parse::<i32>().ok().and_then(pid_of)
}

/// `raw` as a pid when it is one: `Pid::from_raw` asserts that it is not
/// negative, and a number read from the kernel or a child is not trusted
/// to be.
pub(crate) fn pid_of(raw: i32) -> Option<Pid> {
    (raw > 0).then(|| Pid::from_raw(raw)).flatten()
}

#[cfg(test)]
mod pid_tests {
    use super::*;

    #[test]
    fn only_positive_numbers_are_pids() {
        assert!(positive_pid("-1").is_none());
        assert!(positive_pid("0").is_none());
        assert!(positive_pid("x").is_none());
        assert_eq!(
            positive_pid("42").map(Pid::as_raw_nonzero).map(|n| n.get()),
            Some(42)
        );
        assert!(pid_of(-5).is_none());
    }
}
