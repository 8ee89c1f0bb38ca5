//! The witness proxy end to end: transparent in both eras over stdio and
//! over HTTP, its traces judged by `trace check` exactly as agent runs judge
//! the same behaviour, and a host killed mid-call leaving a readable trace,
//! no server and no jail.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
        // SAFETY: signals the process group this test created.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
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
        rpc.request("server/discover", with(json!({})), TIMEOUT).expect("discover");
    } else {
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                          "clientInfo": {"name": "t", "version": "1"}});
        let answer = rpc.request("initialize", init, TIMEOUT).expect("initialize");
        if let witness_wire::rpc::RpcResponse::Result(result) = answer {
            rpc.negotiated(result["protocolVersion"].as_str().unwrap_or("2025-11-25"));
        }
        rpc.notify("notifications/initialized", json!({})).expect("initialized");
    }
    rpc.request("tools/list", with(json!({})), TIMEOUT).expect("list");
    let call = with(json!({"name": "echo", "arguments": {"x": 1}}));
    rpc.request("tools/call", call, TIMEOUT).expect("call");
    let unknown = with(json!({"name": "nope", "arguments": {}}));
    rpc.request("tools/call", unknown, TIMEOUT).expect("error answer");
    rpc.request("bogus/method", with(json!({})), TIMEOUT).expect("error answer");
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
        let messages = lines.lines().filter(|l| l.contains("\"type\":\"message\"")).count();
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
        let (proxy, url) = listening(dir.path(), &trace, &["--", "python3", &server]);
        let mut rpc = http_client(&url);
        let proxied = converse(&mut rpc, modern);
        assert_eq!(direct, proxied, "modern={modern}");
        rpc.close();
        // SAFETY: the proxy's own process, asked to stop in order.
        unsafe {
            libc::kill(proxy.child.id() as i32, libc::SIGTERM);
        }
        wait_for_end(&trace);
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
