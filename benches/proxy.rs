//! `cargo bench --bench proxy`: what the witness proxy adds to a tools/call
//! on a small store the call leaves unchanged.
//!
//! The same client (the wire's own) makes the same read-only call to the
//! CRM testbed directly and through `mcp-witness proxy`, in alternating
//! rounds so that the machine's load falls on both sides alike, and the
//! medians per call are compared. Nothing here asserts a time: the number
//! is the one docs/proxy.md ("Cost") states. `benches/proxy.sh` runs this
//! and, in the same run, the same measurement with an independent client.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its measurements on stdout and stderr"
)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use witness_wire::clock::MonotonicClock;
use witness_wire::rpc::RpcClient;
use witness_wire::stdio::StdioTransport;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-witness");
const ROUNDS: usize = 3;
const CALLS_PER_ROUND: usize = 200;
const WARM_UP: usize = 20;
const TIMEOUT: Duration = Duration::from_secs(30);

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = seed(dir.path());
    let store = format!("db=sqlite:{}", db.display());
    let trace = dir.path().join("trace.jsonl").display().to_string();
    let db_text = db.display().to_string();
    let direct: Vec<&str> = vec!["testbed", "crm", "--store", &db_text];
    let proxied: Vec<&str> = vec![
        "proxy",
        // The snapshots' cost alone; the settle adds its quiet window.
        "--settle-ms",
        "0",
        "--trace",
        &trace,
        "--store",
        &store,
        "--env",
        "CRM_TOKEN=acme-agent-token",
        "--",
        "mcp-witness",
        "testbed",
        "crm",
        "--store",
        "{db}",
    ];
    let (mut direct_ms, mut proxied_ms) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct_ms.extend(per_call_ms(&direct, dir.path()));
        proxied_ms.extend(per_call_ms(&proxied, dir.path()));
    }
    let (d50, d90) = (quantile(&mut direct_ms, 0.5), quantile(&mut direct_ms, 0.9));
    let (p50, p90) = (
        quantile(&mut proxied_ms, 0.5),
        quantile(&mut proxied_ms, 0.9),
    );
    let calls = ROUNDS * CALLS_PER_ROUND;
    println!("proxy/direct:  median {d50:.3} ms, p90 {d90:.3} ms per call ({calls} calls)");
    println!("proxy/proxied: median {p50:.3} ms, p90 {p90:.3} ms per call ({calls} calls)");
    println!(
        "proxy/added:   {:.3} ms median per call, {:.3} ms at p90",
        p50 - d50,
        p90 - d90
    );
}

/// The CRM testbed's seeded store (seed 002's tenants and contacts).
fn seed(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("crm.db");
    let conn = rusqlite::Connection::open(&db).expect("the store opens");
    for name in ["crm-schema.sql", "crm-tenants.sql", "acme-has-dana.sql"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/agent/seeds")
            .join(name);
        let sql = std::fs::read_to_string(path).expect("a seed");
        conn.execute_batch(&sql).expect("the seed runs");
    }
    db
}

/// One round: a fresh process, the handshake, warm-up calls, then the
/// timed ones.
fn per_call_ms(args: &[&str], tmp: &Path) -> Vec<f64> {
    let mut child: Child = Command::new(BIN)
        .args(args)
        .env("CRM_TOKEN", "acme-agent-token")
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let transport = StdioTransport::new(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
        Arc::new(MonotonicClock::start()),
    );
    let mut rpc = RpcClient::new(transport).with_kept_budget(64 * 1024);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "bench", "version": "1"}});
    rpc.request("initialize", init, TIMEOUT)
        .expect("initialize");
    rpc.notify("notifications/initialized", json!({}))
        .expect("initialized");
    let call = json!({"name": "search_contacts", "arguments": {"query": "Dana"}});
    let mut times = Vec::with_capacity(CALLS_PER_ROUND);
    for i in 0..WARM_UP + CALLS_PER_ROUND {
        let started = Instant::now();
        rpc.request("tools/call", call.clone(), TIMEOUT)
            .expect("the call is answered");
        if i >= WARM_UP {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    rpc.close();
    let _ = child.wait();
    times
}

fn quantile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples.get(index).copied().unwrap_or(f64::NAN)
}
