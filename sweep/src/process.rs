//! Child processes that cannot outlive their purpose.
//!
//! Installs and audit workers run as children in their own process group,
//! with a deadline. Three rules keep a sweep from stranding processes:
//!
//! - a child gets `PR_SET_PDEATHSIG`: when the sweep is killed, its workers
//!   die with it, and never finish writing into a directory a rerun owns;
//! - past its deadline a child's whole group is killed;
//! - the sweep is a child subreaper: a server whose worker was killed is
//!   handed to the sweep instead of init, and the sweep ends it (the engine
//!   starts servers in groups of their own, which a worker's kill misses).

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a running child is looked at.
const POLL: Duration = Duration::from_millis(25);

/// The children this process spawned and has not yet waited for: anything
/// else that is our child is an orphan handed to us. One per process, so
/// that no spawn escapes it.
pub struct Children {
    pids: Mutex<BTreeSet<u32>>,
}

static CHILDREN: Children = Children {
    pids: Mutex::new(BTreeSet::new()),
};

/// This process's children.
pub fn children() -> &'static Children {
    &CHILDREN
}

/// How a child ended.
pub enum Ended {
    Exited(ExitStatus),
    /// Killed at its deadline.
    TimedOut,
}

/// Makes this process the reaper of its orphaned descendants (Linux).
pub fn become_subreaper() {
    // SAFETY: prctl(2) with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

impl Children {
    /// Spawns `command` in its own process group, to die with this thread.
    pub fn spawn(&self, mut command: Command) -> std::io::Result<Child> {
        // SAFETY: getpid(2) has no preconditions.
        let parent = unsafe { libc::getpid() };
        command.process_group(0);
        // SAFETY: prctl(2) and getppid(2) are async-signal-safe and touch
        // only the child.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent died before the line above: do not run orphaned.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the sweep ended"));
                }
                Ok(())
            });
        }
        let mut pids = self.lock();
        let child = command.spawn()?;
        pids.insert(child.id());
        Ok(child)
    }

    /// Waits for `child` until `deadline`; past it, kills its group. Then
    /// ends whatever it left orphaned.
    pub fn wait(&self, child: &mut Child, deadline: Instant) -> std::io::Result<Ended> {
        let ended = loop {
            if let Some(status) = child.try_wait()? {
                break Ended::Exited(status);
            }
            if Instant::now() >= deadline {
                kill_group(child.id());
                child.wait()?;
                break Ended::TimedOut;
            }
            std::thread::sleep(POLL);
        };
        self.lock().remove(&child.id());
        self.reap_orphans();
        Ok(ended)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u32>> {
        // A panic elsewhere cannot leave the set half-changed: every change
        // is one insert or remove.
        self.pids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kills and reaps every child of ours that we did not spawn: processes
    /// orphaned by a worker that was killed, or that left them behind.
    pub fn reap_orphans(&self) {
        let ours = self.lock();
        // SAFETY: getpid(2) and getpgrp(2) have no preconditions.
        let (me, my_group) = unsafe { (libc::getpid(), libc::getpgrp()) };
        for (pid, group) in children_of(me) {
            if u32::try_from(pid).is_ok_and(|p| ours.contains(&p)) {
                continue;
            }
            // SAFETY: signals to a process (group) that is our child, and
            // waitpid(2) for that child only.
            unsafe {
                if group != my_group && group > 1 {
                    libc::killpg(group, libc::SIGKILL);
                } else {
                    libc::kill(pid, libc::SIGKILL);
                }
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// Kills a process group that one of our children leads.
fn kill_group(leader: u32) {
    if let Ok(pid) = libc::pid_t::try_from(leader)
        && pid > 1
    {
        // SAFETY: the group was created for this child by process_group(0).
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// `(pid, process group)` of every process whose parent is `parent`.
fn children_of(parent: libc::pid_t) -> Vec<(libc::pid_t, libc::pid_t)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
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
        let ppid = fields.next().and_then(|s| s.parse::<libc::pid_t>().ok());
        let group = fields.next().and_then(|s| s.parse::<libc::pid_t>().ok());
        if let (Some(ppid), Some(group)) = (ppid, group)
            && ppid == parent
        {
            out.push((pid, group));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_past_its_deadline_is_killed_with_its_group() {
        let children = children();
        let mut command = Command::new("sh");
        // A grandchild in the same group must die too.
        command.args(["-c", "sleep 30 & sleep 30"]);
        let Ok(mut child) = children.spawn(command) else {
            panic!("sh runs");
        };
        let started = Instant::now();
        let ended = children.wait(&mut child, Instant::now() + Duration::from_millis(300));
        assert!(matches!(ended, Ok(Ended::TimedOut)));
        assert!(started.elapsed() < Duration::from_secs(10));
        // Whatever is left of the group is a zombie waiting for its reaper.
        std::thread::sleep(Duration::from_millis(100));
        let group = libc::pid_t::try_from(child.id()).unwrap_or_default();
        assert!(running_in_group(group).is_empty(), "the group is gone");
    }

    /// Processes of `group` that are not zombies.
    fn running_in_group(group: libc::pid_t) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter(|stat| {
                let Some((_, rest)) = stat.rsplit_once(')') else {
                    return false;
                };
                let fields: Vec<&str> = rest.split_whitespace().collect();
                fields.first() != Some(&"Z") && fields.get(2) == Some(&group.to_string().as_str())
            })
            .collect()
    }

    #[test]
    fn a_child_that_ends_in_time_reports_its_status() {
        let children = children();
        let mut command = Command::new("sh");
        command.args(["-c", "exit 7"]);
        let Ok(mut child) = children.spawn(command) else {
            panic!("sh runs");
        };
        match children.wait(&mut child, Instant::now() + Duration::from_secs(20)) {
            Ok(Ended::Exited(status)) => assert_eq!(status.code(), Some(7)),
            _ => panic!("it exited"),
        }
    }
}
