//! The witness proxy end to end: transparent in both eras over stdio and
//! over HTTP, its traces judged by `trace check` exactly as agent runs judge
//! the same behaviour, and a host killed mid-call leaving a readable trace,
//! no server and no jail.

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use serde_json::{Value, json};
use witness_wire::clock::MonotonicClock;
use witness_wire::http::{Endpoint, HttpTransport};
use witness_wire::rpc::RpcClient;
use witness_wire::stdio::StdioTransport;
use witness_wire::transcript::Direction;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-witness");
const TIMEOUT: Duration = Duration::from_secs(10);

fn relay_server() -> String {
    common::fixture("relay_server.py").display().to_string()
}

/// A process whose pipes a wire client talks through; killed on drop.
struct Spawned {
    child: Child,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // The process group this test created.
        let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        let _ = self.child.wait();
    }
}

fn spawn(program: &str, args: &[&str], tmp: &Path) -> (Spawned, RpcClient) {
    let mut child = Command::new(program)
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawns");
    let transport = StdioTransport::new(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
        Arc::new(MonotonicClock::start()),
    );
    (Spawned { child }, RpcClient::new(transport))
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The same conversation every time; returns every message the client
/// received, in order (answers, notifications, the server's own requests).
fn converse(rpc: &mut RpcClient, modern: bool) -> Vec<Value> {
    let with = |mut params: Value| {
        if modern {
            params["_meta"] = meta();
        }
        params
    };
    if modern {
        rpc.request("server/discover", with(json!({})), TIMEOUT)
            .expect("discover");
    } else {
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                          "clientInfo": {"name": "t", "version": "1"}});
        let answer = rpc
            .request("initialize", init, TIMEOUT)
            .expect("initialize");
        if let witness_wire::rpc::RpcResponse::Result(result) = answer {
            rpc.negotiated(result["protocolVersion"].as_str().unwrap_or("2025-11-25"));
        }
        rpc.notify("notifications/initialized", json!({}))
            .expect("initialized");
    }
    rpc.request("tools/list", with(json!({})), TIMEOUT)
        .expect("list");
    let call = with(json!({"name": "echo", "arguments": {"x": 1}}));
    rpc.request("tools/call", call, TIMEOUT).expect("call");
    let unknown = with(json!({"name": "nope", "arguments": {}}));
    rpc.request("tools/call", unknown, TIMEOUT)
        .expect("error answer");
    rpc.request("bogus/method", with(json!({})), TIMEOUT)
        .expect("error answer");
    rpc.listen(Duration::from_millis(200));
    rpc.transcript()
        .frames
        .iter()
        .filter(|f| f.dir == Direction::In)
        .map(|f| serde_json::from_str(&f.text).expect("JSON from the server"))
        .collect()
}

fn proxy_args<'a>(trace: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["proxy", "--trace", trace];
    args.extend_from_slice(extra);
    args
}

#[test]
fn the_proxy_is_transparent_over_stdio_in_both_eras() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = relay_server();
    for modern in [false, true] {
        let (_direct, mut rpc) = spawn("python3", &[&server], dir.path());
        let direct = converse(&mut rpc, modern);
        let trace = dir.path().join(format!("t-{modern}.jsonl"));
        let trace_text = trace.display().to_string();
        let mut args = proxy_args(&trace_text, &["--", "python3"]);
        args.push(&server);
        let (_proxy, mut rpc) = spawn(BIN, &args, dir.path());
        let proxied = converse(&mut rpc, modern);
        // Answers, the logging notification, and in the legacy era the
        // server's own roots/list request.
        assert_eq!(direct.len(), if modern { 6 } else { 7 }, "{direct:#?}");
        assert_eq!(direct, proxied, "modern={modern}");
        rpc.close();
        wait_for_end(&trace);
        let lines = std::fs::read_to_string(&trace).expect("trace");
        let messages = lines
            .lines()
            .filter(|l| l.contains("\"type\":\"message\""))
            .count();
        // Every message both ways: ours, the server's, and the client's
        // answer to the server's request.
        let sent = if modern { 5 } else { 7 };
        assert_eq!(messages, sent + direct.len(), "{lines}");
    }
}

