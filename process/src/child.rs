//! Starting a child ([`Launch`]) and controlling it ([`Controlled`]).

use std::io::{self, Read};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::{Errno, FdFlags};
use rustix::process::{Pid, PidfdFlags, Signal};
use rustix::thread::UnshareFlags;

use crate::registry;

/// How long a killed child is given to be reaped before
/// [`Controlled::terminate`] gives up on it (its drop still waits).
const KILL_WAIT: Duration = Duration::from_secs(2);
/// How often a child is looked at where no pidfd tells when it ends.
const POLL: Duration = Duration::from_millis(10);
/// The longest single wait on a pidfd (a deadline far away is then
/// approached in steps, never waited for in one call).
const LONGEST_NAP: Duration = Duration::from_secs(1);

/// How a child is started: always in a process group of its own, and with
/// whatever of the below was asked for.
#[derive(Default)]
pub struct Launch<'fd> {
    death_signal: Option<Signal>,
    kept_on_interrupt: bool,
    new_network_namespace: bool,
    inherited: Vec<BorrowedFd<'fd>>,
    cgroups: Vec<BorrowedFd<'fd>>,
}

impl<'fd> Launch<'fd> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The child receives `signal` when the thread that started it ends
    /// (`PR_SET_PDEATHSIG`), the auditor killed outright included. A child
    /// whose parent ended before the signal was set does not run at all.
    pub fn death_signal(mut self, signal: Signal) -> Self {
        self.death_signal = Some(signal);
        self
    }

    /// [`kill_everything`](crate::kill_everything) leaves this child alone:
    /// its owner still needs it after an interrupt and ends it in order.
    pub fn kept_on_interrupt(mut self) -> Self {
        self.kept_on_interrupt = true;
        self
    }

    /// The child starts in a network namespace of its own; the kernel's
    /// refusal is the spawn's error.
    pub fn new_network_namespace(mut self) -> Self {
        self.new_network_namespace = true;
        self
    }

    /// The child moves itself into the cgroup whose `cgroup.procs` is open
    /// as `procs` before it executes anything, so that everything it runs
    /// is bound from its first instruction. The kernel's refusal is the
    /// spawn's error.
    pub fn join_cgroup(mut self, procs: BorrowedFd<'fd>) -> Self {
        self.cgroups.push(procs);
        self
    }

    /// The child inherits `fd` at the same number (it is close-on-exec in
    /// this process, as every descriptor should be).
    pub fn inherit_fd(mut self, fd: BorrowedFd<'fd>) -> Self {
        self.inherited.push(fd);
        self
    }

    /// Spawns `command` (adding what this launch asks for to it) and
    /// registers the child.
    pub fn spawn(&self, command: &mut Command) -> io::Result<Controlled> {
        command.process_group(0);
        if self.death_signal.is_some()
            || self.new_network_namespace
            || !self.inherited.is_empty()
            || !self.cgroups.is_empty()
        {
            self.add_hook(command);
        }
        let (child, id) = registry::spawn(command, self.kept_on_interrupt)?;
        let leader = Pid::from_child(&child);
        Ok(Controlled {
            // Opened before anyone can reap the child, so it names this
            // child for good; without pidfds (an old kernel) waits poll.
            pidfd: rustix::process::pidfd_open(leader, PidfdFlags::empty()).ok(),
            child,
            leader,
            id,
            attached: Vec::new(),
        })
    }

    fn add_hook(&self, command: &mut Command) {
        let inherited: Vec<RawFd> = self.inherited.iter().map(AsRawFd::as_raw_fd).collect();
        let cgroups: Vec<RawFd> = self.cgroups.iter().map(AsRawFd::as_raw_fd).collect();
        let new_network_namespace = self.new_network_namespace;
        let death_signal = self.death_signal;
        let parent = rustix::process::getpid();
        // SAFETY: the hook runs in the child between fork and exec, where only
        // async-signal-safe work is allowed: it makes system calls alone
        // (fcntl, write, unshare, prctl, getppid, through rustix), allocates
        // nothing and takes no lock. The descriptors it borrows are open:
        // `Launch` borrows them for as long as it can spawn, and fork copied
        // them into the child. Unsharing only the network namespace leaves
        // the descriptor table shared with no other thread (the child has
        // one).
        unsafe {
            command.pre_exec(move || {
                for &fd in &inherited {
                    rustix::io::fcntl_setfd(BorrowedFd::borrow_raw(fd), FdFlags::empty())?;
                }
                for &fd in &cgroups {
                    // `0` names the writer: the child itself.
                    rustix::io::write(BorrowedFd::borrow_raw(fd), b"0")?;
                }
                if new_network_namespace {
                    rustix::thread::unshare_unsafe(UnshareFlags::NEWNET)?;
                }
                if let Some(signal) = death_signal {
                    rustix::process::set_parent_process_death_signal(Some(signal))?;
                    // The parent ended before the line above: do not run
                    // orphaned.
                    if rustix::process::getppid() != Some(parent) {
                        return Err(Errno::SRCH.into());
                    }
                }
                Ok(())
            });
        }
    }
}

