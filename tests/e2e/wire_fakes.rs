//! The wire client against servers that misbehave: every run ends in a
//! finding or `incomplete` (exit 3) within its timeout, never a panic or a
//! hang. A call that loses the transport is followed by a restart in the
//! same jail; an audit whose only call was lost concludes nothing (exit 3).
//! The audits declare an empty directory store, so that a clean run has
//! something observed to conclude on.

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

/// Runs an audit of the fake server in `mode`, with an empty directory
/// declared as its store; returns (exit code, report, elapsed).
fn audit(mode: &str, extra: &[&str]) -> (i32, Value, Duration) {
    audit_within(mode, extra, "1500")
}

/// `audit` with a per-call deadline of its own, for a fake whose answer
/// takes the machine's time to produce (megabytes of frames) rather than a
/// fixed delay.
fn audit_within(mode: &str, extra: &[&str], timeout_ms: &str) -> (i32, Value, Duration) {
    let store = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--timeout-ms",
            timeout_ms,
            "--settle-ms",
            "0",
        ])
        .arg(format!("--store=files=fs:{}", store.path().display()))
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

/// The transcripts of the processes the calls went to, in order.
fn sessions(report: &Value) -> Vec<Value> {
    report["transcripts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["role"] == "session")
        .cloned()
        .collect()
}

#[test]
fn a_server_that_dies_mid_call_is_restarted_and_with_nothing_exercised_concludes_nothing() {
    let (code, report, elapsed) = audit("die-mid-call", &[]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["complete"], true, "the plan ran to its end");
    let call = &report["calls"][0];
    assert_eq!(call["outcome"]["status"], "transport-error");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let sessions = sessions(&report);
    assert_eq!(sessions.len(), 2, "the server was started again");
    assert!(
        sessions[0]["exit"]
            .as_str()
            .is_some_and(|e| e.contains('7')),
        "the exit status is recorded: {:#}",
        report["transcripts"]
    );
    assert_eq!(report["restarts"][0]["after_call"], 1);
    assert!(
        report["coverage"]["not_concluded"]
            .as_str()
            .is_some_and(|r| r.contains("no tool was exercised")),
        "{:#}",
        report["coverage"]
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
fn a_long_call_that_reports_progress_is_waited_for_past_its_timeout() {
    // The call takes 3 s, twice the 1.5 s timeout, and reports progress
    // every 0.5 s: each report gives it the timeout again.
    let (code, report, _) = audit("slow-progress", &[]);
    let call = &report["calls"][0];
    assert_eq!(call["outcome"]["status"], "ok", "{call:#}");
    assert_ne!(code, 3, "{}", report["incomplete_reason"]);
    // The progress token the call carried is the one the reports named.
    let sent = report["transcripts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["frames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["text"].as_str().map(str::to_owned))
        .find(|t| t.contains("\"tools/call\""))
        .unwrap_or_default();
    assert!(sent.contains("\"progressToken\":\"call-1\""), "{sent}");
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
    // The cut answer is in the first session's record; a second server
    // was started after it.
    let session = sessions(&report).first().cloned().unwrap_or_default();
    let frames = session["frames"].as_array().cloned().unwrap_or_default();
    let cut = frames
        .iter()
        .find(|f| f["truncated"] == true)
        .expect("a cut frame");
    assert_eq!(report["restarts"].as_array().map(Vec::len), Some(1));
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
    let store = tempfile::tempdir().expect("tempdir");
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
        .arg(format!("--store=files=fs:{}", store.path().display()))
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
    // The server starts in its directory store, as a user starts a server
    // in the folder it works on.
    assert_eq!(cwd, "{jail}/stores/files/tree");
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
fn a_call_that_times_out_is_followed_by_the_rest_of_the_plan_on_a_restarted_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[call]]\ntool = \"b_wait\"\nargs = { text = \"x\" }\n[[call]]\ntool = \"a_note\"\nargs = { text = \"x\" }\n",
    )
    .expect("plan");
    let (code, report, _) = audit(
        "write-then-hang",
        &["--plan", plan.to_str().unwrap_or_default()],
    );
    assert_eq!(
        report["complete"], true,
        "{:#}",
        report["incomplete_reason"]
    );
    let calls: Vec<(&str, &str, u64)> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["confirms"].is_null())
        .map(|c| {
            (
                c["tool"].as_str().unwrap_or(""),
                c["outcome"]["status"].as_str().unwrap_or(""),
                c["session"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [("b_wait", "transport-error", 0), ("a_note", "ok", 1)],
        "the second call went to a new server"
    );
    assert_eq!(report["restarts"][0]["after_call"], 1);
    assert_eq!(sessions(&report).len(), 2);
    // The restarted server wrote in the same jail, and was seen doing it.
    assert_eq!(check_verdict(&report, "EFF-01", "a_note"), "fail");
    assert_eq!(code, 1);
}

fn check_verdict(report: &Value, id: &str, tool: &str) -> String {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == id && c["tool"] == tool)
        .and_then(|c| c["verdict"].as_str())
        .unwrap_or("")
        .to_owned()
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
            // One start for the session (no era detection), so the restart
            // is the second start, which the server refuses.
            "--era",
            "legacy",
            "--out",
        ])
        .arg(&out)
        // The server refuses to start a second time: no restart can save it.
        .args(["--", "python3", &fake(), "write-then-hang-once"])
        .output()
        .expect("runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["complete"], false);
    assert!(
        report["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("could not be started again")),
        "{:#}",
        report["incomplete_reason"]
    );
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
    // Writing and reading 80 MiB takes well over the other fakes' 1.5 s
    // deadline on a loaded machine (90 s seen); the budget, not the deadline, is tested.
    let (code, report, elapsed) = audit_within("big-notifications", &["--era", "legacy"], "300000");
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
    // A bound against a hang, not a speed goal: a debug build reading 80 MiB
    // of frames on a loaded machine has taken 90 s.
    assert!(elapsed < Duration::from_secs(300), "took {elapsed:?}");
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

#[test]
fn with_no_store_and_nothing_observed_no_check_passes_and_the_text_says_not_concluded() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--settle-ms", "0", "--era", "legacy"])
        .args(["--", "python3", &fake(), "garbage"])
        .output()
        .expect("mcp-witness runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains("coverage: 1/1 tools exercised (100%)"),
        "{text}"
    );
    assert!(text.contains("checks: 0 pass, 0 fail"), "{text}");
    assert!(
        text.contains(
            "NOT CONCLUDED: no effect check rests on an observation: nothing was observed: no store was declared, and nothing changed in the jail's scope (exit 3)"
        ),
        "{text}"
    );
    assert!(!text.contains("PASSED"), "{text}");
}

#[test]
fn an_audit_that_exercised_nothing_exits_3_and_says_so() {
    let store = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--settle-ms", "0", "--timeout-ms", "1500"])
        .arg(format!("--store=files=fs:{}", store.path().display()))
        .args(["--", "python3", &fake(), "die-mid-call"])
        .output()
        .expect("mcp-witness runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains("coverage: 0/1 tools exercised (0%)"),
        "{text}"
    );
    assert!(
        text.contains("  not exercised: echo: transport error"),
        "{text}"
    );
    assert!(text.contains("restarted after call 1"), "{text}");
    assert!(
        text.contains(
            "NOT CONCLUDED: no effect check rests on a successful observed call: no tool was exercised (exit 3)"
        ),
        "{text}"
    );
}
