//! Times a cold jail of one store, for the benchmark script
//! (`bench/run.py`): the jail made (the store viewed, or copied with
//! `MCP_WITNESS_JAIL_COPY=1`), one change made in it as a server would (a
//! row updated, a file appended to), the disk the stores then take, and the
//! jail removed. Prints one JSON line: medians of REPEATS jails.
//!
//! Usage: `cold_jail sqlite|fs PATH [REPEATS]`. Run as root, as the audit
//! is, for the jail's own mount namespace (else every store is copied).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example program: its output is its measurement"
)]

use std::path::PathBuf;
use std::time::Instant;

use witness_jail::{Jail, JailSpec, StoreKind, StoreSpec};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// One change, made in the jailed store as a server would make it.
fn change(kind: StoreKind, path: &std::path::Path) -> Result<(), String> {
    match kind {
        StoreKind::Sqlite => {
            let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
            conn.execute_batch("UPDATE items SET n = n + 1 WHERE id = (SELECT min(id) FROM items)")
                .map_err(|e| e.to_string())
        }
        _ => {
            let first = std::fs::read_dir(path)
                .and_then(|mut dirs| dirs.next().transpose())
                .map_err(|e| e.to_string())?
                .ok_or("an empty tree")?;
            let file = std::fs::read_dir(first.path())
                .and_then(|mut files| files.next().transpose())
                .map_err(|e| e.to_string())?
                .ok_or("an empty directory")?;
            let mut out = std::fs::OpenOptions::new()
                .append(true)
                .open(file.path())
                .map_err(|e| e.to_string())?;
            std::io::Write::write_all(&mut out, b"changed\n").map_err(|e| e.to_string())
        }
    }
}

fn main() {
    // Before any thread: the jail's mounts are this process's own.
    witness_jail::disk::private_mounts();
    let mut args = std::env::args().skip(1);
    let (Some(kind), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: cold_jail sqlite|fs PATH [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let kind = match StoreKind::parse(&kind) {
        Some(kind @ (StoreKind::Sqlite | StoreKind::Fs)) => kind,
        _ => {
            eprintln!("unknown store kind {kind}");
            std::process::exit(2);
        }
    };
    let spec = JailSpec {
        command: vec!["true".into()],
        stores: vec![StoreSpec {
            name: "s".into(),
            kind,
            source: PathBuf::from(&path),
            shown: None,
            clock_columns: Vec::new(),
        }],
        env: Vec::new(),
        keep: false,
        isolate_network: false,
    };
    let (mut create, mut first_change, mut remove) = (Vec::new(), Vec::new(), Vec::new());
    let (mut untouched_bytes, mut changed_bytes) = (Vec::new(), Vec::new());
    let mut method = String::new();
    for _ in 0..repeats {
        let start = Instant::now();
        let jail = match Jail::create(spec.clone()) {
            Ok(jail) => jail,
            Err(e) => {
                eprintln!("cannot make the jail: {e}");
                std::process::exit(1);
            }
        };
        create.push(start.elapsed().as_secs_f64());
        untouched_bytes.push(jail.stores_disk_use() as f64);
        method = jail.stores_method().unwrap_or_default();
        let start = Instant::now();
        if let Err(e) = change(kind, &jail.stores[0].path) {
            eprintln!("cannot change the jailed store: {e}");
            std::process::exit(1);
        }
        first_change.push(start.elapsed().as_secs_f64());
        changed_bytes.push(jail.stores_disk_use() as f64);
        let start = Instant::now();
        drop(jail);
        remove.push(start.elapsed().as_secs_f64());
    }
    let line = serde_json::json!({
        "create_s": median(create),
        "first_change_s": median(first_change),
        "remove_s": median(remove),
        "disk_bytes_untouched": median(untouched_bytes),
        "disk_bytes_after_one_change": median(changed_bytes),
        "method": method,
    });
    println!("{line}");
}
