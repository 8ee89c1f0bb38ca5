//! A real MCP client library drives the proxy: the official TypeScript SDK
//! (pinned in experiments/proxy/package.json, installed by
//! experiments/proxy/install.sh) against the CRM testbed and the pinned
//! published server-memory, and the trace shows every call with its
//! effects. Without the SDK (or the published servers) the tests say so and
//! skip; under CI=true they fail.

#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-witness");

fn sdk() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/proxy");
    if dir
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .exists()
    {
        return Some(dir);
    }
    let why = "the MCP TypeScript SDK is not installed: run bash experiments/proxy/install.sh";
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true, and {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// Runs the SDK client through the proxy; returns its output and the trace.
fn drive(sdk: &Path, dir: &Path, calls: &Value, proxy: &[&str]) -> (Value, Vec<Value>) {
    let calls_file = dir.join("calls.json");
    std::fs::write(&calls_file, calls.to_string()).expect("write");
    let trace = dir.join("trace.jsonl");
    let output = Command::new("node")
        .arg(sdk.join("client.mjs"))
        .arg(&calls_file)
        .args([BIN, "proxy", "--trace"])
        .arg(&trace)
        .args(proxy)
        .env("TMPDIR", dir)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = common::stdout_json(&output);
    let started = std::time::Instant::now();
    let mut lines = String::new();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        lines = std::fs::read_to_string(&trace).unwrap_or_default();
        if lines.contains("\"type\":\"end\"") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let entries = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("a trace line"))
        .collect();
    (printed, entries)
}

/// `(call number, tool)` of every tools/call request in the trace, and the
/// `(calls, object, op)` of every effect.
/// `(calls charged, object, op)`.
type Charged = (Value, String, String);

fn calls_and_effects(entries: &[Value]) -> (Vec<(u64, String)>, Vec<Charged>) {
    let calls = entries
        .iter()
        .filter(|e| e["type"] == "message" && e["from"] == "host" && e["call"].is_u64())
        .map(|e| {
            (
                e["call"].as_u64().unwrap_or(0),
                e["message"]["params"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    let effects = entries
        .iter()
        .filter(|e| e["type"] == "effect" && e["phase"] == "call")
        .map(|e| {
            (
                e["calls"].clone(),
                e["effect"]["object"].as_str().unwrap_or("").to_owned(),
                e["effect"]["op"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    (calls, effects)
}

fn seeded_crm(dir: &Path) -> PathBuf {
    let db = dir.join("crm.db");
    let conn = rusqlite::Connection::open(&db).expect("db");
    for seed in ["crm-schema.sql", "crm-tenants.sql", "acme-has-dana.sql"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments/agent/seeds")
            .join(seed);
        conn.execute_batch(&std::fs::read_to_string(path).expect("seed"))
            .expect("seeds");
    }
    db
}

#[test]
fn the_typescript_sdk_through_the_proxy_against_the_crm_testbed() {
    let Some(sdk) = sdk() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let db = seeded_crm(dir.path());
    let calls = json!([
        {"tool": "search_contacts", "arguments": {"query": "Dana Kim"}},
        {"tool": "delete_contact", "arguments": {"id": "c_150"}},
    ]);
    let store = format!("db=sqlite:{}", db.display());
    let (printed, entries) = drive(
        &sdk,
        dir.path(),
        &calls,
        &[
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
        ],
    );
    assert_eq!(
        printed["tools"],
        json!(["search_contacts", "create_contact", "delete_contact"])
    );
    assert_eq!(printed["results"][1]["isError"], false, "{printed}");
    let (made, effects) = calls_and_effects(&entries);
    assert_eq!(
        made,
        [(1, "search_contacts".into()), (2, "delete_contact".into())]
    );
    assert!(
        effects.contains(&(json!([2]), "contacts/c_150".into(), "delete".into())),
        "{effects:?}"
    );
    assert!(
        effects
            .iter()
            .any(|(c, o, op)| *c == json!([2]) && o.starts_with("audit_log/") && op == "create")
    );
    assert!(
        effects.iter().all(|(c, _, _)| *c == json!([2])),
        "the search wrote nothing"
    );
    // The original store was never touched: the server wrote a copy.
    let conn = rusqlite::Connection::open(&db).expect("db");
    let left: i64 = conn
        .query_row(
            "SELECT count(*) FROM contacts WHERE id = 'c_150'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(left, 1);
}

#[test]
fn the_typescript_sdk_through_the_proxy_against_server_memory() {
    let Some(sdk) = sdk() else { return };
    let Some(cases) = common::case_packages() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = cases
        .join("node_modules/.bin/mcp-server-memory")
        .display()
        .to_string();
    let calls = json!([
        {"tool": "read_graph", "arguments": {}},
        {"tool": "create_entities", "arguments": {"entities": [
            {"name": "Dana Kim", "entityType": "person", "observations": ["works at Northwind"]}]}},
        {"tool": "delete_entities", "arguments": {"entityNames": ["Dana Kim"]}},
    ]);
    let store = format!("memory=jsonl:{}", dir.path().join("memory.jsonl").display());
    let (printed, entries) = drive(
        &sdk,
        dir.path(),
        &calls,
        &[
            "--store",
            &store,
            "--env",
            "MEMORY_FILE_PATH={memory}",
            "--",
            "node",
            &memory,
        ],
    );
    assert_eq!(
        printed["results"].as_array().map(Vec::len),
        Some(3),
        "{printed}"
    );
    let (made, effects) = calls_and_effects(&entries);
    let tools: Vec<&str> = made.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(tools, ["read_graph", "create_entities", "delete_entities"]);
    let ops: Vec<(Value, String)> = effects
        .iter()
        .map(|(c, _, op)| (c.clone(), op.clone()))
        .collect();
    assert!(ops.contains(&(json!([2]), "create".into())), "{effects:?}");
    assert!(ops.contains(&(json!([3]), "delete".into())), "{effects:?}");
    assert!(
        ops.iter().all(|(c, _)| *c != json!([1])),
        "read_graph wrote nothing"
    );
}
