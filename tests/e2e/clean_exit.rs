//! Ending on a signal leaves nothing of the audit behind, however the
//! signal is delivered (docs/security.md, "Ending cleanly").
//!
//! GNU `timeout`, told to stop, signals its child and then the child's whole
//! process group: the auditor gets the same signal twice within
//! microseconds. That is one request (stop, write what was observed, exit
//! 3), not a second one; and a real second request (another signal, or the
//! same one a second later), which exits at once, still removes every jail
//! and every temporary directory the auditor made — the SQLite observer's
//! private images (`witness-sqlite-*`) among them.
//!
//! Every run gets a TMPDIR of its own, holding the jail and the
//! observer's images while the audit runs, and nothing once it ended.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::Value;

use crate::common::fixture;

/// A private TMPDIR, an output directory and a seeded SQLite store.
struct Scene {
    _dir: tempfile::TempDir,
    tmp: PathBuf,
    out: PathBuf,
    store: PathBuf,
    /// Unique to this run: the command line of the child the hanging
    /// server starts once a call is in flight.
    mark: String,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = dir.path().join("tmp");
        let out = dir.path().join("out");
        std::fs::create_dir_all(&tmp).expect("tmp");
        std::fs::create_dir_all(&out).expect("out");
        let store = dir.path().join("notes.db");
        let seeded = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
            .args(["testbed", "seed", "--store"])
            .arg(&store)
            .status()
            .expect("seed runs");
        assert!(seeded.success(), "the testbed store is seeded");
        let mark = format!(
            "witness-clean-exit-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        Self {
            _dir: dir,
            tmp,
            out,
            store,
            mark,
        }
    }

    /// The audit of a server that never answers its one call, observing
    /// the SQLite store, with `prefix` before the binary (`timeout 120`).
    fn audit(&self, prefix: &[&str]) -> Command {
        let binary = env!("CARGO_BIN_EXE_mcp-witness");
        let mut cmd = match prefix.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(binary);
                cmd
            }
            None => Command::new(binary),
        };
        cmd.args(["audit", "--format", "json", "--settle-ms", "0"])
            .args(["--timeout-ms", "60000", "--out"])
            .arg(&self.out)
            .arg("--store")
            .arg(format!("db=sqlite:{}", self.store.display()))
            .arg("--")
            .arg("python3")
            .arg(fixture("fake_server.py"))
            .args(["hang-call", &self.mark])
            .env("TMPDIR", &self.tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        cmd
    }

    fn left(&self) -> Vec<PathBuf> {
        entries(&self.tmp)
    }

    /// Waits until the auditor's jail is in TMPDIR: the audit has begun,
    /// and nothing has been called yet.
    fn wait_for_jail(&self) {
        wait_until("the jail is made", || {
            self.left().iter().any(|p| named(p, "mcp-witness-jail-"))
        });
    }

    /// Waits until the server holds a call unanswered, and checks that the
    /// auditor's temporary directories are all there to be cleaned.
    fn wait_for_call(&self) {
        let in_call = format!("{}-in-call", self.mark);
        wait_until("the call is in flight", || {
            !processes_with(&in_call).is_empty()
        });
        let left = self.left();
        assert!(
            left.iter().any(|p| named(p, "mcp-witness-jail-")),
            "{left:?}"
        );
        assert!(
            left.iter().any(|p| named(p, "witness-sqlite-")),
            "the observer's images are made in TMPDIR: {left:?}"
        );
    }

    fn report(&self) -> Value {
        let text = std::fs::read_to_string(self.out.join("audit.json")).expect("report written");
        serde_json::from_str(&text).expect("JSON")
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // A failing run must not leave its server's child to the next.
        for pid in processes_with(&self.mark) {
            let _ = kill_process(pid, Signal::KILL);
        }
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("read TMPDIR")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect()
}

fn named(path: &Path, prefix: &str) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn processes_with(marker: &str) -> Vec<Pid> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then(|| Pid::from_raw(pid))
                .flatten()
        })
        .collect()
}

