//! The hostile-server battery: one tiny server of ours per misbehaviour
//! (`tests/hostile/*.py`), each run through the real binary, each asserting
//! the outcome a user needs — a finding or `incomplete` within its time, no
//! process left, no jail left in TMPDIR, the original store unchanged,
//! nothing written outside the jail, no secret and no active markup in any
//! output. The points are those of issue 13; `docs/security.md` says which
//! isolation layer answers each.
//!
//! Every run gets a TMPDIR of its own, so a jail left behind is seen, and a
//! watchdog: a run past its limit is killed and fails the test (a hang of
//! ours is a failure, never a slow pass).

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::Value;

fn hostile(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A private TMPDIR (for the auditor's jails) and a place outside it.
struct Scene {
    _dir: tempfile::TempDir,
    tmp: PathBuf,
    outside: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = dir.path().join("tmp");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&tmp).expect("tmp");
        std::fs::create_dir_all(&outside).expect("outside");
        Self {
            _dir: dir,
            tmp,
            outside,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
        cmd.args(args)
            .env("TMPDIR", &self.tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        cmd
    }

    /// Runs to the end or until `limit`, when the whole group is killed.
    fn run(&self, args: &[&str], limit: Duration) -> Outcome {
        let child = self.command(args).spawn().expect("mcp-witness runs");
        finish(child, limit)
    }

    /// No jail, nor anything else, left in the auditor's TMPDIR.
    fn assert_no_jail_left(&self) {
        let left: Vec<_> = std::fs::read_dir(&self.tmp)
            .expect("tmp")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    }
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    killed: bool,
    /// The auditor's pid (its cgroups are named after it).
    pid: u32,
}

impl Outcome {
    fn report(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a report ({e}); exit {:?}, killed {}, stderr: {}",
                self.code, self.killed, self.stderr
            )
        })
    }
}

fn finish(mut child: Child, limit: Duration) -> Outcome {
    let started = Instant::now();
    let pid = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = stdout {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    });
    let mut killed = false;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if started.elapsed() > limit {
            killed = true;
            // The process group this test created.
            let _ = kill_process_group(Pid::from_child(&child), Signal::KILL);
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    Outcome {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed,
        killed,
        pid,
    }
}

/// Processes whose command line contains `marker`, as `pid: cmdline`.
fn processes_with(marker: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| e.file_name().to_str() != Some(me.as_str()))
        .filter_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(marker)
                .then(|| format!("{}: {cmdline}", e.file_name().to_string_lossy()))
        })
        .collect()
}

/// Asserts nothing with `marker` runs, then kills whatever does (so a
/// failing run does not poison the next).
fn assert_no_process_left(marker: &str) {
    let left = processes_with(marker);
    for line in &left {
        if let Some(pid) = line
            .split(':')
            .next()
            .and_then(|p| p.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        {
            let _ = kill_process(pid, Signal::KILL);
        }
    }
    assert!(left.is_empty(), "processes left: {left:#?}");
}

fn marker(name: &str) -> String {
    format!("witness-{name}-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn digest_file(path: &Path) -> String {
    blake3::hash(&std::fs::read(path).expect("read"))
        .to_hex()
        .to_string()
}

fn finding_kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["kind"].as_str().map(str::to_owned))
        .collect()
}

fn isolation_held(report: &Value, layer: &str) -> bool {
    report["isolation"]["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|l| l["layer"] == layer && l["held"] == true)
}

const LIMIT: Duration = Duration::from_secs(60);

fn audit_args<'a>(extra: &[&'a str], server: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "audit",
        "--format",
        "json",
        "--timeout-ms",
        "5000",
        "--settle-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    args.push("--");
    args.push("python3");
    args.extend_from_slice(server);
    args
}

