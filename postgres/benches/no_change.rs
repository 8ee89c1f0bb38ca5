//! The observer's cost on a call that changes nothing, against a whole
//! dump of the same database, both measured in this one run:
//!
//!     cargo bench -p witness-postgres --bench no_change [-- ROWS]
//!
//! A throwaway cluster is restored with ROWS rows (default 10^6); then the
//! observer looks N times with nothing changing (one call costs two looks:
//! before and after), and `pg_dump | b3sum` of the same database runs
//! through the shell three times. Medians are printed with their ratio;
//! the run fails when a no-change call costs more than 0.01 of the dump.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its measurements on stdout and stderr"
)]

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use witness_observers::Snapshot;
use witness_postgres::cluster::{DATABASE, OWNER, PORT};
use witness_postgres::{Cluster, PostgresObserver, Source};

const LOOKS: usize = 41;
const DUMPS: usize = 3;
const GOAL: f64 = 0.01;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let rows: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::Builder::new()
        .prefix("witness-pg-bench-")
        .tempdir()
        .expect("tempdir");
    // The cluster's account (not root) must pass through.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let seed = dir.path().join("seed.sql");
    std::fs::write(
        &seed,
        format!(
            "CREATE TABLE events (id bigint PRIMARY KEY, account integer NOT NULL, \
             kind text NOT NULL, amount numeric(12,2), note text);\n\
             INSERT INTO events SELECT i, i % 1000, (ARRAY['open','paid','void'])[1 + i % 3], \
             (i % 10000) / 100.0, 'event number ' || i FROM generate_series(1, {rows}) AS i;\n"
        ),
    )
    .expect("seed");
    let store = dir.path().join("store");
    std::fs::create_dir(&store).expect("store");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let started = Instant::now();
    let cluster = match Cluster::create(&store, &Source::of_path(&seed)) {
        Ok(cluster) => cluster,
        Err(e) => {
            eprintln!("cannot make the cluster: {e}");
            drop(dir);
            std::process::exit(2);
        }
    };
    eprintln!("restored {rows} rows in {:.1?}", started.elapsed());

    let mut observer = PostgresObserver::new(cluster.socket_dir());
    let mut last = Snapshot::default();
    observer.advance(&mut last).expect("pristine look");
    let mut looks = Vec::new();
    for _ in 0..LOOKS {
        let t = Instant::now();
        let changes = observer.advance(&mut last).expect("look");
        looks.push(t.elapsed());
        assert!(changes.is_empty(), "nothing changed, yet: {changes:?}");
    }
    let look = median(looks);
    let call = look * 2;

    let bindir = witness_postgres::cluster::Binaries::find()
        .expect("binaries")
        .dir;
    let script = format!(
        "{}/pg_dump -h '{}' -p {PORT} -U {OWNER} -d {DATABASE} | b3sum",
        bindir.display(),
        cluster.socket_dir().display()
    );
    let mut dumps = Vec::new();
    for _ in 0..DUMPS {
        let t = Instant::now();
        let out = Command::new("bash")
            .args(["-c", &format!("set -o pipefail; {script}")])
            .env(
                "PGPASSWORD",
                witness_postgres::cluster::password_for(cluster.socket_dir()).unwrap_or_default(),
            )
            .output()
            .expect("sh");
        dumps.push(t.elapsed());
        assert!(
            out.status.success(),
            "pg_dump | b3sum failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let dump = median(dumps);
    let ratio = call.as_secs_f64() / dump.as_secs_f64();
    println!("rows                         {rows}");
    println!("observer look (median of {LOOKS})  {look:.2?}");
    println!("no-change call (two looks)   {call:.2?}");
    println!("pg_dump | b3sum (median of {DUMPS}) {dump:.2?}");
    println!("ratio                        {ratio:.5} (goal <= {GOAL})");
    // Stopped and removed before exiting: exit() runs no destructors.
    drop(cluster);
    drop(dir);
    if ratio > GOAL {
        eprintln!("FAILED: a no-change call costs more than {GOAL} of a dump");
        std::process::exit(1);
    }
}
