//! A store's jailed copy as a copy-on-write view (overlayfs): the server
//! writes, deletes and renames through it; the originals stay as they were,
//! the decoys still take the writes aimed at the originals, and the
//! observers see what they saw in a byte copy. Where the view is not to be
//! had (here forced with `MCP_WITNESS_JAIL_COPY`), the store is copied and
//! the report's isolation detail says so.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common;

/// The stores' originals, a private TMPDIR for the auditor's jails.
struct Scene {
    _dir: tempfile::TempDir,
    tmp: PathBuf,
    db: PathBuf,
    tree: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = dir.path().join("tmp");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&tmp).expect("tmp");
        let tree = outside.join("files");
        std::fs::create_dir_all(tree.join("sub")).expect("tree");
        for (path, text) in [
            ("a.txt", "the user's a\n"),
            ("b.txt", "the user's b\n"),
            ("c.txt", "the user's c\n"),
            ("sub/d.txt", "the user's d\n"),
        ] {
            std::fs::write(tree.join(path), text).expect("write");
        }
        let db = outside.join("app.db");
        let conn = rusqlite::Connection::open(&db).expect("db");
        conn.execute_batch(
            "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
             INSERT INTO notes(body) VALUES ('one'), ('two'), ('three');",
        )
        .expect("seed");
        drop(conn);
        Self {
            _dir: dir,
            tmp,
            db,
            tree,
        }
    }

    /// Every file of the originals with its bytes, mode and times, and
    /// every name in the stores' directory (nothing beside the database
    /// either: no journal, no WAL, no table added).
    fn originals(&self) -> Vec<(String, Vec<u8>, u32, i64, i64)> {
        let mut files = Vec::new();
        let mut dirs = vec![self.tree.parent().expect("outside").to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("read_dir") {
                let path = entry.expect("entry").path();
                let meta = std::fs::symlink_metadata(&path).expect("metadata");
                let bytes = if meta.is_file() {
                    std::fs::read(&path).expect("read")
                } else {
                    dirs.push(path.clone());
                    Vec::new()
                };
                let name = path.display().to_string();
                files.push((name, bytes, meta.mode(), meta.mtime(), meta.mtime_nsec()));
            }
        }
        files.sort();
        files
    }

    fn audit(&self, copy: bool) -> (Option<i32>, Value, String) {
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/view_churn.py");
        let mark = format!("witness-views-{}", std::process::id());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
        cmd.args(["audit", "--format", "json", "--timeout-ms", "5000"])
            .arg("--store")
            .arg(format!("db=sqlite:{}", self.db.display()))
            .arg("--store")
            .arg(format!("files=fs:{}", self.tree.display()))
            .args(["--", "python3"])
            .arg(&server)
            .args(["{db}", "{files}"])
            .arg(&self.db)
            .arg(&self.tree)
            .arg(&mark)
            .env("TMPDIR", &self.tmp)
            .env_remove("MCP_WITNESS_JAIL_COPY")
            .stdin(Stdio::null());
        if copy {
            cmd.env("MCP_WITNESS_JAIL_COPY", "1");
        }
        let out = cmd.output().expect("mcp-witness runs");
        let report = common::stdout_json(&out);
        let left: Vec<_> = std::fs::read_dir(&self.tmp)
            .expect("tmp")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), report, stderr)
    }
}

fn detail(report: &Value) -> &str {
    report["isolation"]["detail"].as_str().unwrap_or_default()
}

fn first_answer(report: &Value) -> String {
    report["calls"][0]["response"].to_string()
}

/// Every effect of every call, as the report has them.
fn effects(report: &Value) -> Vec<Value> {
    report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["effects"].clone())
        .collect()
}

