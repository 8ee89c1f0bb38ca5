//! Writes a server attempts on a store's original are recorded in the
//! proxy's and agent runs' traces, as audits record them: the decoys in the
//! originals' places take the write, the jail compares them after every
//! call (its one comparison, through the observed set), and the trace
//! names the original (docs/proxy.md, docs/agent-runs.md).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn hostile(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(name)
        .display()
        .to_string()
}

fn send(host: &mut std::process::ChildStdin, message: Value) {
    writeln!(host, "{message}").expect("the proxy reads");
    host.flush().expect("flush");
}

fn digest(path: &Path) -> blake3::Hash {
    blake3::hash(&std::fs::read(path).expect("read"))
}

#[test]
fn the_proxy_trace_records_a_write_to_a_stores_original() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The original's directory holds nothing else the sandbox shows (not
    // the jail): its decoy is the whole directory, and SQLite's journal
    // beside the file can be made.
    let data = dir.path().join("data");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&data).expect("data");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let original = data.join("notes.db");
    let conn = rusqlite::Connection::open(&original).expect("db");
    conn.execute_batch("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT);")
        .expect("seed");
    drop(conn);
    let before = digest(&original);
    let trace = dir.path().join("trace.jsonl");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .arg("proxy")
        .arg("--trace")
        .arg(&trace)
        .arg(format!("--store=db=sqlite:{}", original.display()))
        .args(["--", "python3", &hostile("original_finder.py"), "{db}"])
        .arg(&original)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the proxy runs");
    let mut host = proxy.stdin.take().expect("stdin");
    let mut answers = BufReader::new(proxy.stdout.take().expect("stdout")).lines();
    send(
        &mut host,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let _ = answers.next();
    send(
        &mut host,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut host,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "peek", "arguments": {}}}),
    );
    let answer = answers.next().expect("an answer").expect("a line");
    assert!(
        answer.contains(&format!("wrote {}", original.display())),
        "the write went through, into the decoy: {answer}"
    );
    drop(host);
    let status = proxy.wait().expect("the proxy ends");
    assert!(status.success());
    assert_eq!(digest(&original), before, "the original is unchanged");
    let writes: Vec<Value> = std::fs::read_to_string(&trace)
        .expect("trace")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
        .filter(|e| e["type"] == "original-write")
        .collect();
    assert_eq!(
        writes
            .iter()
            .map(|w| (w["phase"].clone(), w["calls"].clone(), w["path"].clone()))
            .collect::<Vec<_>>(),
        [(
            json!("call"),
            json!([1]),
            json!(original.display().to_string())
        )],
        "{writes:#?}"
    );
}

#[test]
fn an_agent_runs_trace_records_a_write_to_a_seeded_stores_original() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    write(
        "seed.sql",
        "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT);\nINSERT INTO notes VALUES ('n1', 'first');\n",
    );
    let case = write(
        "case.toml",
        "id = \"peek-notes\"\ntitle = \"Peek at the notes\"\nbudget = 2\n\n\
         [[store]]\nname = \"db\"\nkind = \"sqlite\"\nseed = [\"seed.sql\"]\n\n\
         [[turn]]\nuser = \"Peek at my notes.\"\n\n[expect]\nforbidden = []\n",
    );
    let script = write(
        "script.toml",
        "[[model]]\nname = \"scripted-peek\"\n\n[[model.case]]\nid = \"peek-notes\"\n\n\
         [[model.case.reply]]\ncalls = [{ tool = \"peek\", args = {} }]\n\n\
         [[model.case.reply]]\ntext = \"I looked at your notes.\"\n",
    );
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "agent", "run", "--case", &case, "--driver", "scripted", &script,
        ])
        .args(["--format", "json", "--"])
        .args(["python3", &hostile("original_finder.py"), "{db}"])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .output()
        .expect("mcp-witness runs");
    let run: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a run document ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let call = &run["runs"][0]["trace"]["turns"][0]["steps"][0]["calls"][0];
    assert_eq!(call["tool"], "peek", "{call:#}");
    // The server found the seeded file through the decoy in its place
    // (under the sandbox's /tmp) and wrote it; the seed itself is gone
    // with the run, the write recorded by the name the run gives it.
    assert!(
        call["result"]
            .as_str()
            .is_some_and(|r| r.starts_with("wrote ")),
        "{call:#}"
    );
    assert_eq!(call["original_writes"], json!(["db.db"]), "{call:#}");
    assert_eq!(
        std::fs::read_dir(&tmp).expect("tmp").count(),
        0,
        "nothing of the run is left"
    );
}