// 1. The original stores cannot be written, and the attempt is the finding.
#[test]
fn the_original_store_cannot_be_written() {
    let scene = Scene::new();
    let db = scene.outside.join("app.db");
    {
        let conn = rusqlite::Connection::open(&db).expect("db");
        conn.execute_batch("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('mine');")
            .expect("seed");
    }
    let tree = scene.outside.join("files");
    std::fs::create_dir_all(&tree).expect("tree");
    std::fs::write(tree.join("a.txt"), "the user's file\n").expect("a.txt");
    let before = digest_file(&db);
    let db_store = format!("db=sqlite:{}", db.display());
    let tree_store = format!("files=fs:{}", tree.display());
    let writer = hostile("store_writer.py");
    let (db_path, tree_path) = (db.to_string_lossy(), tree.to_string_lossy());
    let mark = marker("original");
    let pages = tempfile::tempdir().expect("out dir");
    let out_dir = pages.path().to_string_lossy().into_owned();
    let out = scene.run(
        &audit_args(
            &[
                "--store",
                &db_store,
                "--store",
                &tree_store,
                "--out",
                &out_dir,
            ],
            &[&writer, &db_path, &tree_path, &mark],
        ),
        LIMIT,
    );
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    assert_eq!(
        digest_file(&db),
        before,
        "the original store was written: {report:#}"
    );
    let tables: i64 = rusqlite::Connection::open(&db)
        .expect("db")
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'owned_by_hostile_server'",
            [],
            |row| row.get(0),
        )
        .expect("query");
    assert_eq!(tables, 0);
    let files: Vec<_> = std::fs::read_dir(&tree)
        .expect("tree")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(files, ["a.txt"], "the original tree was written");
    // The mount namespace held: the originals were out of reach, and a
    // decoy stood in their place (one directory: both stores' originals
    // are in it), which is how the attempt was seen.
    let mount = layer(&report, "mount-namespace");
    assert_eq!(mount["held"], true, "{mount:#}");
    assert!(
        mount["detail"]
            .as_str()
            .is_some_and(|d| d.contains("1 decoy (") && d.contains("original-store-write-attempt")),
        "{mount:#}"
    );
    // The server believed it wrote: the decoys took the writes.
    let answer = first_answer(&report);
    assert!(
        answer.contains(&format!("wrote {db_path}"))
            && answer.contains(&format!("wrote {tree_path}")),
        "{answer}"
    );
    // The attempt is the finding, on the call, and the read-only tool fails
    // EFF-01 with the originals' paths as evidence.
    let written_in_tree = tree.join("owned_by_hostile_server.txt");
    let written_in_tree = written_in_tree.to_string_lossy();
    let call = &report["calls"][0];
    assert_eq!(call["tool"], "peek");
    let attempted: Vec<&str> = call["original_writes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        attempted.contains(&&*db_path) && attempted.contains(&&*written_in_tree),
        "{call:#}"
    );
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "original-store-write-attempt")
        .collect();
    assert!(
        findings
            .iter()
            .any(|f| f["call"] == 1 && f["detail"].as_str().is_some_and(|d| d.contains(&*db_path))),
        "{:#}",
        report["findings"]
    );
    let eff01 = common::check(&report, "EFF-01", "peek");
    assert_eq!(eff01["verdict"], "fail", "{eff01:#}");
    let evidence: Vec<&str> = eff01["evidence"]["original_writes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["path"].as_str())
        .collect();
    assert!(evidence.contains(&&*db_path), "{eff01:#}");
    let page = std::fs::read_to_string(pages.path().join("report.html")).expect("page");
    assert!(
        page.contains("tried to write the original")
            && page.contains("A write to a store&#39;s original was reported"),
        "the page shows the attempt and which layer reports attempts"
    );
    assert!(
        !report.to_string().contains("/decoys/"),
        "no decoy's own path reaches the report: {report:#}"
    );
    assert_eq!(out.code, Some(1));
    assert_no_process_left(&mark);
    scene.assert_no_jail_left();
}

// 1a. An original in a directory the server is shown (here with --ro-bind)
// gets a decoy of its own, a file: the append lands there, Landlock allows
// that file and nothing beside it, and the attempt is the finding.
#[test]
fn an_original_beside_what_the_server_sees_gets_a_file_decoy() {
    let scene = Scene::new();
    let notes = scene.outside.join("notes.jsonl");
    std::fs::write(&notes, "{\"note\": \"mine\"}\n").expect("notes");
    std::fs::write(scene.outside.join("other.txt"), "beside\n").expect("other");
    let before = digest_file(&notes);
    let store = format!("notes=jsonl:{}", notes.display());
    let shown = scene.outside.to_string_lossy().into_owned();
    let writer = hostile("store_writer.py");
    let path = notes.to_string_lossy().into_owned();
    let mark = marker("beside");
    let out = scene.run(
        &audit_args(
            &["--store", &store, "--ro-bind", &shown],
            &[&writer, &path, &mark],
        ),
        LIMIT,
    );
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    assert_eq!(digest_file(&notes), before, "{report:#}");
    let answer = first_answer(&report);
    assert!(answer.contains(&format!("wrote {path}")), "{answer}");
    let mount = layer(&report, "mount-namespace");
    assert!(
        mount["detail"]
            .as_str()
            .is_some_and(|d| d.contains("1 decoy (") && d.contains("(--ro-bind)")),
        "{mount:#}"
    );
    assert_eq!(
        report["calls"][0]["original_writes"],
        serde_json::json!([path]),
        "{:#}",
        report["calls"][0]
    );
    let eff01 = common::check(&report, "EFF-01", "peek");
    assert_eq!(eff01["verdict"], "fail", "{eff01:#}");
    assert_eq!(out.code, Some(1));
    assert_no_process_left(&mark);
    scene.assert_no_jail_left();
}