/// How a child waited for with a deadline ended.
#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    /// Killed, with its group, at its deadline.
    TimedOut,
}

/// Who [`Controlled::terminate`] asks first.
#[derive(Clone, Copy, Debug)]
pub enum Recipients<'a> {
    /// Every process of the child's group.
    Group,
    /// The child alone (it ends its own children, as a postmaster does).
    Leader,
    /// These processes (those of a sandbox, whose init is not to be asked).
    Pids(&'a [i32]),
}

/// A pidfd: a handle on one process that can never come to name another,
/// even after its pid is reused.
#[derive(Clone, Debug)]
pub struct Pidfd(Arc<OwnedFd>);

impl Pidfd {
    /// The pidfd of `pid`, which must still be alive (or not yet reaped).
    pub fn open(pid: i32) -> io::Result<Self> {
        let pid = crate::registry::pid_of(pid).ok_or(Errno::SRCH)?;
        Ok(Self(Arc::new(rustix::process::pidfd_open(
            pid,
            PidfdFlags::empty(),
        )?)))
    }

    /// Sends `signal` to exactly the process this pidfd was opened for.
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        Ok(rustix::process::pidfd_send_signal(&*self.0, signal)?)
    }
}

/// SIGKILL to every process `pidfds` name, then to the group `group` leads.
/// A process already gone is no error: the point is that none is left.
pub(crate) fn kill_tree(group: Pid, pidfds: &[Pidfd]) {
    for pidfd in pidfds {
        let _ = pidfd.signal(Signal::KILL);
    }
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
}

/// A child started by [`Launch::spawn`]: registered until it is reaped, and
/// killed with its group (and reaped) if it is dropped while it runs.
pub struct Controlled {
    child: Child,
    leader: Pid,
    pidfd: Option<OwnedFd>,
    /// Further processes its kill must reach (see [`Self::also_kill`]).
    attached: Vec<Pidfd>,
    id: u64,
}

impl Controlled {
    /// The child's pid, which is also its process group's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The standard library's child, for its pipes. Wait through the
    /// controller, which knows when the child is gone.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Every kill of this child (its own, and [`crate::kill_everything`])
    /// also sends SIGKILL through `pidfd`: a process of its tree that left
    /// its group, such as a sandbox's PID-namespace init.
    pub fn also_kill(&mut self, pidfd: Pidfd) {
        registry::attach(self.id, pidfd.clone());
        self.attached.push(pidfd);
    }

