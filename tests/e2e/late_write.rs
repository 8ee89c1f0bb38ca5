//! One observation around a call, whichever command makes it: a server
//! whose write lands 30 ms after its answer, driven through `audit`,
//! `agent run` and `proxy` with the same `--settle-ms` and `--quiet-ms`,
//! has the write charged to the same call, as that call's own effect (not
//! a late one), with the declared row facts where the command reads them.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use witness_wire::clock::MonotonicClock;
use witness_wire::rpc::{RpcClient, RpcResponse};
use witness_wire::stdio::StdioTransport;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-witness");
/// Long enough a bound that a fixed settle would show; a quiet window that
/// a write 30 ms after the answer falls well inside.
const SETTLE: [&str; 4] = ["--settle-ms", "2000", "--quiet-ms", "250"];
const SCHEMA: &str = "CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT);";
const TIMEOUT: Duration = Duration::from_secs(20);

fn server() -> Vec<String> {
    vec![
        "python3".into(),
        common::fixture("late_writer.py").display().to_string(),
        "{db}".into(),
    ]
}

/// A SQLite store holding the notes table, empty.
fn seeded(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute_batch(SCHEMA))
        .expect("seeded");
    format!("db=sqlite:{}", path.display())
}

/// `(call, how)` for every time `object` was seen changing: `effects` when
/// it was the call's own, `late` when it came after the call had settled.
type Charges = Vec<(u64, &'static str)>;

fn charged(calls: &[Value], id: &str, object: &str) -> Charges {
    let mut out = Vec::new();
    for call in calls {
        for how in ["effects", "late_effects"] {
            let seen = call[how]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["object"] == object)
                .count();
            for _ in 0..seen {
                out.push((call[id].as_u64().unwrap_or(0), how));
            }
        }
    }
    out
}

fn audit(dir: &Path) -> Charges {
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "[[call]]\ntool = \"save_note\"\nargs.slug = \"n1\"\nargs.body = \"hello\"\n",
    )
    .expect("plan");
    let output = Command::new(BIN)
        .args(["audit", "--format", "json"])
        .args(SETTLE)
        .arg(format!("--store={}", seeded(dir, "audit.db")))
        .arg(format!("--plan={}", plan.display()))
        .arg("--")
        .args(server())
        .output()
        .expect("audit runs");
    let report = common::stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    let calls = report["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 1, "{:#}", report["calls"]);
    charged(&calls, "id", "notes/n1")
}

fn agent_run(dir: &Path) -> (Charges, Value) {
    std::fs::write(dir.join("schema.sql"), SCHEMA).expect("seed");
    let case = dir.join("save-a-note.toml");
    std::fs::write(
        &case,
        r#"id = "save-a-note"
budget = 2

[[store]]
name = "db"
kind = "sqlite"
seed = ["schema.sql"]

[[turn]]
user = "Save a note n1 saying hello."

[[expect.effects]]
object = "db:notes/*"
op = "create"
count = 1
where = { body = "hello" }

[[facts]]
store = "db"
table = "notes"
columns = ["body"]
"#,
    )
    .expect("case");
    let script = dir.join("script.toml");
    std::fs::write(
        &script,
        r#"[[model]]
name = "saver"

[[model.case]]
id = "save-a-note"

[[model.case.reply]]
calls = [{ tool = "save_note", args = { slug = "n1", body = "hello" } }]

[[model.case.reply]]
text = "Saved the note n1."
"#,
    )
    .expect("script");
    let output = Command::new(BIN)
        .args(["agent", "run", "--case"])
        .arg(&case)
        .arg("--driver")
        .arg("scripted")
        .arg(&script)
        .args(["--format", "json"])
        .args(SETTLE)
        .arg("--")
        .args(server())
        .env("TMPDIR", dir)
        .output()
        .expect("agent run");
    let doc = common::stdout_json(&output);
    let run = &doc["runs"][0];
    assert_ne!(run["status"], "untestable", "{run:#}");
    let calls: Vec<Value> = run["trace"]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["steps"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["calls"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(calls.len(), 1, "{:#}", run["trace"]);
    (charged(&calls, "id", "notes/n1"), calls[0]["rows"].clone())
}

/// A host that makes the one call through the proxy; the charges its trace
/// records, the row facts with them, and how long the answer was held.
fn proxy(dir: &Path) -> (Charges, Value, Duration) {
    let trace = dir.join("trace.jsonl");
    let mut child = Command::new(BIN)
        .args(["proxy", "--trace"])
        .arg(&trace)
        .args([
            "--store",
            &seeded(dir, "proxy.db"),
            "--facts",
            "db:notes:body",
        ])
        .args(SETTLE)
        .arg("--")
        .args(server())
        .env("TMPDIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the proxy starts");
    let transport = StdioTransport::new(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
        Arc::new(MonotonicClock::start()),
    );
    let mut rpc = RpcClient::new(transport);
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "late-write-host", "version": "1"}});
    rpc.request("initialize", init, TIMEOUT)
        .expect("initialize");
    rpc.notify("notifications/initialized", json!({}))
        .expect("initialized");
    let call = json!({"name": "save_note", "arguments": {"slug": "n1", "body": "hello"}});
    let sent = Instant::now();
    let answer = rpc.request("tools/call", call, TIMEOUT);
    let held = sent.elapsed();
    assert!(
        matches!(&answer, Ok(RpcResponse::Result(r)) if r["isError"] == false),
        "{answer:?}"
    );
    rpc.close();
    let ended = Instant::now();
    while child.try_wait().ok().flatten().is_none() && ended.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let entries: Vec<Value> = std::fs::read_to_string(&trace)
        .expect("the trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(entries.iter().any(|e| e["type"] == "end"), "the trace ends");
    let mut charges = Vec::new();
    let mut rows = Value::Null;
    for entry in entries.iter().filter(|e| e["type"] == "effect") {
        if entry["effect"]["object"] != "notes/n1" {
            continue;
        }
        let how = match entry["phase"].as_str() {
            Some("call") => "effects",
            Some("late") => "late_effects",
            _ => "elsewhere",
        };
        for call in entry["calls"].as_array().into_iter().flatten() {
            charges.push((call.as_u64().unwrap_or(0), how));
        }
        rows = entry["row"].clone();
    }
    (charges, rows, held)
}

#[test]
fn a_write_30ms_after_its_answer_is_the_same_calls_own_in_audit_agent_run_and_proxy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let own = vec![(1, "effects")];
    assert_eq!(audit(dir.path()), own, "audit");
    let (charges, rows) = agent_run(dir.path());
    assert_eq!(charges, own, "agent run");
    // The row facts of the change, read by the store's observer.
    assert_eq!(
        rows,
        json!([{"store": "db", "object": "notes/n1", "after": {"body": "hello"}}]),
        "agent run"
    );
    let (charges, row, held) = proxy(dir.path());
    assert_eq!(charges, own, "proxy");
    assert_eq!(
        row,
        json!({"store": "db", "object": "notes/n1", "after": {"body": "hello"}})
    );
    // The answer was held until the stores were quiet, not for the bound.
    assert!(held < Duration::from_millis(1900), "held {held:?}");
}

