//! Exercising a server as a user would, with no plan file: the coverage
//! verdict, the protocol a server's own requests meet, the claim probes
//! and the retries. The servers are `tests/fixtures/user_server.py`, in
//! one mode per behaviour, with an empty directory store the audit
//! observes.

use std::process::Command;

use serde_json::Value;

use crate::common::fixture;

/// One audit of `user_server.py MODE {files}`: (exit code, text on stdout,
/// the JSON report it wrote).
fn audit(mode: &str, extra: &[&str]) -> (i32, String, Value) {
    let store = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    std::fs::write(store.path().join("readme.txt"), "hello\n").expect("seed the store");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--era", "legacy", "--settle-ms", "0"])
        .args(["--timeout-ms", "5000"])
        .arg(format!("--store=files=fs:{}", store.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(extra)
        .arg("--")
        .arg("python3")
        .arg(fixture("user_server.py"))
        .args([mode, "{files}"])
        .output()
        .expect("mcp-witness runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let json = std::fs::read_to_string(out.path().join("audit.json")).unwrap_or_else(|e| {
        panic!(
            "{mode}: no audit.json ({e}); stdout {text}; stderr {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let report: Value = serde_json::from_str(&json).expect("audit.json is JSON");
    (output.status.code().unwrap_or(-1), text, report)
}

#[test]
fn an_audit_that_exercised_too_little_exits_3_and_names_the_tools_left() {
    let (code, text, report) = audit("low-coverage", &[]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("NOT CONCLUDED — 1/4 tools exercised"),
        "{text}"
    );
    for tool in ["fetch_a", "fetch_b", "fetch_c"] {
        assert!(
            text.contains(&format!("  not exercised: {tool}: tool error")),
            "{tool}: {text}"
        );
    }
    let coverage = &report["coverage"];
    assert_eq!(coverage["minimum_percent"], 75, "{coverage:#}");
    assert_eq!(coverage["concluded"], false);
    let why = coverage["not_concluded"].as_str().unwrap_or("");
    assert!(
        why.starts_with("1 of 4 tools exercised (25%), below --min-coverage 75%")
            && why.ends_with("not exercised: fetch_a, fetch_b, fetch_c"),
        "{why}"
    );
    // The floor is a default, not a wall: asked for less, the same audit passes.
    let (code, text, _) = audit("low-coverage", &["--min-coverage", "25"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("PASSED — 1/4 tools exercised"),
        "{text}"
    );
}

#[test]
fn with_no_roots_declared_every_roots_request_is_refused_and_none_left_unanswered() {
    let (code, text, report) = audit("roots-per-tool", &[]);
    assert_eq!(report["complete"], true, "{text}");
    assert_eq!(code, 0, "{text}");
    // The server waited on ten roots/list requests in a row, more than
    // the eight a declared-roots client would answer with a list.
    let call = &report["calls"][0];
    let answered = call["response"]["content"][0]["text"].as_str().unwrap_or("");
    assert_eq!(answered, r#"{"error -32601": 10}"#, "{call:#}");
}

#[test]
fn a_server_that_dies_at_start_is_quoted_from_its_stderr() {
    let (code, text, report) = audit("die-at-start", &[]);
    assert_eq!(code, 3, "{text}");
    let reason = report["incomplete_reason"].as_str().unwrap_or("");
    let said = "fatal: cannot open configuration /etc/user-server/settings.toml";
    assert!(reason.contains(said), "{reason}");
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with("INCOMPLETE: no session:") && last.contains(said),
        "{text}"
    );
    assert_eq!(
        text.lines().next(),
        Some("INCOMPLETE — no tool catalog, no tool exercised"),
        "{text}"
    );
}
