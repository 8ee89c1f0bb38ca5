//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]
#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

pub mod html;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::Value;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Runs the binary; parses stdout as JSON.
pub fn witness(args: &[String]) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .output()
        .expect("mcp-witness runs");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), json)
}

/// A finished run's stdout as JSON, or a panic showing what it printed.
pub fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn check<'a>(report: &'a Value, id: &str, tool: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id && c["tool"] == tool))
        .unwrap_or(&Value::Null)
}

/// Every (object, op) the calls of `tool` caused.
pub fn ops(report: &Value, tool: &str) -> Vec<(String, String)> {
    report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == tool)
        .flat_map(|c| c["effects"].as_array().cloned().unwrap_or_default())
        .map(|e| {
            (
                e["object"].as_str().unwrap_or("").to_owned(),
                e["op"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The installed case-study packages, or `None` after saying loudly why
/// not. Under `CI=true` a missing install is a failure, never a skip.
pub fn case_packages() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/cases");
    match witness_lab::cases::check_installed(&dir) {
        Ok(()) => Some(dir),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true, and the case-study servers are missing: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: this test needs the case-study servers. {e}");
            None
        }
    }
}

pub fn s(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// `tests/fixtures/guidance_server.py` serving Streamable HTTP on a loopback
/// port it chose, killed with its process group on drop.
pub struct HttpFake {
    child: Child,
    pub url: String,
}

impl HttpFake {
    pub fn start(mode: &str) -> Self {
        let mut child = Command::new("python3")
            .arg(fixture("guidance_server.py"))
            .args(["http", mode])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("python3 runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the fake prints its port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpFake {
    fn drop(&mut self) {
        // The process group this test created.
        let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        let _ = self.child.wait();
    }
}

/// Tells whether a server command was launched: the command connects to
/// this loopback listener. (A marker file outside the jail cannot serve:
/// the sandbox refuses that write. A connection gets through only with
/// `--no-netns`, which a control run passes.)
pub struct LaunchMarker {
    listener: std::net::TcpListener,
    pub port: String,
}

impl LaunchMarker {
    pub fn new() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port().to_string();
        Self { listener, port }
    }

    /// A shell-free command that connects once and exits.
    pub fn command(&self) -> Vec<String> {
        s(&[
            "python3",
            "-c",
            "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])))",
            &self.port,
        ])
    }

    /// Whether anything connected (waiting up to half a second).
    pub fn launched(&self) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
        loop {
            if self.listener.accept().is_ok() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Validates JUnit XML against the committed XSD with Python's `xmlschema`
/// (installed pinned by .ci/run). Without it: a loud skip, or under
/// `CI=true` a failure.
pub fn validate_junit(xml: &str) -> bool {
    let probe = Command::new("python3")
        .args(["-c", "import xmlschema"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        let message =
            "python3 with xmlschema is needed to validate JUnit XML (pip install xmlschema==4.3.2)";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{message}; CI=true, so this fails instead of skipping");
        }
        eprintln!("\n!!! SKIPPED JUnit XSD validation: {message} !!!\n");
        return false;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, xml).expect("write");
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/junit-10.xsd");
    let output = Command::new("python3")
        .args([
            "-c",
            "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
        ])
        .arg(&xsd)
        .arg(&file)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "JUnit XML does not validate against junit-10.xsd: {}\n{xml}",
        String::from_utf8_lossy(&output.stderr)
    );
    true
}
