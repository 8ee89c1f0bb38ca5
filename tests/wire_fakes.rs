//! The wire client against servers that misbehave: every run ends in a
//! finding or `incomplete` (exit 3) within its timeout, never a panic or a hang.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

fn fake() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_server.py")
        .to_string_lossy()
        .into_owned()
}

/// Runs an audit of the fake server in `mode`; returns (exit code, report, elapsed).
fn audit(mode: &str, extra: &[&str]) -> (i32, Value, Duration) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--timeout-ms",
            "1500",
            "--settle-ms",
            "0",
        ])
        .args(extra)
        .args(["--", "python3", &fake()])
        .args(mode.split_whitespace())
        .output()
        .expect("mcp-witness runs");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "mode {mode}: stdout is not a report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report, elapsed)
}

fn finding_kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|x| x["kind"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn garbage_on_stdout_is_a_finding_and_the_audit_still_completes() {
    let (code, report, _) = audit("garbage", &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["complete"], true);
    assert!(
        finding_kinds(&report)
            .iter()
            .filter(|k| *k == "stdout-not-json")
            .count()
            >= 2
    );
    assert_eq!(report["era"]["era"], "legacy");
    assert_eq!(report["era"]["protocol_version"], "2025-06-18");
}

#[test]
fn a_server_that_dies_mid_call_ends_incomplete() {
    let (code, report, elapsed) = audit("die-mid-call", &[]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["complete"], false);
    let call = &report["calls"][0];
    assert_eq!(call["outcome"]["status"], "transport-error");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        report["transcripts"]
            .as_array()
            .and_then(|t| t.last())
            .and_then(|t| t["exit"].as_str())
            .is_some_and(|e| e.contains('7')),
        "the exit status is recorded: {:#}",
        report["transcripts"]
    );
}

#[test]
fn a_server_that_never_answers_a_call_ends_incomplete_within_the_timeout() {
    let (code, report, elapsed) = audit("hang-call", &[]);
    assert_eq!(code, 3);
    assert_eq!(report["calls"][0]["outcome"]["status"], "transport-error");
    assert!(
        report["calls"][0]["outcome"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no answer")),
        "{:#}",
        report["calls"][0]
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn a_server_that_never_finishes_the_handshake_ends_incomplete() {
    let (code, report, elapsed) = audit("hang-init", &[]);
    assert_eq!(code, 3);
    assert!(
        report["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("initialize"))
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn endless_pagination_makes_the_catalog_incomplete_never_shorter() {
    let (code, report, _) = audit("pages-forever", &[]);
    assert_eq!(code, 3);
    assert_eq!(report["catalog"]["complete"], false);
    assert_eq!(report["catalog"]["pages"], 20);
    assert!(report["calls"].as_array().is_some_and(|c| c.is_empty()));
}

#[test]
fn a_repeated_cursor_makes_the_catalog_incomplete() {
    let (code, report, _) = audit("repeat-cursor", &[]);
    assert_eq!(code, 3);
    assert!(
        report["catalog"]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("cursor"))
    );
}

#[test]
fn a_duplicate_tool_makes_the_catalog_incomplete() {
    let (code, report, _) = audit("duplicate-tool", &[]);
    assert_eq!(code, 3);
    assert!(
        report["catalog"]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("twice"))
    );
}

#[test]
fn a_malformed_entry_makes_the_catalog_incomplete() {
    let (code, report, _) = audit("malformed-tool", &[]);
    assert_eq!(code, 3);
    assert!(
        report["catalog"]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("malformed"))
    );
}

#[test]
fn an_oversized_line_is_cut_recorded_and_ends_incomplete() {
    let (code, report, _) = audit("oversized", &[]);
    assert_eq!(code, 3);
    assert!(finding_kinds(&report).contains(&"oversized-line".to_string()));
    let session = report["transcripts"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or_default();
    let frames = session["frames"].as_array().cloned().unwrap_or_default();
    let cut = frames
        .iter()
        .find(|f| f["truncated"] == true)
        .expect("a cut frame");
    assert!(cut["bytes"].as_u64().unwrap_or(0) > 9 * 1024 * 1024);
    assert_eq!(cut["text"].as_str().map(str::len), Some(8 * 1024 * 1024));
}

#[test]
fn a_flood_on_stderr_is_bounded() {
    let (code, report, _) = audit("flood-stderr", &[]);
    assert_eq!(code, 0, "{:#}", report["incomplete_reason"]);
    let session = report["transcripts"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or_default();
    assert!(session["stderr_bytes"].as_u64().unwrap_or(0) >= 4 * 1024 * 1024);
    assert!(session["stderr"].as_str().map_or(0, str::len) <= 64 * 1024);
}

fn session_stderr(report: &Value) -> String {
    report["transcripts"]
        .as_array()
        .and_then(|t| t.last())
        .and_then(|t| t["stderr"].as_str())
        .unwrap_or("")
        .to_owned()
}

#[test]
fn the_whole_process_group_is_stopped_at_the_end() {
    // A duration no other process on the machine sleeps: the grandchild's
    // pid inside the sandbox means nothing outside it, its command line does.
    let seconds = format!("300.{}", std::process::id());
    let (code, report, _) = audit(&format!("grandchild {seconds}"), &[]);
    assert_eq!(code, 0, "{:#}", report["incomplete_reason"]);
    let running = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.trim_end() == format!("sleep {seconds}"))
            .collect()
    };
    assert!(running().is_empty(), "the grandchild outlived the audit");
}

#[test]
fn the_server_gets_a_scrubbed_environment_inside_the_jail() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--settle-ms",
            "0",
            "--env",
            "GIVEN=yes",
        ])
        .args(["--", "python3", &fake(), "environment"])
        .env("WITNESS_TEST_SECRET", "hunter2-should-not-pass")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    let stderr = session_stderr(&report);
    assert!(
        !stderr.contains("hunter2"),
        "an unlisted variable reached the server"
    );
    assert!(stderr.contains("env GIVEN=yes"));
    let cwd = stderr
        .lines()
        .find_map(|l| l.strip_prefix("cwd="))
        .unwrap_or("");
    let home = stderr
        .lines()
        .find_map(|l| l.strip_prefix("env HOME="))
        .unwrap_or("");
    // The report names the jail `{jail}`: its real path is incidental.
    assert_eq!(cwd, "{jail}/work");
    assert_eq!(home, "{jail}/home");
    assert_eq!(
        report["target"]["env"],
        serde_json::json!(["GIVEN"]),
        "values of --env are not kept"
    );
}