fn wait_for_end(trace: &Path) {
    let started = Instant::now();
    while started.elapsed() < TIMEOUT {
        let text = std::fs::read_to_string(trace).unwrap_or_default();
        if text.contains("\"type\":\"end\"") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the proxy wrote no end line to {}", trace.display());
}

/// A proxy on `--listen 127.0.0.1:0` in front of `upstream`; its URL.
fn listening(dir: &Path, trace: &Path, upstream: &[&str]) -> (Spawned, String) {
    let mut child = Command::new(BIN)
        .args(["proxy", "--listen", "127.0.0.1:0", "--trace"])
        .arg(trace)
        .args(upstream)
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawns");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("a line").expect("text");
        if let Some(url) = line.strip_prefix("mcp-witness proxy: listening on ") {
            break url.to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Spawned { child }, url)
}

fn http_client(url: &str) -> RpcClient {
    let endpoint = Endpoint::parse(url, false).expect("loopback URL");
    RpcClient::new(HttpTransport::new(
        endpoint,
        Arc::new(MonotonicClock::start()),
        TIMEOUT,
    ))
}

#[test]
fn the_proxy_is_transparent_over_http_in_both_eras() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = relay_server();
    for modern in [false, true] {
        let (_direct, mut rpc) = spawn("python3", &[&server], dir.path());
        let direct = converse(&mut rpc, modern);
        let trace = dir.path().join(format!("h-{modern}.jsonl"));
        let (mut proxy, url) = listening(dir.path(), &trace, &["--", "python3", &server]);
        let mut rpc = http_client(&url);
        let proxied = converse(&mut rpc, modern);
        assert_eq!(direct, proxied, "modern={modern}");
        rpc.close();
        // The proxy's own process, asked to stop in order.
        let _ = kill_process(Pid::from_child(&proxy.child), Signal::TERM);
        wait_for_end(&trace);
        // A host's SIGTERM is the proxy's ordinary end: exit 0, said in the trace.
        let status = proxy.child.wait().expect("the proxy ends");
        assert_eq!(status.code(), Some(0), "{status:?}");
        let ended = std::fs::read_to_string(&trace).expect("trace");
        assert!(ended.contains("the proxy received SIGTERM"), "{ended}");
        let jails = std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("mcp-witness-jail-")
            })
            .count();
        assert_eq!(jails, 0, "the jail is removed when the proxy stops");
    }
}

#[test]
fn an_http_upstream_is_relayed_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let upstream = common::HttpFake::start("plain");
    let mut rpc = http_client(&upstream.url);
    let direct = converse(&mut rpc, false);
    rpc.close();
    let trace = dir.path().join("u.jsonl");
    let (_proxy, url) = listening(dir.path(), &trace, &["--url", &upstream.url]);
    let mut rpc = http_client(&url);
    let proxied = converse(&mut rpc, false);
    assert_eq!(direct, proxied);
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

/// `(model, script, case, server variant)`: seed 002's recorded client on
/// one case, and every planted bad client of `tests/e2e/agent_runs.rs`.
const CLIENTS: [(&str, &str, &str, &str); 8] = [
    ("recorded", "recorded.toml", "delete-dana", "honest"),
    (
        "duplicate-liar",
        "planted.toml",
        "add-dana-present",
        "honest",
    ),
    ("no-consent", "planted.toml", "delete-dana", "honest"),
    ("wrong-id", "planted.toml", "delete-dana", "honest"),
    (
        "recorded",
        "recorded.toml",
        "add-dana-missing",
        "unaudited-create",
    ),
    (
        "cross-tenant",
        "planted.toml",
        "add-dana-missing",
        "tenant-override",
    ),
    ("over-budget", "planted.toml", "add-dana-missing", "honest"),
    ("no-answer", "planted.toml", "add-dana-missing", "honest"),
];