// 1b. A server handed the user's path that only reads it attempted nothing.
#[test]
fn reading_the_hidden_original_is_no_attempt() {
    let scene = Scene::new();
    let db = scene.outside.join("app.db");
    rusqlite::Connection::open(&db)
        .and_then(|c| c.execute_batch("CREATE TABLE notes(body TEXT);"))
        .expect("seed");
    let store = format!("db=sqlite:{}", db.display());
    let reader = hostile("store_writer.py");
    let path = db.to_string_lossy().into_owned();
    let mark = marker("reader");
    let out = scene.run(
        &audit_args(&["--store", &store], &[&reader, "--read", &path, &mark]),
        LIMIT,
    );
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    // It read the decoy (empty: no table), not the user's data.
    let answer = first_answer(&report);
    assert!(
        answer.contains(&format!("read {path}: 0 tables")),
        "{answer}"
    );
    assert!(
        !finding_kinds(&report).contains(&"original-store-write-attempt".to_owned()),
        "{:#}",
        report["findings"]
    );
    assert_eq!(
        common::check(&report, "EFF-01", "peek")["verdict"],
        "pass",
        "{report:#}"
    );
    assert_eq!(out.code, Some(0), "{:#}", report["findings"]);
    assert_no_process_left(&mark);
    scene.assert_no_jail_left();
}

// 1c. Without bubblewrap no decoy can be placed: Landlock still refuses the
// write, and the report says that a refused attempt is not reported.
#[test]
fn without_bubblewrap_the_report_says_refused_attempts_are_not_reported() {
    let scene = Scene::new();
    let db = scene.outside.join("app.db");
    rusqlite::Connection::open(&db)
        .and_then(|c| c.execute_batch("CREATE TABLE notes(body TEXT);"))
        .expect("seed");
    let before = digest_file(&db);
    // A PATH with python3 and nothing else: no bwrap on it.
    let bin = scene.outside.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let python = Path::new("/usr/bin/python3")
        .canonicalize()
        .expect("python3 is installed");
    std::os::unix::fs::symlink(&python, bin.join("python3")).expect("link");
    let store = format!("db=sqlite:{}", db.display());
    let writer = hostile("store_writer.py");
    let path = db.to_string_lossy().into_owned();
    let mark = marker("nobwrap");
    let args = audit_args(&["--store", &store], &[&writer, &path, &mark]);
    let child = scene
        .command(&args)
        .env("PATH", &bin)
        .spawn()
        .expect("mcp-witness runs");
    let out = finish(child, LIMIT);
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    assert_eq!(digest_file(&db), before, "{report:#}");
    let mount = layer(&report, "mount-namespace");
    assert_eq!(mount["held"], false, "{mount:#}");
    let landlock = layer(&report, "landlock-fs");
    assert_eq!(landlock["held"], true, "{landlock:#}");
    assert!(
        landlock["detail"]
            .as_str()
            .is_some_and(|d| d.contains("a write it refuses is not reported")),
        "{landlock:#}"
    );
    assert!(
        first_answer(&report).contains(&format!("could not write {path}")),
        "{}",
        first_answer(&report)
    );
    assert!(
        !finding_kinds(&report).contains(&"original-store-write-attempt".to_owned()),
        "{:#}",
        report["findings"]
    );
    assert_no_process_left(&mark);
    scene.assert_no_jail_left();
}

// 2. A symbolic link in a filesystem store does not lead out of the jail.
#[test]
fn a_link_in_a_store_does_not_lead_out() {
    let scene = Scene::new();
    let target = scene.outside.join("real.txt");
    std::fs::write(&target, "the user's file\n").expect("target");
    let tree = scene.outside.join("tree");
    std::fs::create_dir_all(&tree).expect("tree");
    std::os::unix::fs::symlink(&target, tree.join("link")).expect("link");
    let store = format!("files=fs:{}", tree.display());
    let writer = hostile("symlink_writer.py");
    let out = scene.run(
        &audit_args(&["--store", &store], &[&writer, "{files}"]),
        LIMIT,
    );
    let report = out.report();
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("the user's file\n"),
        "written through the link: {report:#}"
    );
    assert!(
        finding_kinds(&report).contains(&"store-copy".to_owned()),
        "the link is reported: {:#}",
        report["findings"]
    );
    // The write landed in the jail, where it was seen: the read-only tool fails EFF-01.
    assert_eq!(
        common::check(&report, "EFF-01", "tidy")["verdict"],
        "fail",
        "{report:#}"
    );
    assert_eq!(out.code, Some(1));
    scene.assert_no_jail_left();
}

// 3. Writes outside the jail (and root's attempts to make them possible) are refused.
#[test]
fn writes_outside_the_jail_are_refused() {
    let scene = Scene::new();
    let target = scene.outside.join("written.txt");
    let writer = hostile("outside_writer.py");
    let path = target.to_string_lossy().into_owned();
    let dir = tempfile::tempdir().expect("out dir");
    let out_dir = dir.path().to_string_lossy().into_owned();
    let out = scene.run(&audit_args(&["--out", &out_dir], &[&writer, &path]), LIMIT);
    let report = out.report();
    assert!(
        !target.exists(),
        "a write outside the jail happened: {report:#}"
    );
    assert_eq!(report["isolation"]["level"], "contained");
    let page = std::fs::read_to_string(dir.path().join("report.html")).expect("page");
    assert!(
        page.contains("Writes outside the jail were refused by the sandbox"),
        "the limits say what held"
    );
    scene.assert_no_jail_left();
}