#[test]
fn a_server_writing_deleting_and_renaming_through_a_view_leaves_the_originals_as_they_were() {
    let scene = Scene::new();
    let before = scene.originals();
    let (code, report, stderr) = scene.audit(false);
    assert_eq!(scene.originals(), before, "an original changed: {report:#}");
    assert!(
        detail(&report).contains("stores db, files jailed as copy-on-write views"),
        "{}\n{stderr}",
        detail(&report)
    );
    let answer = first_answer(&report);
    assert!(
        answer.contains("tree changed") && answer.contains("db changed"),
        "{answer}"
    );
    // The observers read the views as they read copies: every change.
    let ops = common::ops(&report, "churn");
    for expected in [
        ("file/a.txt", "update"),
        ("file/b.txt", "delete"),
        ("file/c.txt", "delete"),
        ("file/c-renamed.txt", "create"),
        ("dir/sub", "delete"),
        ("dir/sub-renamed", "create"),
        ("file/sub/d.txt", "delete"),
        ("file/sub-renamed/d.txt", "create"),
        ("file/new.txt", "create"),
        ("notes/1", "update"),
        ("notes/2", "delete"),
        ("notes/4", "create"),
    ] {
        assert!(
            ops.iter()
                .any(|(object, op)| (object.as_str(), op.as_str()) == expected),
            "{expected:?} not in {ops:?}"
        );
    }
    // The writes aimed at the originals landed in the decoys, and are the
    // finding.
    let attempted: Vec<&str> = report["calls"][0]["original_writes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let db = scene.db.display().to_string();
    let in_tree = scene.tree.join("owned_by_hostile_server.txt");
    assert!(
        attempted.contains(&db.as_str()) && attempted.contains(&&*in_tree.to_string_lossy()),
        "{:#}",
        report["calls"][0]
    );
    assert_eq!(code, Some(1), "the read-only tool wrote: {stderr}");
}

#[test]
fn without_a_view_the_stores_are_copied_the_report_says_so_and_the_effects_are_the_same() {
    let scene = Scene::new();
    let before = scene.originals();
    let (code, copied, stderr) = scene.audit(true);
    assert_eq!(scene.originals(), before, "an original changed");
    assert!(
        detail(&copied).contains(
            "stores copied into the jail whole: db (the copy was asked for with MCP_WITNESS_JAIL_COPY)"
        ) && !detail(&copied).contains("copy-on-write"),
        "{}\n{stderr}",
        detail(&copied)
    );
    assert_eq!(code, Some(1), "{stderr}");
    let (_, viewed, _) = scene.audit(false);
    assert!(detail(&viewed).contains("copy-on-write views"));
    assert!(!effects(&copied).is_empty());
    assert_eq!(effects(&viewed), effects(&copied));
    assert_eq!(
        copied["calls"][0]["original_writes"],
        viewed["calls"][0]["original_writes"]
    );
}

/// SQLite's WAL and shared memory through a view: a server that commits
/// without pause to a database the user already had, in WAL mode, with a
/// WAL beside it, is observed as consistently as in a copy.
#[test]
fn a_busy_wal_writer_on_an_existing_database_is_observed_through_its_view() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("busy.db");
    let conn = rusqlite::Connection::open(&db).expect("db");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
         CREATE TABLE ticks(id INTEGER PRIMARY KEY, at TEXT, pad BLOB);
         INSERT INTO ticks(at) VALUES ('the user''s');",
    )
    .expect("seed");
    // Held open, so the WAL stays beside the database: the view carries it.
    assert!(dir.path().join("busy.db-wal").exists());
    let wal_before = std::fs::read(dir.path().join("busy.db-wal")).expect("wal");
    let db_before = std::fs::read(&db).expect("db");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/obs_busy_writer.py");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--format", "json", "--store"])
        .arg(format!("db=sqlite:{}", db.display()))
        .args(["--", "python3"])
        .arg(&server)
        .arg("{db}")
        .env("TMPDIR", tmp.path())
        .env_remove("MCP_WITNESS_JAIL_COPY")
        .stdin(Stdio::null())
        .output()
        .expect("mcp-witness runs");
    let report = common::stdout_json(&out);
    assert!(
        report["complete"] == true,
        "incomplete: {}",
        report["incomplete_reason"]
    );
    assert!(
        detail(&report).contains("store db jailed as a copy-on-write view"),
        "{}",
        detail(&report)
    );
    let seen = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["background"].as_array().cloned().unwrap_or_default())
        .filter(|e| {
            e["object"]
                .as_str()
                .is_some_and(|o| o.starts_with("ticks/"))
        })
        .count();
    assert!(seen > 0, "no row of the writer was seen: {report:#}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(&db).expect("db"), db_before);
    assert_eq!(
        std::fs::read(dir.path().join("busy.db-wal")).expect("wal"),
        wal_before
    );
    drop(conn);
}