/// The agent run's turns as the host would record them: a conversation file.
fn conversation_of(run: &Value) -> String {
    let mut lines = vec![json!({"schema": "mcp-witness.conversation/v1"})];
    for turn in run["trace"]["turns"].as_array().into_iter().flatten() {
        lines.push(json!({"role": "user", "text": turn["user"]}));
        for step in turn["steps"].as_array().into_iter().flatten() {
            let calls: Vec<Value> = step["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| json!({"tool": c["tool"], "arguments": c["arguments"]}))
                .collect();
            lines.push(json!({"role": "assistant", "text": step["text"], "calls": calls}));
        }
        let mut last = json!({"role": "assistant", "text": turn["reply"]});
        if turn["end"] != "answered" {
            last["end"] = turn["end"].clone();
        }
        lines.push(last);
    }
    lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            if let Some(o) = l.as_object_mut() {
                o.retain(|_, v| !v.is_null());
            }
            l.to_string() + "\n"
        })
        .collect()
}

fn checks(verdicts: &Value) -> Vec<(String, String)> {
    verdicts
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            (
                v["check"].as_str().unwrap_or("").to_owned(),
                v["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Every scripted client of the agent runs, twice on the same seeded CRM:
/// once as an agent run (judged live), once replayed by a host through the
/// proxy — the same calls with the same arguments, in the same order, which
/// get the same answers. `trace check` over the proxy's trace and the host's
/// conversation gives every check the verdict the agent run gave it: the
/// same planted clients fail the same checks.
///
/// The agent's own loop cannot be the proxy's host: it runs its server in
/// a sandbox whose only writable place is its jail, where the proxy's trace
/// and jail would be effects of the run it is judging.
#[test]
fn trace_check_reproduces_the_agent_runs_verdicts_for_the_same_clients() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (model, script, case, variant)) in CLIENTS.into_iter().enumerate() {
        let case_file = repo(&format!("experiments/agent/cases/{case}.toml"));
        let server = ["mcp-witness", "testbed", "crm", "--variant", variant];
        let output = Command::new(BIN)
            .args(["agent", "run", "--case", &case_file, "--driver", "scripted"])
            .arg(repo(&format!("experiments/agent/scripts/{script}")))
            .args(["--model", model, "--format", "json", "--"])
            .args(server)
            .args(["--store", "{db}"])
            .env("TMPDIR", dir.path())
            .output()
            .expect("agent run");
        let agent = common::stdout_json(&output);
        let run = &agent["runs"][0];
        let trace = dir.path().join(format!("{i}.jsonl"));
        replay_through_proxy(dir.path(), &case_file, &server, run, &trace);
        let conversation = dir.path().join(format!("{i}.conversation.jsonl"));
        std::fs::write(&conversation, conversation_of(run)).expect("write");
        let check = |format: &str| {
            Command::new(BIN)
                .args(["trace", "check"])
                .arg(&trace)
                .args(["--cases", &case_file, "--conversation"])
                .arg(&conversation)
                .args(["--format", format])
                .output()
                .expect("trace check")
        };
        let checked = check("json");
        let doc = common::stdout_json(&checked);
        assert_eq!(
            checks(&doc["verdicts"]),
            checks(&run["verdicts"]),
            "{model} on {case}: {:#}",
            doc["verdicts"]
        );
        assert_eq!(doc["outcome"], run["outcome"], "{model}");
        assert_eq!(checked.status.code(), output.status.code(), "{model}");
        let failed: Vec<String> = checks(&doc["verdicts"])
            .into_iter()
            .filter(|(_, v)| v == "fail")
            .map(|(c, _)| c)
            .collect();
        assert_eq!(failed.is_empty(), i == 0, "{model}: {failed:?}");
        // The same verdicts for CI: one test case per check, a failure per
        // failed check, valid JUnit.
        let junit = check("junit");
        let xml = String::from_utf8_lossy(&junit.stdout);
        common::validate_junit(&xml);
        assert_eq!(
            xml.matches("<testcase ").count(),
            checks(&doc["verdicts"]).len(),
            "{xml}"
        );
        assert_eq!(xml.matches("<failure ").count(), failed.len(), "{xml}");
        // Without the conversation the trace still judges the calls and
        // the store; consent and say vs do cannot be seen.
        let bare = Command::new(BIN)
            .args(["trace", "check"])
            .arg(&trace)
            .args(["--cases", &case_file, "--format", "json"])
            .output()
            .expect("trace check");
        let bare = common::stdout_json(&bare);
        for (check, verdict) in checks(&bare["verdicts"]) {
            if ["consent", "say-vs-do"].contains(&check.as_str()) {
                assert_eq!(verdict, "skip", "{model} {check}");
            }
        }
    }
}

/// A host that makes the agent run's calls through the proxy, in front of
/// the server on a store seeded as the case seeds it; every answer must be
/// the one the agent run got.
fn replay_through_proxy(dir: &Path, case_file: &str, server: &[&str], run: &Value, trace: &Path) {
    let entry = witness_agent::case::load(Path::new(case_file)).expect("the case loads");
    let seeded = witness_agent::seed::seed(&entry).expect("the case seeds");
    let trace_text = trace.display().to_string();
    let mut args: Vec<String> = ["proxy", "--trace", &trace_text, "--facts-from", case_file]
        .map(str::to_owned)
        .to_vec();
    for store in &seeded.stores {
        args.push("--store".into());
        args.push(format!("{}=sqlite:{}", store.name, store.source.display()));
    }
    for (key, value) in &entry.case.env {
        args.push("--env".into());
        args.push(format!("{key}={value}"));
    }
    args.push("--".into());
    args.extend(server.iter().map(|a| (*a).to_owned()));
    args.extend(["--store".to_owned(), "{db}".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut proxy, mut rpc) = spawn(BIN, &args, dir);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "replaying-host", "version": "1"}});
    rpc.request("initialize", init, TIMEOUT)
        .expect("initialize");
    rpc.notify("notifications/initialized", json!({}))
        .expect("initialized");
    rpc.request("tools/list", json!({}), TIMEOUT).expect("list");
    let calls = run["trace"]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|turn| turn["steps"].as_array().into_iter().flatten())
        .flat_map(|step| step["calls"].as_array().into_iter().flatten());
    for call in calls {
        if call["status"] == "not-sent" {
            continue;
        }
        let params = json!({"name": call["tool"], "arguments": call["arguments"]});
        let answer = rpc.request("tools/call", params, TIMEOUT).expect("call");
        if let witness_wire::rpc::RpcResponse::Result(result) = answer {
            assert_eq!(
                Some(witness_trace::content_of(&result).as_str()),
                call["result"].as_str(),
                "the same call gets the same answer through the proxy"
            );
        } else {
            assert_eq!(call["status"], "rpc-error", "{}: {answer:?}", call["tool"]);
        }
    }
    // The host is done: it closes the proxy's input, and the proxy ends.
    rpc.close();
    let _ = proxy.child.wait();
    wait_for_end(trace);
}

