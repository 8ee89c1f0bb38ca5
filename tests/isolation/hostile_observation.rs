//! Hostile servers against observation (issue 13, points 7 and 9): what a
//! server leaves in its stores must not choose what observing them costs,
//! and a server that never stops writing must still be observed
//! consistently. Each server is a few lines of Python in
//! `tests/hostile/obs_*.py`; each test asserts the outcome a user needs
//! (a finding or `incomplete` within a bound, never a hang) and that the
//! observer left nothing of its own behind.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn hostile(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs an audit with its own TMPDIR, killing it (and failing) past
/// `limit`. Gives the exit code, the report and how long it took.
fn audit(tmp: &Path, args: &[String], limit: Duration) -> (i32, Value, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp-witness starts");
    // Read while waiting: a report larger than a pipe buffer would
    // otherwise block the audit on its own stdout.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the audit was still running after {limit:?}: {args:?}");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("cannot wait for the audit: {e}"),
        }
    }
    let took = started.elapsed();
    let status = child.wait().expect("exit status");
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let report: Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )
    });
    (status.code().unwrap_or(-1), report, took)
}

/// The observer's private images live in the auditor's TMPDIR; none may
/// outlive the audit.
fn assert_no_images_left(tmp: &Path) {
    let left: Vec<PathBuf> = std::fs::read_dir(tmp)
        .map(|dir| {
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("witness-sqlite"))
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A disk bound past the 32 GiB sparse files below, so that these tests
/// hold the observer's budget, not the jail's bound (`hostile.rs` holds that).
const BEYOND_THE_FILE: &str = "64G";

fn python() -> String {
    "python3".into()
}

#[test]
fn a_32_gib_sparse_file_in_home_is_a_finding_not_a_minute_of_hashing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The jail's disk bound (RLIMIT_FSIZE, 1 GiB by default) would refuse
    // the file outright; raised, what is left to hold is the observer's budget.
    let args = common::s(&[
        "audit",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--disk",
        BEYOND_THE_FILE,
        "--",
    ])
    .into_iter()
    .chain([python(), hostile("obs_sparse_home.py")])
    .collect::<Vec<_>>();
    let (code, report, took) = audit(tmp.path(), &args, Duration::from_secs(60));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(code, 1, "the read-only tool created a file: EFF-01 fails");
    assert_eq!(report["complete"], true);
    let finding = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["detail"].as_str().is_some_and(|d| d.contains("huge.bin")))
        .unwrap_or_else(|| panic!("no finding about the sparse file: {}", report["findings"]));
    assert_eq!(finding["kind"], "observer-warning");
    let detail = finding["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("--max-observe-bytes"), "{detail}");
    assert!(detail.contains("34359738368 bytes"), "{detail}");
    let created: Vec<&str> = report["calls"][0]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str())
        .collect();
    assert_eq!(created, ["file/home/huge.bin"]);
    assert_no_images_left(tmp.path());
}

#[test]
fn a_store_made_a_32_gib_sparse_file_is_refused_not_copied() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.db");
    rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.execute_batch(
                "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'x');",
            )
        })
        .expect("store");
    let original = std::fs::read(&db).expect("read");
    let store = format!("db=sqlite:{}", db.display());
    let args = common::s(&[
        "audit",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--disk",
        BEYOND_THE_FILE,
        "--store",
        &store,
        "--",
    ])
    .into_iter()
    .chain([python(), hostile("obs_sparse_store.py"), "{db}".into()])
    .collect::<Vec<_>>();
    let (code, report, took) = audit(tmp.path(), &args, Duration::from_secs(60));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(code, 3, "{}", report["incomplete_reason"]);
    let reason = report["incomplete_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("cannot observe the stores: db: "),
        "{reason}"
    );
    assert!(reason.contains("--max-observe-bytes"), "{reason}");
    // The call and what the server said stay on record.
    assert_eq!(report["calls"][0]["tool"], "peek");
    assert_eq!(
        std::fs::read(&db).expect("read"),
        original,
        "the original is untouched"
    );
    assert_no_images_left(tmp.path());
}

#[test]
fn a_server_that_commits_without_pause_is_observed_consistently() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = format!("db=sqlite:{}", dir.path().join("busy.db").display());
    let args = common::s(&["audit", "--format", "json", "--store", &store, "--"])
        .into_iter()
        .chain([python(), hostile("obs_busy_writer.py"), "{db}".into()])
        .collect::<Vec<_>>();
    let (code, report, took) = audit(tmp.path(), &args, Duration::from_secs(90));
    assert!(
        report["complete"] == true,
        "incomplete after {took:?}: {}",
        report["incomplete_reason"]
    );
    // The writer's rows are seen: changes it also makes with no call in
    // flight, so its background, listed apart and charged to no call.
    assert_eq!(
        report["background"][0]["objects"],
        serde_json::json!(["ticks"]),
        "the idle controls learnt the writer's table"
    );
    let charged = |list: &str| {
        report["calls"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c[list].as_array().cloned().unwrap_or_default())
            .filter(|e| {
                e["object"]
                    .as_str()
                    .is_some_and(|o| o.starts_with("ticks/"))
            })
            .count()
    };
    assert!(charged("background") > 0, "no row of the writer was seen");
    assert_eq!(charged("effects"), 0, "the writer's rows are no call's");
    assert_eq!(code, 0, "read-only tools that only read pass");
    assert_no_images_left(tmp.path());
}

#[test]
fn an_observation_over_its_time_budget_ends_the_audit_incomplete() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    for n in 0..2_000 {
        let sub = dir.path().join(format!("d{}", n % 20));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(sub.join(format!("f{n}")), vec![b'x'; 4096]).expect("write");
    }
    let store = format!("files=fs:{}", dir.path().display());
    let args = common::s(&[
        "audit",
        "--format",
        "json",
        "--max-observe-ms",
        "1",
        "--store",
        &store,
        "--",
    ])
    .into_iter()
    .chain([python(), hostile("obs_sparse_home.py")])
    .collect::<Vec<_>>();
    let (code, report, took) = audit(tmp.path(), &args, Duration::from_secs(60));
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(code, 3);
    let reason = report["incomplete_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("cannot observe the stores: files: "),
        "{reason}"
    );
    assert!(
        reason.contains("time budget of 1 ms (--max-observe-ms)"),
        "{reason}"
    );
    assert!(
        report["calls"].as_array().is_some_and(Vec::is_empty),
        "no call was made"
    );
}
