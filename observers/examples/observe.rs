//! Times one observer on one store, for the benchmark script
//! (`bench/run.py`): a cold first observation, then observations of the
//! untouched store. Prints one JSON line.
//!
//! Usage: `observe sqlite|fs|fs-stat|jsonl PATH [REPEATS]` (`fs-stat`: the
//! filesystem observer without events, reading every stamp each time)

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example program: its output is its measurement"
)]

use std::time::{Duration, Instant};

use witness_observers::Observer;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(kind), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: observe sqlite|fs|jsonl PATH [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut observer: Box<dyn Observer> = match kind.as_str() {
        "sqlite" => Box::new(witness_observers::sqlite::SqliteObserver::new(&path)),
        "fs" => Box::new(witness_observers::fs::FsObserver::new(&path)),
        "fs-stat" => Box::new(witness_observers::fs::FsObserver::new(&path).without_events()),
        "jsonl" => Box::new(witness_observers::jsonl::JsonlObserver::new(&path)),
        other => {
            eprintln!("unknown store kind {other}");
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    if let Err(e) = observer.observe(false) {
        eprintln!("cold observation failed: {e}");
        std::process::exit(1);
    }
    let cold = start.elapsed();
    // Let the stamps settle, as they have by the time a store sits idle.
    std::thread::sleep(Duration::from_millis(50));
    let mut again = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        match observer.observe(true) {
            Ok(o) if o.delta.is_empty() => {}
            Ok(o) => {
                eprintln!("an untouched store changed: {:?}", o.delta.changes.first());
                std::process::exit(1);
            }
            Err(e) => {
                eprintln!("observation failed: {e}");
                std::process::exit(1);
            }
        }
        again.push(start.elapsed().as_secs_f64());
    }
    again.sort_by(f64::total_cmp);
    let median = again.get(again.len() / 2).copied().unwrap_or(0.0);
    println!(
        "{{\"cold_s\": {:.6}, \"no_change_s\": {:.6}}}",
        cold.as_secs_f64(),
        median
    );
}