fn published_schema(name: &str) -> Value {
    let printed = Command::new(BIN)
        .args(["schema", name])
        .output()
        .expect("runs");
    serde_json::from_slice(&printed.stdout).expect("a schema")
}

fn assert_valid(schema: &Value, doc: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| e.to_string())
        .take(3)
        .collect();
    assert!(errors.is_empty(), "{errors:#?} in {doc}");
}

/// `--live`: the server runs in its sandbox but writes the real store (its
/// directory is the one writable place besides the jail); the trace says
/// so, records the effect, and the isolation is no better than partial.
#[test]
fn live_writes_the_real_store_and_the_trace_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    let db = data.join("crm.db");
    let conn = rusqlite::Connection::open(&db).expect("db");
    for seed in ["crm-schema.sql", "crm-tenants.sql", "acme-has-dana.sql"] {
        let sql = std::fs::read_to_string(repo(&format!("experiments/agent/seeds/{seed}")))
            .expect("seed");
        conn.execute_batch(&sql).expect("seeds");
    }
    drop(conn);
    let trace = dir.path().join("live.jsonl");
    let trace_text = trace.display().to_string();
    let store = format!("db=sqlite:{}", db.display());
    let args = proxy_args(
        &trace_text,
        &[
            "--live",
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
    let (mut proxy, mut rpc) = spawn(BIN, &args, dir.path());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}});
    rpc.request("initialize", init, TIMEOUT)
        .expect("initialize");
    rpc.notify("notifications/initialized", json!({}))
        .expect("initialized");
    let call = json!({"name": "delete_contact", "arguments": {"id": "c_150"}});
    let answer = rpc.request("tools/call", call, TIMEOUT).expect("call");
    assert!(
        matches!(&answer, witness_wire::rpc::RpcResponse::Result(r) if r["isError"] == false),
        "{answer:?}"
    );
    rpc.close();
    let _ = proxy.child.wait();
    wait_for_end(&trace);
    let conn = rusqlite::Connection::open(&db).expect("db");
    let left: i64 = conn
        .query_row(
            "SELECT count(*) FROM contacts WHERE id = 'c_150'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(left, 0, "the real store was written");
    let entries: Vec<Value> = std::fs::read_to_string(&trace)
        .expect("trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(entries[0]["live"], true);
    let isolation = entries[0]["isolation"].as_str().unwrap_or("");
    assert!(!isolation.starts_with("contained"), "{isolation}");
    let data_dir = data.canonicalize().expect("canonical");
    assert!(
        isolation.contains(&data_dir.display().to_string()),
        "{isolation}"
    );
    assert!(entries.iter().any(|e| e["type"] == "effect"
        && e["calls"] == json!([1])
        && e["effect"]["object"] == "contacts/c_150"
        && e["effect"]["op"] == "delete"));
}

fn alive(pid: i32) -> bool {
    // Signal 0 only asks whether the process exists.
    Pid::from_raw(pid).is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// A host killed while a call is in flight: the proxy sees its input close,
/// stops the server's process group, removes the jail, and ends a trace
/// that `trace check` reads and calls untestable (exit 3).
#[test]
fn killing_the_host_mid_call_leaves_a_readable_trace_and_nothing_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jails = dir.path().join("tmp");
    std::fs::create_dir_all(&jails).expect("tmp");
    let trace = dir.path().join("killed.jsonl");
    // The host: a process that starts the proxy, sends one call that never
    // ends, and is then killed with SIGKILL.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "wait", "arguments": {}}});
    let host_code = format!(
        "import subprocess, sys, time\n\
         p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)\n\
         p.stdin.write(({call:?} + '\\n').encode()); p.stdin.flush()\n\
         time.sleep(60)\n",
        call = call.to_string()
    );
    let db = dir.path().join("none.db").display().to_string();
    let trace_text = trace.display().to_string();
    let server = relay_server();
    let mut host = Command::new("python3")
        .args(["-c", &host_code, BIN, "proxy", "--trace", &trace_text])
        .args([
            "--store",
            &format!("db=sqlite:{db}"),
            "--",
            "python3",
            &server,
            "hang",
        ])
        .env("TMPDIR", &jails)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("host");
    let started = Instant::now();
    while !std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .contains("\"call\":1")
        && started.elapsed() < TIMEOUT
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let jail_dirs = || std::fs::read_dir(&jails).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        jail_dirs(),
        1,
        "the jail exists while the call is in flight"
    );
    let server_pid: Vec<i32> = {
        let out = Command::new("pgrep")
            .args(["-f", &format!("{} hang", relay_server())])
            .output();
        out.map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
    };
    assert!(!server_pid.is_empty(), "the server runs");
    // SIGKILL the host: its pipe to the proxy closes.
    host.kill().expect("kill");
    let _ = host.wait();
    let started = Instant::now();
    while (jail_dirs() > 0 || server_pid.iter().any(|p| alive(*p))) && started.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(jail_dirs(), 0, "no jail is left behind");
    for pid in &server_pid {
        assert!(!alive(*pid), "server {pid} is still running");
    }
    wait_for_end(&trace);
    let checked = Command::new(BIN)
        .args(["trace", "check"])
        .arg(&trace)
        .args(["--format", "json"])
        .output()
        .expect("trace check");
    assert_eq!(checked.status.code(), Some(3));
    let doc = common::stdout_json(&checked);
    // Every line the proxy wrote, and the check's document, are what their
    // published schemas say.
    let line_schema = published_schema("proxy-trace");
    let text = std::fs::read_to_string(&trace).expect("trace");
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).expect("a whole JSON line");
        assert_valid(&line_schema, &entry);
    }
    assert_valid(&published_schema("trace-check"), &doc);
    assert_eq!(doc["outcome"], "untestable");
    let why = doc["trace"]["harness_error"].as_str().unwrap_or("");
    assert!(why.contains("call 1 (wait) never answered"), "{why}");
    assert!(
        doc["source"]["ended"]
            .as_str()
            .is_some_and(|e| e.contains("host"))
    );
}