#[test]
fn a_server_that_stops_reading_cannot_block_the_client_past_its_timeout() {
    let (code, report, elapsed) = audit("stop-reading", &[]);
    assert_eq!(code, 3, "{:#}", report["incomplete_reason"]);
    assert_eq!(report["calls"][0]["outcome"]["status"], "transport-error");
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
}

#[test]
fn an_incomplete_audit_exits_3_even_after_a_failure_and_still_gets_its_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--timeout-ms",
            "1500",
            "--settle-ms",
            "0",
            "--out",
        ])
        .arg(&out)
        .args(["--", "python3", &fake(), "write-then-hang"])
        .output()
        .expect("runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["complete"], false);
    assert!(
        report["checks"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["verdict"] == "fail")),
        "the write before the hang is still evidence: {:#}",
        report["checks"]
    );
    assert_eq!(output.status.code(), Some(3));
    let page = std::fs::read_to_string(out.join("report.html")).expect("report.html written");
    assert!(page.contains("incomplete"));
}

#[test]
fn frame_text_past_the_kept_bytes_budget_is_not_kept() {
    use std::process::Stdio;
    use std::sync::Arc;

    use witness_wire::clock::MonotonicClock;
    use witness_wire::rpc::{RpcClient, RpcResponse};
    use witness_wire::stdio::StdioTransport;

    const BUDGET: usize = 4 * 1024 * 1024;
    let mut child = Command::new("python3")
        .args([&fake(), "big-notifications"])
        .env("BIG_COUNT", "12")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        panic!("piped");
    };
    let transport = StdioTransport::new(stdin, stdout, stderr, Arc::new(MonotonicClock::start()));
    let mut rpc = RpcClient::new(transport).with_kept_budget(BUDGET);
    let answer = rpc.request(
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        Duration::from_secs(20),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(matches!(answer, Ok(RpcResponse::Result(_))), "{answer:?}");
    let transcript = rpc.transcript();
    let kept: usize = transcript.frames.iter().map(|f| f.text.len()).sum();
    assert!(kept <= BUDGET + 64 * 1024, "{kept} bytes kept");
    assert!(transcript.kept_bytes() <= BUDGET);
    // 1 request, 12 notifications, 1 answer: all listed, most only as markers.
    assert_eq!(transcript.frames.len(), 14);
    let markers: Vec<_> = transcript
        .frames
        .iter()
        .filter(|f| f.text.starts_with("[not kept: "))
        .collect();
    assert!(markers.len() >= 8, "{} markers", markers.len());
    assert!(markers.iter().all(|f| f.bytes > 1024 * 1024));
    let exceeded = transcript
        .findings
        .iter()
        .filter(|f| f.kind == witness_wire::transcript::WireFindingKind::FramesBudgetExceeded)
        .count();
    assert_eq!(exceeded, 1);
    // The answer itself is small and still kept whole.
    let last = transcript
        .frames
        .last()
        .map(|f| f.text.as_str())
        .unwrap_or("");
    assert!(last.contains("\"serverInfo\""), "{last}");
}

#[test]
fn an_audit_of_a_server_that_floods_notifications_keeps_at_most_the_budget() {
    // 80 notifications of 1 MiB per process pass the 64 MiB default budget.
    let (code, report, elapsed) = audit("big-notifications", &["--era", "legacy"]);
    assert!(code == 0 || code == 3, "exit {code}");
    assert!(
        finding_kinds(&report)
            .iter()
            .any(|k| k == "frames-budget-exceeded")
    );
    for transcript in report["transcripts"].as_array().into_iter().flatten() {
        let kept: usize = transcript["frames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["text"].as_str().map(str::len))
            .sum();
        assert!(kept <= 64 * 1024 * 1024 + 1024 * 1024, "{kept} bytes kept");
    }
    assert!(elapsed < Duration::from_secs(120), "took {elapsed:?}");
}

#[test]
fn secrets_on_stderr_and_in_error_messages_are_masked() {
    let (_, report, _) = audit("leaky-secrets", &[]);
    let text = report.to_string();
    for secret in ["sk-EEEEsecretVALUE1111", "sk-FFFFsecretVALUE2222"] {
        assert!(!text.contains(secret), "{secret} leaked: {report:#}");
    }
    assert!(text.contains("[secret blake3:"), "{report:#}");
    // Both places were there to be masked: stderr and the call's error.
    let stderr = session_stderr(&report);
    assert!(stderr.contains("token=[secret blake3:"), "{stderr}");
    assert!(
        report["calls"][0].to_string().contains("[secret blake3:"),
        "{:#}",
        report["calls"][0]
    );
}