    /// The child's status if it has ended (it is then reaped and leaves the
    /// registry).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        if status.is_some() {
            registry::forget(self.id);
        }
        Ok(status)
    }

    /// Waits for the child to end; `None` when it still runs at `deadline`.
    pub fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.nap(left);
        }
    }

    /// [`Self::wait_until`] `limit` from now.
    pub fn wait_for(&mut self, limit: Duration) -> io::Result<Option<ExitStatus>> {
        self.wait_until(Instant::now() + limit)
    }

    /// Waits for the child to end, however long it takes.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        registry::forget(self.id);
        Ok(status)
    }

    /// Reads what the child writes to its piped stdout and stderr until it
    /// closes them, then waits for it.
    pub fn output(&mut self) -> io::Result<Output> {
        let stdout = self.child.stdout.take();
        // Both pipes are drained at once: a child blocked on a full stderr
        // would never close its stdout.
        let stderr = self.child.stderr.take().map(|mut pipe| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                pipe.read_to_end(&mut bytes).map(|_| bytes)
            })
        });
        let mut out = Vec::new();
        if let Some(mut pipe) = stdout {
            pipe.read_to_end(&mut out)?;
        }
        let err = match stderr {
            Some(reader) => reader
                .join()
                .map_err(|_| io::Error::other("the stderr reader failed"))??,
            None => Vec::new(),
        };
        Ok(Output {
            status: self.wait()?,
            stdout: out,
            stderr: err,
        })
    }

    /// Waits for the child until `deadline`; past it, kills its group and
    /// reaps it.
    pub fn run_until(&mut self, deadline: Instant) -> io::Result<Ended> {
        if let Some(status) = self.wait_until(deadline)? {
            return Ok(Ended::Exited(status));
        }
        self.kill();
        self.wait()?;
        Ok(Ended::TimedOut)
    }

    /// Asks, then insists: `signal` to `to`, up to `grace` for the child to
    /// end, then SIGKILL to its group and every attached pidfd. `None` when
    /// even that did not end it within two seconds.
    pub fn terminate(
        &mut self,
        signal: Signal,
        to: Recipients<'_>,
        grace: Duration,
    ) -> io::Result<Option<ExitStatus>> {
        match to {
            Recipients::Group => self.signal_group(signal),
            Recipients::Leader => self.signal(signal),
            Recipients::Pids(pids) => {
                for pid in pids.iter().filter_map(|&pid| crate::registry::pid_of(pid)) {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
        }
        if let Some(status) = self.wait_for(grace)? {
            return Ok(Some(status));
        }
        self.kill();
        self.wait_for(KILL_WAIT)
    }

    /// `signal` to the child alone (through its pidfd where there is one,
    /// so never to a process that took its pid). One gone is no error.
    pub fn signal(&self, signal: Signal) {
        let _ = match &self.pidfd {
            Some(pidfd) => rustix::process::pidfd_send_signal(pidfd, signal),
            None => rustix::process::kill_process(self.leader, signal),
        };
    }

    /// `signal` to every process of the child's group. None left is no
    /// error.
    pub fn signal_group(&self, signal: Signal) {
        let _ = rustix::process::kill_process_group(self.leader, signal);
    }

    /// SIGKILL to every attached pidfd and to the child's group.
    pub fn kill(&self) {
        kill_tree(self.leader, &self.attached);
    }

    /// Sleeps until the child ends or `left` passes, whichever is first.
    fn nap(&self, left: Duration) {
        let left = left.min(LONGEST_NAP);
        let Some(pidfd) = &self.pidfd else {
            std::thread::sleep(left.min(POLL));
            return;
        };
        // A pidfd is readable once its process has ended.
        let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
        let timeout = Timespec::try_from(left).ok();
        let woke = rustix::event::poll(&mut fds, timeout.as_ref());
        let broken = fds[0]
            .revents()
            .intersects(PollFlags::ERR | PollFlags::NVAL);
        if woke.is_err() || broken {
            std::thread::sleep(left.min(POLL));
        }
    }
}

impl Drop for Controlled {
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.kill();
            let _ = self.child.wait();
        }
        registry::forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;
    use std::os::fd::AsFd;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    use std::sync::{Mutex, MutexGuard};

    use super::*;

    /// One test at a time: `kill_everything` ends every registered child of
    /// this test process, another test's too.
    fn serial() -> MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    /// Processes of `group` that are not zombies.
    fn running_in_group(group: u32) -> Vec<String> {
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
    fn a_child_past_its_deadline_is_killed_with_its_group() {
        let _serial = serial();
        // The grandchild stays in the group: it must die too.
        let mut child = Launch::new()
            .spawn(&mut sh("sleep 30 & sleep 30"))
            .expect("sh runs");
        let group = child.id();
        let started = Instant::now();
        let ended = child.run_until(Instant::now() + Duration::from_millis(300));
        assert!(matches!(ended, Ok(Ended::TimedOut)), "{ended:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
        // What is left of the group is a zombie waiting for its reaper.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !running_in_group(group).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(running_in_group(group), Vec::<String>::new());
    }

    #[test]
    fn a_child_that_ends_in_time_reports_its_status() {
        let _serial = serial();
        let mut child = Launch::new().spawn(&mut sh("exit 7")).expect("sh runs");
        match child.run_until(Instant::now() + Duration::from_secs(20)) {
            Ok(Ended::Exited(status)) => assert_eq!(status.code(), Some(7)),
            other => panic!("it exited: {other:?}"),
        }
        // Reaped children leave the registry.
        assert!(!registry::is_registered(child.id()));
    }

    #[test]
    fn terminate_asks_first_and_kills_one_that_does_not_listen() {
        let _serial = serial();
        let dir = tempfile::tempdir().expect("a directory");
        let record = dir.path().join("asked");
        // Records SIGTERM and carries on.
        let script = format!(
            "trap 'echo term >> {}' TERM; echo ready; while :; do sleep 0.05; done",
            record.display()
        );
        let mut command = sh(&script);
        command.stdout(Stdio::piped());
        let mut child = Launch::new().spawn(&mut command).expect("sh runs");
        wait_ready(&mut child);
        let grace = Duration::from_millis(400);
        let started = Instant::now();
        let status = child
            .terminate(Signal::TERM, Recipients::Group, grace)
            .expect("terminate")
            .expect("it ended");
        assert!(started.elapsed() >= grace, "killed before its grace period");
        assert_eq!(status.signal(), Some(Signal::KILL.as_raw()));
        let asked = std::fs::read_to_string(&record).unwrap_or_default();
        assert!(asked.contains("term"), "SIGTERM came first: {asked:?}");
    }

    #[test]
    fn terminate_waits_no_longer_than_a_child_that_obeys() {
        let _serial = serial();
        let mut command = sh("echo ready; exec sleep 30");
        command.stdout(Stdio::piped());
        let mut child = Launch::new().spawn(&mut command).expect("sh runs");
        wait_ready(&mut child);
        let started = Instant::now();
        let status = child
            .terminate(Signal::TERM, Recipients::Leader, Duration::from_secs(20))
            .expect("terminate")
            .expect("it ended");
        assert_eq!(status.signal(), Some(Signal::TERM.as_raw()));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn kill_everything_reaches_a_live_child_and_spares_one_kept() {
        let _serial = serial();
        let mut live = Launch::new()
            .spawn(&mut sh("exec sleep 30"))
            .expect("sleep");
        let mut kept = Launch::new()
            .kept_on_interrupt()
            .spawn(&mut sh("exec sleep 30"))
            .expect("sleep");
        assert!(registry::is_registered(live.id()));
        crate::kill_everything();
        let status = live
            .wait_for(Duration::from_secs(10))
            .expect("wait")
            .expect("killed");
        assert_eq!(status.signal(), Some(Signal::KILL.as_raw()));
        assert!(matches!(kept.try_wait(), Ok(None)), "the kept child runs");
        kept.kill();
        assert!(
            kept.wait_for(Duration::from_secs(10))
                .expect("wait")
                .is_some()
        );
    }

    #[test]
    fn a_kill_reaches_an_attached_pidfd() {
        let _serial = serial();
        // The grandchild leaves the group; only its pidfd reaches it.
        let mut command = sh("setsid sleep 30 & echo $!; wait");
        command.stdout(Stdio::piped());
        let mut child = Launch::new().spawn(&mut command).expect("sh runs");
        let line = read_line(&mut child);
        let grandchild: i32 = line.trim().parse().expect("a pid");
        let pidfd = Pidfd::open(grandchild).expect("pidfd");
        child.also_kill(pidfd.clone());
        child.kill();
        assert!(
            child
                .wait_for(Duration::from_secs(10))
                .expect("wait")
                .is_some()
        );
        let mut fds = [PollFd::new(&*pidfd.0, PollFlags::IN)];
        let timeout = Timespec::try_from(Duration::from_secs(10)).ok();
        let ready = rustix::event::poll(&mut fds, timeout.as_ref()).expect("poll");
        assert_eq!(ready, 1, "the process that left the group ended");
    }

    #[test]
    fn a_child_inherits_the_descriptors_it_is_given() {
        let _serial = serial();
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).expect("pipe");
        let script = format!("echo passed >&{}", write.as_raw_fd());
        let mut child = Launch::new()
            .inherit_fd(write.as_fd())
            .spawn(&mut sh(&script))
            .expect("sh runs");
        let status = child.wait_for(Duration::from_secs(10)).expect("wait");
        assert_eq!(status.and_then(|s| s.code()), Some(0));
        drop(write);
        let mut text = String::new();
        std::fs::File::from(read)
            .read_to_string(&mut text)
            .expect("read");
        assert_eq!(text, "passed\n");
    }

    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        let _serial = serial();
        let spawner = std::thread::spawn(|| {
            Launch::new()
                .death_signal(Signal::KILL)
                .spawn(&mut sh("exec sleep 30"))
        });
        let mut child = spawner.join().expect("the thread").expect("sleep");
        let status = child
            .wait_for(Duration::from_secs(10))
            .expect("wait")
            .expect("it died with the thread");
        assert_eq!(status.signal(), Some(Signal::KILL.as_raw()));
    }

    #[test]
    fn dropping_a_running_child_kills_and_reaps_it() {
        let _serial = serial();
        let child = Launch::new()
            .spawn(&mut sh("exec sleep 30"))
            .expect("sleep");
        let pid = child.id();
        drop(child);
        assert!(!registry::is_registered(pid));
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    fn read_line(child: &mut Controlled) -> String {
        let stdout = child.child_mut().stdout.take().expect("piped");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("a line");
        line
    }

    fn wait_ready(child: &mut Controlled) {
        assert_eq!(read_line(child), "ready\n");
    }
}