struct Ended {
    code: Option<i32>,
    stderr: String,
}

/// Waits for `child` for at most `limit`; past it, its group is killed and
/// the test fails.
fn finish(mut child: Child, limit: Duration) -> Ended {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // Drained as the auditor writes, so a full pipe never holds it up.
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = stdout {
            let _ = pipe.read_to_string(&mut s);
        }
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = kill_process_group(Pid::from_child(&child), Signal::KILL);
            let _ = child.wait();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = out.join();
    Ended {
        code: status.code(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// The signal to the process and then to its group, as `timeout` sends it.
fn relay_twice(child: &Child, signal: Signal) {
    let pid = Pid::from_child(child);
    let _ = kill_process(pid, signal);
    let _ = kill_process_group(pid, signal);
}

/// One request to stop: exit 3, the report written as interrupted, one
/// line on stderr, nothing left in TMPDIR.
fn assert_one_clean_stop(scene: &Scene, ended: &Ended) {
    assert_eq!(ended.code, Some(3), "{}", ended.stderr);
    assert_eq!(
        ended.stderr.matches("SIGTERM").count(),
        1,
        "the relayed signal is the same request: {}",
        ended.stderr
    );
    assert!(
        !ended.stderr.contains("exiting at once"),
        "{}",
        ended.stderr
    );
    let report = scene.report();
    assert_eq!(report["complete"], false);
    assert!(
        report["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("interrupted by SIGTERM")),
        "{:#}",
        report["incomplete_reason"]
    );
    assert_eq!(scene.left(), Vec::<PathBuf>::new(), "left in TMPDIR");
    assert!(processes_with(&scene.mark).is_empty());
}

#[test]
fn a_signal_relayed_twice_before_any_call_is_one_clean_stop() {
    let scene = Scene::new();
    let child = scene.audit(&[]).spawn().expect("mcp-witness runs");
    scene.wait_for_jail();
    relay_twice(&child, Signal::TERM);
    let ended = finish(child, Duration::from_secs(30));
    assert_one_clean_stop(&scene, &ended);
}

#[test]
fn a_signal_relayed_twice_mid_call_is_one_clean_stop() {
    let scene = Scene::new();
    let child = scene.audit(&[]).spawn().expect("mcp-witness runs");
    scene.wait_for_call();
    relay_twice(&child, Signal::TERM);
    let ended = finish(child, Duration::from_secs(30));
    assert_one_clean_stop(&scene, &ended);
}

#[test]
fn gnu_timeout_told_to_stop_leaves_nothing() {
    let scene = Scene::new();
    for early in [true, false] {
        let _ = std::fs::remove_file(scene.out.join("audit.json"));
        // timeout leads its own process group, where the auditor is too.
        let mut cmd = scene.audit(&["timeout", "120"]);
        let child = cmd.spawn().expect("timeout runs");
        if early {
            scene.wait_for_jail();
        } else {
            scene.wait_for_call();
        }
        let _ = kill_process(Pid::from_child(&child), Signal::TERM);
        // timeout exits with its child's status.
        let ended = finish(child, Duration::from_secs(30));
        assert_one_clean_stop(&scene, &ended);
    }
}

#[test]
fn a_second_request_exits_at_once_and_still_removes_everything() {
    let scene = Scene::new();
    let child = scene.audit(&[]).spawn().expect("mcp-witness runs");
    scene.wait_for_call();
    let pid = Pid::from_child(&child);
    // Another signal is another request, however soon; the same signal is
    // one only a second later (src/signals.rs has that rule's unit test).
    // Both may be pending at once, when SIGINT is taken first.
    let _ = kill_process(pid, Signal::TERM);
    let _ = kill_process(pid, Signal::INT);
    let ended = finish(child, Duration::from_secs(30));
    assert_eq!(ended.code, Some(3), "{}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("a second request to stop: removing the jails and exiting at once"),
        "{}",
        ended.stderr
    );
    assert_eq!(scene.left(), Vec::<PathBuf>::new(), "left in TMPDIR");
    assert!(processes_with(&scene.mark).is_empty());
}