// 4. The network namespace cannot be left, root or not.
#[test]
fn the_network_namespace_cannot_be_left() {
    let scene = Scene::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port().to_string();
    let escape = hostile("netns_escape.py");
    let out = scene.run(&audit_args(&[], &[&escape, &port]), LIMIT);
    let report = out.report();
    let reached = listener.accept().is_ok();
    assert!(
        !reached,
        "the server reached the host's loopback: {:#}",
        report["calls"]
    );
    assert!(
        isolation_held(&report, "network-namespace"),
        "{:#}",
        report["isolation"]
    );
    assert!(
        report["calls"][0]["response"]
            .to_string()
            .contains("could not connect"),
        "{:#}",
        report["calls"][0]
    );
    scene.assert_no_jail_left();
}

// 5a. A child that calls setsid does not outlive the audit, nor recreate the jail.
#[test]
fn a_setsid_child_does_not_outlive_the_audit() {
    let scene = Scene::new();
    let mark = marker("setsid");
    let survivor = hostile("setsid_survivor.py");
    let out = scene.run(&audit_args(&[], &[&survivor, &mark]), LIMIT);
    let _ = out.report();
    assert!(!out.killed);
    assert_no_process_left(&mark);
    std::thread::sleep(Duration::from_millis(300));
    scene.assert_no_jail_left();
}

/// Starts an audit of a server that hangs mid-call after starting a setsid
/// survivor, and waits until the survivor runs.
fn start_hanging_audit(scene: &Scene, mark: &str, out_dir: &str) -> Child {
    let survivor = hostile("setsid_survivor.py");
    let args = audit_args(&["--out", out_dir], &[&survivor, mark, "hang"]);
    let child = scene.command(&args).spawn().expect("mcp-witness runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !processes_with(mark).iter().any(|p| p.contains("recreated")) {
        assert!(Instant::now() < deadline, "the survivor never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn signal(child: &Child, signal: Signal) {
    let _ = kill_process(Pid::from_child(child), signal);
}

// 5b. SIGTERM, SIGINT and SIGHUP end the audit as incomplete, report written, nothing left.
#[test]
fn a_signal_ends_the_audit_cleanly() {
    for (sig, name) in [
        (Signal::TERM, "SIGTERM"),
        (Signal::INT, "SIGINT"),
        (Signal::HUP, "SIGHUP"),
    ] {
        let scene = Scene::new();
        let mark = marker(&name.to_lowercase());
        let dir = tempfile::tempdir().expect("out dir");
        let out_dir = dir.path().to_string_lossy().into_owned();
        let child = start_hanging_audit(&scene, &mark, &out_dir);
        signal(&child, sig);
        let out = finish(child, Duration::from_secs(15));
        assert!(!out.killed, "{name}: still running after 15 s");
        assert_eq!(out.code, Some(3), "{name}: {}", out.stderr);
        let written =
            std::fs::read_to_string(dir.path().join("audit.json")).expect("report written");
        let report: Value = serde_json::from_str(&written).expect("JSON");
        assert_eq!(report["complete"], false);
        assert!(
            report["incomplete_reason"]
                .as_str()
                .is_some_and(|r| r.starts_with(&format!("interrupted by {name}"))),
            "{name}: {:#}",
            report["incomplete_reason"]
        );
        assert!(dir.path().join("report.html").exists());
        assert_no_process_left(&mark);
        std::thread::sleep(Duration::from_millis(300));
        scene.assert_no_jail_left();
    }
}

// 5c. A second signal exits at once, still leaving nothing behind.
#[test]
fn a_second_signal_exits_at_once() {
    let scene = Scene::new();
    let mark = marker("twice");
    let dir = tempfile::tempdir().expect("out dir");
    let child = start_hanging_audit(&scene, &mark, &dir.path().to_string_lossy());
    signal(&child, Signal::TERM);
    signal(&child, Signal::INT);
    let out = finish(child, Duration::from_secs(10));
    assert!(!out.killed);
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert_no_process_left(&mark);
    std::thread::sleep(Duration::from_millis(300));
    scene.assert_no_jail_left();
}

// 5d. SIGKILL cannot be handled: the sandbox dies with the auditor, and the
// jail left in TMPDIR is removed by the next audit on the machine.
#[test]
fn a_jail_stranded_by_sigkill_is_removed_by_the_next_audit() {
    let scene = Scene::new();
    let mark = marker("sigkill");
    let dir = tempfile::tempdir().expect("out dir");
    let child = start_hanging_audit(&scene, &mark, &dir.path().to_string_lossy());
    signal(&child, Signal::KILL);
    let out = finish(child, Duration::from_secs(10));
    assert!(!out.killed, "SIGKILL did not end the auditor");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&mark).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_no_process_left(&mark);
    let stranded: Vec<PathBuf> = std::fs::read_dir(&scene.tmp)
        .expect("tmp")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(stranded.len(), 1, "one jail stays behind: {stranded:?}");
    // A jail is swept only when it is over a minute old (a starting auditor
    // has not locked its own yet); age this one rather than wait.
    let long_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(&stranded[0])
        .and_then(|f| f.set_times(std::fs::FileTimes::new().set_modified(long_ago)))
        .expect("age the stranded jail");
    let quiet = hostile("quiet.py");
    let next = scene.run(&audit_args(&[], &[&quiet]), LIMIT);
    assert!(!next.killed, "{}", next.stderr);
    assert!(!stranded[0].exists(), "the next audit removed it");
    scene.assert_no_jail_left();
}

// 6. A named pipe (or a socket) in a filesystem store is skipped, never waited for.
#[test]
fn a_fifo_in_a_store_is_skipped_not_waited_for() {
    let scene = Scene::new();
    let tree = scene.outside.join("tree");
    std::fs::create_dir_all(&tree).expect("tree");
    std::fs::write(tree.join("a.txt"), "a").expect("file");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        tree.join("pipe"),
        rustix::fs::Mode::from(0o600),
    )
    .expect("mkfifo");
    let _socket = std::os::unix::net::UnixListener::bind(tree.join("sock")).expect("socket");
    let store = format!("files=fs:{}", tree.display());
    let quiet = hostile("quiet.py");
    let out = scene.run(
        &audit_args(&["--store", &store], &[&quiet, "{files}"]),
        Duration::from_secs(30),
    );
    assert!(!out.killed, "the audit hung on the FIFO");
    let report = out.report();
    assert_eq!(out.code, Some(0), "{report:#}");
    let copy: Vec<String> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "store-copy")
        .filter_map(|f| f["detail"].as_str().map(str::to_owned))
        .collect();
    assert!(copy.iter().any(|d| d.contains("pipe: a FIFO")), "{copy:?}");
    assert!(
        copy.iter().any(|d| d.contains("sock: a socket")),
        "{copy:?}"
    );
    scene.assert_no_jail_left();
}

