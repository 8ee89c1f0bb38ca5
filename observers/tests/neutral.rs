//! Two promises every observer keeps, through the observation path an
//! audit uses (`Observer::observe`, incremental after the first):
//!
//! - a write that keeps a file's size and puts its mtime back (`utimes`)
//!   is still seen: content decides, and the ctime a write always moves is
//!   part of every stamp;
//! - observing leaves every byte, inode, time and mode of the store as it
//!   was, and adds no file beside it.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use witness_observers::fs::FsObserver;
use witness_observers::jsonl::JsonlObserver;
use witness_observers::sqlite::SqliteObserver;
use witness_observers::{Observer, Op};

/// Overwrites `path` in place with `bytes` (same length as before) and puts
/// its mtime back to what it was.
fn rewrite_keeping_size_and_mtime(path: &Path, at: u64, bytes: &[u8]) {
    let before = fs::metadata(path).unwrap();
    let mtime = before.modified().unwrap();
    let mut file = fs::OpenOptions::new().write(true).open(path).unwrap();
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(bytes).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    let after = fs::metadata(path).unwrap();
    assert_eq!(after.len(), before.len(), "size kept");
    assert_eq!(after.modified().unwrap(), mtime, "mtime put back");
}

fn changed_ids(observer: &mut dyn Observer) -> Vec<(String, Op)> {
    observer
        .observe(true)
        .unwrap()
        .delta
        .changes
        .into_iter()
        .map(|c| (c.object, c.op))
        .collect()
}

/// Whether to let the reference settle first: the stamp rule alone must
/// then see the write (its ctime moved), not only the clock-tick rule.
const SETTLE: [bool; 2] = [false, true];

#[test]
fn fs_sees_a_write_that_keeps_size_and_mtime() {
    for settle in SETTLE {
        for events in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.txt");
            fs::write(&path, b"aaaa").unwrap();
            let mut observer = FsObserver::new(dir.path());
            if !events {
                observer = observer.without_events();
            }
            observer.observe(false).unwrap();
            if settle {
                std::thread::sleep(Duration::from_millis(40));
            }
            rewrite_keeping_size_and_mtime(&path, 0, b"bbbb");
            assert_eq!(
                changed_ids(&mut observer),
                [("file/f.txt".to_string(), Op::Update)],
                "settle {settle}, events {events}"
            );
        }
    }
}

#[test]
fn jsonl_sees_a_write_that_keeps_size_and_mtime() {
    for settle in SETTLE {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        fs::write(&path, b"{\"type\":\"entity\",\"name\":\"A\",\"n\":1}\n").unwrap();
        let mut observer = JsonlObserver::new(&path);
        observer.observe(false).unwrap();
        if settle {
            std::thread::sleep(Duration::from_millis(40));
        }
        // `1` becomes `2`: same length, same mtime.
        rewrite_keeping_size_and_mtime(&path, 32, b"2");
        assert_eq!(
            changed_ids(&mut observer),
            [("entity/A".to_string(), Op::Update)],
            "settle {settle}"
        );
    }
}

#[test]
fn sqlite_sees_a_write_that_keeps_size_and_mtime() {
    for settle in SETTLE {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'aaaa');",
        )
        .unwrap();
        drop(conn);
        let mut observer = SqliteObserver::new(&path);
        observer.observe(false).unwrap();
        if settle {
            std::thread::sleep(Duration::from_millis(40));
        }
        // Patch the row's text in place, byte for byte, as a sneaky server
        // might: same size, same mtime, no SQLite involved.
        let bytes = fs::read(&path).unwrap();
        let at = bytes.windows(4).rposition(|w| w == b"aaaa").unwrap();
        rewrite_keeping_size_and_mtime(&path, at as u64, b"bbbb");
        assert_eq!(
            changed_ids(&mut observer),
            [("t/1".to_string(), Op::Update)],
            "settle {settle}"
        );
    }
}

#[derive(Debug, PartialEq)]
struct Physical {
    bytes: Option<Vec<u8>>,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    mode: u32,
}

fn physical(root: &Path) -> BTreeMap<PathBuf, Physical> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(
                path.clone(),
                Physical {
                    bytes: meta.is_file().then(|| fs::read(&path).unwrap()),
                    ino: meta.ino(),
                    mtime: (meta.mtime(), meta.mtime_nsec()),
                    ctime: (meta.ctime(), meta.ctime_nsec()),
                    mode: meta.mode(),
                },
            );
        }
    }
    out
}

#[test]
fn incremental_observation_leaves_every_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db/store.db");
    let jsonl = dir.path().join("mem/memory.jsonl");
    let tree = dir.path().join("tree");
    fs::create_dir_all(db.parent().unwrap()).unwrap();
    fs::create_dir_all(jsonl.parent().unwrap()).unwrap();
    fs::create_dir_all(tree.join("sub")).unwrap();
    fs::write(tree.join("sub/a"), b"alpha").unwrap();
    fs::write(&jsonl, b"{\"type\":\"entity\",\"name\":\"A\"}").unwrap();
    // A WAL database with an open writer: the case where a careless reader
    // would create -shm/-wal files or block the writer.
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
             CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'x');",
        )
        .unwrap();
    let before = physical(dir.path());
    let mut observers: Vec<Box<dyn Observer>> = vec![
        Box::new(SqliteObserver::new(&db)),
        Box::new(JsonlObserver::new(&jsonl)),
        Box::new(FsObserver::new(&tree)),
        Box::new(FsObserver::new(&tree).without_events()),
    ];
    let started = SystemTime::now();
    for round in 0..4 {
        for observer in &mut observers {
            observer.observe(round > 0).unwrap();
            let _ = observer.activity();
        }
        if round == 2 {
            std::thread::sleep(Duration::from_millis(40));
        }
    }
    assert!(started.elapsed().unwrap() < Duration::from_secs(30));
    assert_eq!(physical(dir.path()), before);
    // The writer was never blocked: it still commits.
    writer.execute("INSERT INTO t VALUES (2, 'y')", []).unwrap();
}