/// An audit of one call of a `save_note` that claims to be read-only and
/// writes `delay_ms` after its answer, after a silence: its exit code, the
/// note's charges, EFF-01's verdict and the late-effect findings.
fn audit_silent_liar(dir: &Path, delay_ms: &str, extra: &[&str]) -> (i32, Charges, String, usize) {
    let plan = dir.join("liar.toml");
    std::fs::write(
        &plan,
        "[[call]]\ntool = \"save_note\"\nargs.slug = \"n1\"\nargs.body = \"hello\"\n",
    )
    .expect("plan");
    let db = format!("liar-{delay_ms}-{}.db", extra.len());
    let mut server = server();
    server.extend([delay_ms.to_owned(), "read-only".to_owned()]);
    let output = Command::new(BIN)
        .args(["audit", "--format", "json"])
        .args(extra)
        .arg(format!("--store={}", seeded(dir, &db)))
        .arg(format!("--plan={}", plan.display()))
        .arg("--")
        .args(server)
        .output()
        .expect("audit runs");
    let report = common::stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    let calls = report["calls"].as_array().cloned().unwrap_or_default();
    let verdict = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "EFF-01" && c["tool"] == "save_note")
        .and_then(|c| c["verdict"].as_str())
        .unwrap_or_default()
        .to_owned();
    let mut charges = charged(&calls, "id", "notes/n1");
    let at_shutdown = report["shutdown_effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["object"] == "notes/n1")
        .count();
    charges.extend(std::iter::repeat_n((0, "shutdown_effects"), at_shutdown));
    let late_findings = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "late-effect")
        .count();
    (
        output.status.code().unwrap_or(-1),
        charges,
        verdict,
        late_findings,
    )
}

/// What a change signal cannot prove: a write 150 ms after the answer,
/// after a silence, on a store that never moved. The settle ends once the
/// store has been quiet for `--quiet-ms` and the control window after it
/// ends on the same signals, so with the default the write is not the
/// call's own: it is still seen, as the call's late effect (with a
/// finding) or, once the server is told to stop before it wrote, as a
/// shutdown effect; never as the call's own. A quiet window longer than
/// the silence catches the lie itself.
#[test]
fn a_write_after_a_silence_longer_than_the_quiet_window_is_seen_late_and_a_longer_window_catches_it()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, charges, verdict, late) = audit_silent_liar(dir.path(), "150", &[]);
    match charges[..] {
        [(1, "late_effects")] => assert_eq!(late, 1, "a late-effect finding says so"),
        [(0, "shutdown_effects")] => {}
        _ => panic!("default quiet window: {charges:?}"),
    }
    assert_eq!(
        (code, verdict.as_str()),
        (0, "pass"),
        "the lie is not judged"
    );
    let (code, charges, verdict, _) = audit_silent_liar(
        dir.path(),
        "150",
        &["--settle-ms", "2000", "--quiet-ms", "400"],
    );
    assert_eq!(charges, vec![(1, "effects")], "--quiet-ms 400");
    assert_eq!((code, verdict.as_str()), (1, "fail"), "the lie is caught");
}