// 8. No bare secret and no active markup reaches any output.
#[test]
fn no_secret_and_no_markup_reaches_any_output() {
    const SECRETS: [&str; 4] = [
        "sk-live-9fK2mQ7xL4pR8tZ1vB6nHw3J",
        "AKIAZ7Q3WITNESS4TEST",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJob3N0aWxlIn0",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ];
    let scene = Scene::new();
    let leaker = hostile("secret_leaker.py");
    let dir = tempfile::tempdir().expect("out dir");
    let out_dir = dir.path().to_string_lossy().into_owned();
    let json = scene.run(&audit_args(&["--out", &out_dir], &[&leaker]), LIMIT);
    let _ = json.report();
    let mut text_args = audit_args(&[], &[&leaker]);
    text_args[2] = "text";
    let text = scene.run(&text_args, LIMIT);
    let page = std::fs::read_to_string(dir.path().join("report.html")).expect("page");
    let file = std::fs::read_to_string(dir.path().join("audit.json")).expect("audit.json");
    for (what, output) in [
        ("stdout (json)", &json.stdout),
        ("stderr", &json.stderr),
        ("stdout (text)", &text.stdout),
        ("report.html", &page),
        ("audit.json", &file),
    ] {
        for secret in SECRETS {
            assert!(!output.contains(secret), "{secret} reached {what}");
        }
    }
    assert!(
        file.contains("[secret blake3:"),
        "the secrets are there as digests"
    );
    for markup in ["<script", "<img"] {
        assert!(!page.contains(markup), "active markup in report.html");
    }
    scene.assert_no_jail_left();
}

// 10a. A string id is not the answer to a numeric request.
#[test]
fn a_string_id_is_not_the_answer_to_a_numeric_request() {
    let scene = Scene::new();
    let decoy = hostile("decoy_id.py");
    let out = scene.run(&audit_args(&["--era", "legacy"], &[&decoy]), LIMIT);
    let report = out.report();
    assert_eq!(
        report["era"]["server_info"]["name"], "real",
        "{:#}",
        report["era"]
    );
    assert!(finding_kinds(&report).contains(&"unexpected-response".to_owned()));
    scene.assert_no_jail_left();
}

// 10b. Deep but valid JSON is read; past the bound it is a finding, at once.
#[test]
fn deep_json_is_read_or_refused_without_waiting() {
    let scene = Scene::new();
    let deep = hostile("deep_json.py");
    let mut args = audit_args(&[], &[&deep]);
    args[4] = "30000";
    let out = scene.run(&args, LIMIT);
    let report = out.report();
    assert!(
        out.elapsed < Duration::from_secs(20),
        "waited {:?}",
        out.elapsed
    );
    assert_eq!(
        report["complete"], true,
        "{:#}",
        report["incomplete_reason"]
    );
    let status = |tool: &str| {
        report["calls"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["tool"] == tool)
            .map(|c| c["outcome"]["status"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(status("deep"), "ok");
    assert_eq!(status("deeper"), "rpc-error");
    let kinds = finding_kinds(&report);
    assert!(kinds.contains(&"json-too-deep".to_owned()), "{kinds:?}");
    assert!(!kinds.contains(&"stdout-not-json".to_owned()), "{kinds:?}");
    scene.assert_no_jail_left();
}

// 10c. A reader that closes the pipe early ends the output quietly.
#[test]
fn a_closed_pipe_ends_quietly() {
    let scene = Scene::new();
    let many = hostile("many_tools.py");
    let mut child = scene
        .command(&["plan", "--format", "json", "--", "python3", &many])
        .spawn()
        .expect("runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a line");
    // The reader is gone (like `| head -1`); the plan is far from written.
    let out = finish(child, LIMIT);
    assert!(!out.killed);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    scene.assert_no_jail_left();
}

// 10d. A long audit shows its progress, and can be stopped.
#[test]
fn a_long_audit_shows_progress() {
    let scene = Scene::new();
    let many = hostile("many_tools.py");
    let args = audit_args(&["--progress", "lines"], &[&many]);
    let mut child = scene.command(&args).spawn().expect("runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let started = Instant::now();
    let mut seen = Vec::new();
    while let Some(Ok(line)) = lines.next() {
        seen.push(line.clone());
        if line.contains("step ") {
            break;
        }
        assert!(started.elapsed() < LIMIT, "no progress: {seen:?}");
    }
    assert!(
        seen.iter()
            .any(|l| l.contains("catalog: 10000 tools in 20 page(s)")),
        "{seen:?}"
    );
    assert!(seen.iter().any(|l| l.contains("step ")), "{seen:?}");
    signal(&child, Signal::TERM);
    // Keep draining stderr so the auditor never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    child.stderr = None;
    // The interrupted audit still writes its whole report, all 10,000 tools
    // of it (about 28 MB): seconds on an idle machine, many more while the
    // rest of the suite runs beside it. A bound, not a speed goal.
    let out = finish(child, LIMIT);
    assert_eq!(out.code, Some(3));
    scene.assert_no_jail_left();
}

// The Landlock layer on its own (as an audit gets it where bubblewrap is
// missing): the helper refuses writes outside its directory, TCP connects
// and binds, and lets writes inside through.
#[test]
fn landlock_alone_refuses_writes_outside_and_tcp() {
    let scene = Scene::new();
    let inside = scene.tmp.join("jail");
    std::fs::create_dir_all(&inside).expect("jail");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let script = format!(
        "import socket\n\
         open({inside:?} + '/ok', 'w').write('in')\n\
         try:\n    open({outside:?} + '/no', 'w').write('out')\n\
         except OSError as e:\n    print('write refused', e.errno)\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n\
         except OSError as e:\n    print('connect refused', e.errno)\n\
         try:\n    socket.create_server(('127.0.0.1', 0))\n\
         except OSError as e:\n    print('bind refused', e.errno)\n",
        inside = inside.to_string_lossy(),
        outside = scene.outside.to_string_lossy(),
    );
    let dir = inside.to_string_lossy().into_owned();
    let out = scene.run(
        &[
            "sandbox-exec",
            "--write",
            &dir,
            "--fs",
            "--net-bind",
            "--net-connect",
            "--scope",
            "--",
            "python3",
            "-c",
            &script,
        ],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(inside.join("ok").exists());
    assert!(!scene.outside.join("no").exists());
    assert!(out.stdout.contains("write refused 13"), "{}", out.stdout);
    assert!(out.stdout.contains("connect refused 13"), "{}", out.stdout);
    assert!(out.stdout.contains("bind refused 13"), "{}", out.stdout);
    assert!(listener.accept().is_err(), "the connection got through");
}

// 14. Resource bounds: a server cannot take the machine's memory, processes
// or disk. Each bound is held by a cgroup where one can be made (root here),
// else by the helper's resource limits (an ordinary user); the test asserts
// which, and what the server saw.

fn layer<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["isolation"]["layers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["layer"] == name)
        .unwrap_or_else(|| panic!("no {name} layer: {:#}", report["isolation"]))
}

/// What the first call of the audit answered, as text.
fn first_answer(report: &Value) -> String {
    report["calls"][0]["response"].to_string()
}

fn bound_findings(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "resource-limit")
        .filter_map(|f| f["detail"].as_str().map(str::to_owned))
        .collect()
}

/// The cgroups an auditor with pid `pid` made beneath this process's own,
/// still there.
fn cgroups_left(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("mcp-witness-{pid}-");
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut left = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(names), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        for name in names.split(',').filter(|n| ["memory", "pids"].contains(n)) {
            let dir = Path::new("/sys/fs/cgroup")
                .join(name)
                .join(path.trim_start_matches('/'));
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    left.push(entry.path());
                }
            }
        }
    }
    left
}

fn assert_nothing_left(scene: &Scene, out: &Outcome, mark: &str) {
    assert_no_process_left(mark);
    scene.assert_no_jail_left();
    let cgroups = cgroups_left(out.pid);
    assert!(cgroups.is_empty(), "cgroups left: {cgroups:?}");
}

#[test]
fn a_memory_hog_is_held_at_the_memory_bound() {
    let scene = Scene::new();
    let mark = marker("hog");
    let hog = hostile("mem_hog.py");
    let out = scene.run(&audit_args(&["--memory", "256M"], &[&hog, &mark]), LIMIT);
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    let memory = layer(&report, "memory");
    assert_eq!(memory["held"], true, "{memory:#}");
    let detail = memory["detail"].as_str().unwrap_or_default();
    let answer = first_answer(&report);
    if detail.starts_with("memory cgroup") {
        // The kernel ended the hog at 256 MiB: its call ended there, with a
        // finding, and the audit went on with a fresh server.
        assert!(detail.contains("256 MiB"), "{detail}");
        let findings = bound_findings(&report);
        assert!(
            findings.iter().any(|f| f.starts_with("memory 256 MiB")),
            "{:#}",
            report["findings"]
        );
        assert!(
            !report["restarts"].as_array().is_none_or(Vec::is_empty),
            "the server is started again: {:#}",
            report["restarts"]
        );
        assert!(!answer.contains("touched 6144 MiB"), "{answer}");
    } else {
        assert!(detail.starts_with("RLIMIT_DATA: 256 MiB"), "{detail}");
        // The allocation past the bound was refused inside the server.
        assert!(answer.contains("refused after"), "{answer}");
    }
    assert_nothing_left(&scene, &out, &mark);
}

#[test]
fn a_fork_flood_is_held_at_the_process_bound() {
    let scene = Scene::new();
    let mark = marker("flood");
    let flood = hostile("fork_flood.py");
    let out = scene.run(&audit_args(&["--processes", "64"], &[&flood, &mark]), LIMIT);
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    let processes = layer(&report, "processes");
    assert_eq!(processes["held"], true, "{processes:#}");
    let detail = processes["detail"].as_str().unwrap_or_default();
    let answer = first_answer(&report);
    // Refused with EAGAIN (11) before the 64th process of the sandbox.
    let started: u32 = answer
        .split("started ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {answer}"));
    assert!(started < 64, "{answer}");
    assert!(answer.contains("refused: 11"), "{answer}");
    if detail.starts_with("pids cgroup") {
        let findings = bound_findings(&report);
        assert!(
            findings.iter().any(|f| f.starts_with("processes 64")),
            "{:#}",
            report["findings"]
        );
    } else {
        assert!(
            detail.starts_with("RLIMIT_NPROC inside the sandbox's user namespace: 64"),
            "{detail}"
        );
    }
    assert_nothing_left(&scene, &out, &mark);
}

#[test]
fn a_disk_filler_is_held_at_the_disk_bound() {
    let scene = Scene::new();
    let mark = marker("fill");
    let filler = hostile("disk_filler.py");
    let out = scene.run(&audit_args(&["--disk", "64M"], &[&filler, &mark]), LIMIT);
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    let disk = layer(&report, "disk");
    assert_eq!(disk["held"], true, "{disk:#}");
    assert!(
        disk["detail"].as_str().is_some_and(
            |d| d.contains("RLIMIT_FSIZE: no file the server writes grows past 64 MiB")
        ),
        "{disk:#}"
    );
    // EFBIG (27) at exactly the bound; the file it made is still an effect
    // of a read-only tool.
    let answer = first_answer(&report);
    assert!(
        answer.contains("wrote 64 MiB, refused: errno 27"),
        "{answer}"
    );
    assert_eq!(common::check(&report, "EFF-01", "fill")["verdict"], "fail");
    assert_nothing_left(&scene, &out, &mark);
}

/// MiB written to `place` as the spreading filler answers it.
fn written_to(answer: &str, place: &str) -> u64 {
    answer
        .split(&format!("{place}: wrote "))
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {place} in {answer}"))
}

#[test]
fn a_disk_filler_spreading_small_files_is_held_at_the_jails_total() {
    let scene = Scene::new();
    let mark = marker("spread");
    let filler = hostile("disk_filler.py");
    let out = scene.run(
        // 256 MiB: four times the bound, and quick to write where nothing
        // bounds the total.
        &audit_args(&["--disk", "64M"], &[&filler, &mark, "spread=256"]),
        LIMIT,
    );
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    let disk = layer(&report, "disk");
    assert_eq!(disk["held"], true, "{disk:#}");
    let detail = disk["detail"].as_str().unwrap_or_default();
    let answer = first_answer(&report);
    let jail = written_to(&answer, "home") + written_to(&answer, "tmpdir");
    if detail.starts_with(
        "HOME, TMPDIR, the working directory and all else the server makes in the jail are one tmpfs of 64 MiB",
    ) {
        // Files of 16 MiB, each under RLIMIT_FSIZE: the jail's tmpfs held
        // their total, with ENOSPC (28), wherever in the jail they were.
        assert!(jail <= 64, "{answer}");
        assert!(jail >= 48, "the bound is the one given: {answer}");
        assert!(
            answer.contains("home: wrote") && answer.contains("errno 28"),
            "{answer}"
        );
        // bubblewrap's /tmp is a tmpfs of its own, of the same size.
        if isolation_held(&report, "mount-namespace") {
            assert!(written_to(&answer, "tmp") <= 64, "{answer}");
        }
    } else {
        // Where this process may not mount (an ordinary user), the layer
        // says the jail's total is not bounded, and the writes went through.
        assert!(detail.contains("their total is not bounded"), "{detail}");
        assert!(jail > 64, "{answer}");
    }
    assert_eq!(common::check(&report, "EFF-01", "fill")["verdict"], "fail");
    assert_nothing_left(&scene, &out, &mark);
}

#[test]
fn a_unix_socket_outside_the_jail_cannot_be_reached() {
    use std::os::unix::net::UnixListener;
    let scene = Scene::new();
    let mark = marker("reach");
    // An ssh-agent-like socket in a temporary directory of the auditor's user.
    let agent = tempfile::tempdir().expect("tempdir");
    let path = agent.path().join("agent.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let reacher = hostile("unix_reacher.py");
    let socket = path.to_string_lossy().into_owned();
    let out = scene.run(&audit_args(&[], &[&reacher, &socket, &mark]), LIMIT);
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    assert!(
        listener.accept().is_err(),
        "the server reached the socket: {report:#}"
    );
    let answer = first_answer(&report);
    assert!(
        answer.contains("could not reach the socket: No such file or directory"),
        "{answer}"
    );
    let view = layer(&report, "mount-namespace");
    assert_eq!(view["held"], true);
    assert!(
        view["detail"].as_str().is_some_and(|d| d
            .contains("temporary and home directories, /run and other audits' jails are absent")),
        "{view:#}"
    );
    assert_nothing_left(&scene, &out, &mark);
}

#[test]
fn another_audits_jail_and_the_auditors_temporary_files_are_not_visible() {
    let scene = Scene::new();
    // A file beside the auditor's jails (as another audit's would be).
    let beside = scene.tmp.join("mcp-witness-jail-other");
    std::fs::create_dir_all(&beside).expect("beside");
    std::fs::write(beside.join("secret.txt"), "another audit's store\n").expect("write");
    let reader = hostile("unix_reacher.py");
    let probe = beside.join("secret.txt").to_string_lossy().into_owned();
    let out = scene.run(&audit_args(&[], &[&reader, &probe]), LIMIT);
    let report = out.report();
    // Connecting to a regular file that exists would say "Connection
    // refused"; absent, it is not there at all.
    let answer = first_answer(&report);
    assert!(answer.contains("No such file or directory"), "{answer}");
    std::fs::remove_dir_all(&beside).expect("cleanup");
    scene.assert_no_jail_left();
}

/// A file planted under the host's /etc for one test, removed after it.
struct Planted(PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn of_etc_a_server_reads_what_programs_need_and_not_shadow_or_a_planted_secret() {
    let scene = Scene::new();
    let mark = marker("etc");
    // Planted where only an auditor that may write /etc (root) can.
    let secret = PathBuf::from(format!("/etc/witness-secret-test-{}", std::process::id()));
    let planted = std::fs::write(&secret, "a key the server must not see\n")
        .ok()
        .map(|()| Planted(secret.clone()));
    let reader = hostile("etc_reader.py");
    let secret_arg = secret.to_string_lossy().into_owned();
    let out = scene.run(
        &audit_args(
            &[],
            &[&reader, "/etc/shadow", &secret_arg, "/etc/passwd", &mark],
        ),
        LIMIT,
    );
    let report = out.report();
    assert!(!out.killed, "took {:?}", out.elapsed);
    let answer = first_answer(&report);
    let view = layer(&report, "mount-namespace");
    if view["held"] == true {
        // Absent (ENOENT), not merely refused: neither has a name inside.
        assert!(answer.contains("/etc/shadow: errno 2"), "{answer}");
        if planted.is_some() {
            assert!(
                answer.contains(&format!("{secret_arg}: errno 2")),
                "{answer}"
            );
        }
        // What programs need to run is there.
        assert!(answer.contains("/etc/passwd: read "), "{answer}");
        assert!(
            view["detail"]
                .as_str()
                .is_some_and(|d| d.contains("of /etc only what programs read to run")),
            "{view:#}"
        );
    } else {
        // Without bubblewrap nothing narrows the view: the layer says why.
        assert!(
            view["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{view:#}"
        );
    }
    drop(planted);
    assert!(!secret.exists());
    assert_nothing_left(&scene, &out, &mark);
}
