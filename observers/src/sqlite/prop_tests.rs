//! Incremental observations against full reads: after every step of a
//! pseudo-random workload (inserts, updates, deletes, rows spilling onto
//! overflow pages, keys that render alike, schema changes, VACUUM), in
//! rollback-journal and WAL mode, the delta an observer reports must be
//! exactly the diff of two fresh full snapshots, and so must its warnings.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rusqlite::Connection;

use super::SqliteObserver;
use crate::{Observer, diff};

/// A small deterministic generator (no dependency, same run every time).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const SCHEMA: &str = "
    CREATE TABLE t1(id INTEGER PRIMARY KEY, v TEXT, b BLOB);
    CREATE TABLE t2(slug TEXT PRIMARY KEY, body TEXT);
    CREATE TABLE t3(x, y);
    CREATE TABLE t4(k PRIMARY KEY, v);
    CREATE TABLE t5(a TEXT, b INT, PRIMARY KEY (a)) WITHOUT ROWID;
    CREATE TABLE t6(id INTEGER PRIMARY KEY AUTOINCREMENT, note TEXT);
";

fn step(conn: &Connection, rng: &mut Lcg, i: u64) {
    let n = rng.below(40) as i64;
    let size = match rng.below(10) {
        0 => 9_000 + rng.below(20_000) as usize,
        1 => 3_000,
        _ => rng.below(80) as usize,
    };
    let blob = vec![(i % 251) as u8; size];
    let sql_result = match rng.below(22) {
        0..=3 => conn.execute(
            "INSERT OR REPLACE INTO t1(id, v, b) VALUES (?1, ?2, ?3)",
            rusqlite::params![n, format!("v{i}"), blob],
        ),
        4 => conn.execute("DELETE FROM t1 WHERE id % 7 = ?1", [n % 7]),
        5 => conn.execute("UPDATE t1 SET v = v || 'x' WHERE id = ?1", [n]),
        6 => conn.execute(
            "INSERT OR REPLACE INTO t2 VALUES (?1, ?2)",
            rusqlite::params![format!("s{n}"), "y".repeat(size)],
        ),
        7 => conn.execute(
            "UPDATE t2 SET slug = slug || 'm' WHERE slug = ?1",
            [format!("s{n}")],
        ),
        8 => conn.execute("DELETE FROM t2 WHERE slug = ?1", [format!("s{n}")]),
        9 => conn.execute("INSERT INTO t3 VALUES (?1, ?2)", rusqlite::params![n, blob]),
        10 => conn.execute(
            "DELETE FROM t3 WHERE rowid IN (SELECT rowid FROM t3 LIMIT 2)",
            [],
        ),
        11 => conn.execute("INSERT OR REPLACE INTO t4 VALUES (?1, 'int')", [n]),
        12 => conn.execute(
            "INSERT OR REPLACE INTO t4 VALUES (?1, 'text')",
            [n.to_string()],
        ),
        13 => conn.execute("INSERT INTO t4 VALUES (NULL, ?1)", [i as i64]),
        14 => conn.execute("DELETE FROM t4 WHERE v = 'int' AND k = ?1", [n]),
        15 => conn.execute(
            "INSERT OR REPLACE INTO t5 VALUES (?1, ?2)",
            rusqlite::params![format!("a{n}"), i as i64],
        ),
        16 => conn.execute("INSERT INTO t6(note) VALUES (?1)", ["n".repeat(size)]),
        17 => conn.execute("DELETE FROM t6 WHERE id = (SELECT max(id) FROM t6)", []),
        18 if i.is_multiple_of(5) => conn
            .execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS extra{}(a, b); INSERT INTO extra{}(a) VALUES (1);",
                n % 3,
                n % 3
            ))
            .map(|_| 0),
        19 if i.is_multiple_of(7) => conn
            .execute_batch(&format!("DROP TABLE IF EXISTS extra{}", n % 3))
            .map(|_| 0),
        20 if i.is_multiple_of(11) => conn.execute_batch("VACUUM").map(|_| 0),
        21 if i.is_multiple_of(13) => conn
            .execute_batch(&format!("ALTER TABLE t3 ADD COLUMN c{i} DEFAULT 7"))
            .map(|_| 0),
        _ => conn.execute(
            "UPDATE t1 SET b = ?1 WHERE id = ?2",
            rusqlite::params![blob, n],
        ),
    };
    // A constraint the workload trips is fine: nothing was written.
    let _ = sql_result;
}

fn full(path: &Path) -> crate::Snapshot {
    SqliteObserver::new(path).snapshot().expect("full snapshot")
}

fn run(mode: &str, seed: u64, steps: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store.db");
    let writer = Connection::open(&path).expect("open");
    writer.execute_batch(mode).expect("mode");
    writer.execute_batch(SCHEMA).expect("schema");
    let mut rng = Lcg(seed);
    let mut observer = SqliteObserver::new(&path);
    let first = observer.observe(false).expect("first observation");
    let mut before = full(&path);
    assert_eq!(first.warnings, before.warnings);
    let mut seen_changes = 0;
    for i in 0..steps {
        for _ in 0..=rng.below(3) {
            step(&writer, &mut rng, i);
        }
        if rng.below(4) == 0 {
            // Long enough for stamps to settle: the no-read and WAL-tail
            // paths get exercised, not only full comparisons.
            std::thread::sleep(Duration::from_millis(25));
        }
        let seen = observer.observe(true).expect("observation");
        let after = full(&path);
        assert_eq!(
            seen.delta,
            diff(&before, &after),
            "{mode} seed {seed} step {i}"
        );
        assert_eq!(seen.warnings, after.warnings, "{mode} seed {seed} step {i}");
        seen_changes += seen.delta.changes.len();
        before = after;
    }
    assert!(
        seen_changes > steps as usize,
        "the workload changed too little: {seen_changes}"
    );
    assert!(
        observer.reads_incrementally(),
        "{mode} seed {seed}: the observer fell back to whole reads"
    );
}

#[test]
fn incremental_deltas_equal_full_diffs_in_rollback_mode() {
    for seed in [1, 2] {
        run("PRAGMA journal_mode=DELETE;", seed, 60);
    }
}

#[test]
fn incremental_deltas_equal_full_diffs_in_wal_mode() {
    run(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;",
        3,
        60,
    );
    run(
        "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=20;",
        4,
        60,
    );
}

#[test]
fn incremental_deltas_equal_full_diffs_with_small_pages_in_truncate_mode() {
    run("PRAGMA page_size=512; PRAGMA journal_mode=TRUNCATE;", 5, 40);
}
