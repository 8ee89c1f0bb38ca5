//! `mcp-witness guidance` against fake servers, over stdio and Streamable HTTP:
//! complete and incomplete discovery, the roots bound, option checks before
//! any launch, and reports that leak nothing a hostile server sends.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::HttpFake;

const SECRET: &str = "SECRET-7f3a9c-do-not-leak";

fn fake() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/guidance_server.py")
        .to_string_lossy()
        .into_owned()
}

fn witness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("mcp-witness runs")
}

/// Runs guidance over stdio against the fake in `mode`.
fn guidance_stdio(mode: &str, extra: &[&str]) -> (i32, Value, Output) {
    let fake = fake();
    let mut args = vec![
        "guidance",
        "--server",
        "fake",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--timeout-ms",
        "3000",
        "--no-netns",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "python3", &fake, "stdio", mode]);
    let output = witness(&args);
    let report = parse(&output);
    (output.status.code().unwrap_or(-1), report, output)
}

fn parse(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not a report ({e}); stdout: {}; stderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn guidance_http(fake: &HttpFake, extra: &[&str]) -> (i32, Value, Output) {
    let mut args = vec![
        "guidance",
        "--server",
        "fake",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--timeout-ms",
        "3000",
        "--url",
        &fake.url,
    ];
    args.extend_from_slice(extra);
    let output = witness(&args);
    let report = parse(&output);
    (output.status.code().unwrap_or(-1), report, output)
}

fn profile<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["profiles"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["profile"] == name))
        .unwrap_or_else(|| panic!("no profile {name} in {report:#}"))
}

fn tools(report: &Value, name: &str) -> Vec<String> {
    profile(report, name)["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn catalogs_differ_by_profile_and_references_become_candidates() {
    let (code, report, _) = guidance_stdio("plain", &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["schema"], "mcp-witness.guidance-report/v1");
    assert_eq!(report["complete"], true);
    assert_eq!(report["passed"], true);
    assert_eq!(report["reference_detection"], "inline-code-known-tools");
    assert_eq!(report["transport"], "stdio");
    assert_eq!(tools(&report, "none"), vec!["echo"]);
    assert_eq!(tools(&report, "sampling"), vec!["echo", "sampler"]);
    assert_eq!(tools(&report, "all"), vec!["echo", "rooter", "sampler"]);
    let candidates = report["candidates"].as_array().cloned().unwrap_or_default();
    // sampler is missing from none, roots, elicitation; rooter from none, sampling, elicitation.
    assert_eq!(candidates.len(), 6, "{candidates:#?}");
    let none_sampler = candidates
        .iter()
        .find(|c| c["profile"] == "none" && c["tool"] == "sampler")
        .expect("a candidate for sampler under none");
    assert_eq!(none_sampler["kind"], "referenced-tool-unavailable");
    assert_eq!(
        none_sampler["available_in"],
        serde_json::json!(["sampling", "all"])
    );
    assert!(report["defects"].as_array().is_some_and(|d| d.is_empty()));
}

#[test]
fn a_required_tool_missing_from_a_profile_is_a_defect_and_exit_1() {
    let (code, report, _) = guidance_stdio(
        "plain",
        &[
            "--profile",
            "none",
            "--profile",
            "sampling",
            "--require-tool",
            "sampler",
            "--require-tool",
            "echo",
        ],
    );
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["passed"], false);
    let defects = report["defects"].as_array().cloned().unwrap_or_default();
    assert_eq!(defects.len(), 1, "{defects:#?}");
    assert_eq!(defects[0]["kind"], "required-tool-unavailable");
    assert_eq!(defects[0]["profile"], "none");
    assert_eq!(defects[0]["tool"], "sampler");
    assert_eq!(defects[0]["available_in"], serde_json::json!(["sampling"]));
    // Only the selected profiles were discovered.
    assert_eq!(report["profiles"].as_array().map(Vec::len), Some(2));
}

#[test]
fn endless_pagination_is_incomplete_with_passed_null_and_exit_3() {
    let (code, report, _) = guidance_stdio("pages-forever", &["--require-tool", "nothing"]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["complete"], false);
    assert_eq!(report["passed"], Value::Null);
    assert!(
        report["candidates"]
            .as_array()
            .is_some_and(|c| c.is_empty())
    );
    assert!(report["defects"].as_array().is_some_and(|d| d.is_empty()));
    let none = profile(&report, "none");
    assert_eq!(none["complete"], false);
    assert_eq!(none["pages"], 20);
    assert_eq!(none["incomplete"]["reason"], "profile-incomplete");
    assert_eq!(none["incomplete"]["cause"], "pagination-incomplete");
}

#[test]
fn a_duplicate_tool_makes_discovery_incomplete() {
    let (code, report, _) = guidance_stdio("duplicate-tool", &["--profile", "none"]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["passed"], Value::Null);
    assert_eq!(
        profile(&report, "none")["incomplete"]["cause"],
        "duplicate-tool"
    );
}

#[test]
fn eight_roots_requests_per_client_request_are_answered_more_are_not() {
    let (code, report, _) = guidance_stdio("roots-eight", &["--profile", "roots"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(profile(&report, "roots")["complete"], true);

    let (code, report, _) = guidance_stdio("roots-flood", &["--profile", "roots"]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["passed"], Value::Null);
    assert_eq!(
        profile(&report, "roots")["incomplete"]["cause"],
        "roots-overflow"
    );
}

#[test]
fn invalid_options_exit_2_before_any_server_starts() {
    let marker = common::LaunchMarker::new();
    let marker_env = format!("MARKER_PORT={}", marker.port);
    let fake = fake();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--settle-ms", "5001"],
        vec!["--settle-ms", "-1"],
        vec!["--settle-ms", "soon"],
        vec!["--require-tool", "bad name"],
        vec!["--profile", "everything"],
    ];
    for extra in cases {
        let mut args = vec![
            "guidance",
            "--server",
            "fake",
            "--no-netns",
            "--env",
            &marker_env,
        ];
        args.extend_from_slice(&extra);
        args.extend_from_slice(&["--", "python3", &fake, "stdio", "launch-marker"]);
        let output = witness(&args);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {output:?}");
        assert!(!marker.launched(), "{extra:?}: the server was started");
    }
    let output = witness(&[
        "guidance",
        "--server",
        "bad\u{1b}label",
        "--",
        "python3",
        &fake,
        "stdio",
        "launch-marker",
    ]);
    assert_eq!(output.status.code(), Some(2));
    for url in [
        "http://example.invalid/mcp",
        "https://example.invalid/mcp",
        "ftp://127.0.0.1/",
    ] {
        let output = witness(&["guidance", "--server", "fake", "--url", url]);
        assert_eq!(output.status.code(), Some(2), "{url}: {output:?}");
    }
    // The marker proves the same invocation does launch when it is valid.
    let output = witness(&[
        "guidance",
        "--server",
        "fake",
        "--settle-ms",
        "0",
        "--profile",
        "none",
        "--no-netns",
        "--env",
        &marker_env,
        "--",
        "python3",
        &fake,
        "stdio",
        "launch-marker",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(marker.launched());
}

fn assert_no_leak(output: &Output) {
    for stream in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(stream);
        for needle in [
            SECRET,
            "\u{1b}",
            "\u{7}",
            "\u{202e}",
            "pwned",
            "rm -rf",
            "drafts",
            "cursor-",
            "password",
            "127.0.0.1",
            "no such method",
        ] {
            assert!(
                !text.contains(needle),
                "{needle:?} leaked into the report: {text}"
            );
        }
    }
}

#[test]
fn a_hostile_server_leaks_nothing_into_either_report_format() {
    for format in ["json", "text"] {
        let fake = fake();
        let output = witness(&[
            "guidance",
            "--server",
            "hostile",
            "--format",
            format,
            "--settle-ms",
            "0",
            "--no-netns",
            "--require-tool",
            "sampler",
            "--",
            "python3",
            &fake,
            "stdio",
            "hostile",
        ]);
        assert_eq!(output.status.code(), Some(1), "{format}: {output:?}");
        assert_no_leak(&output);
        if format == "json" {
            let report = parse(&output);
            let none = profile(&report, "none");
            assert_eq!(none["unreportable_names"], 2);
            assert_eq!(none["tool_count"], 3);
            assert_eq!(none["tools"], serde_json::json!(["echo"]));
            assert_eq!(none["instructions_present"], true);
            // Only identifiers from the instructions are candidates.
            let tools: Vec<&str> = report["candidates"]
                .as_array()
                .map(|c| c.iter().filter_map(|x| x["tool"].as_str()).collect())
                .unwrap_or_default();
            assert!(
                tools.iter().all(|t| ["sampler", "rooter"].contains(t)),
                "{tools:?}"
            );
            assert!(!tools.is_empty());
        }
    }
}

#[test]
fn over_http_streams_carry_roots_requests_and_the_same_report_results() {
    let fake = HttpFake::start("roots-eight");
    let (code, http, output) = guidance_http(&fake, &[]);
    assert_eq!(code, 0, "{http:#} {output:?}");
    assert_eq!(http["transport"], "http");
    let (code, stdio, _) = guidance_stdio("roots-eight", &[]);
    assert_eq!(code, 0);
    let mut stdio = stdio;
    stdio["transport"] = Value::from("http");
    stdio["limits"]["timeout_ms"] = http["limits"]["timeout_ms"].clone();
    assert_eq!(http, stdio, "the transports disagree");
}

#[test]
fn over_http_a_roots_flood_is_incomplete() {
    let fake = HttpFake::start("roots-flood");
    let (code, report, _) = guidance_http(&fake, &["--profile", "roots"]);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(
        profile(&report, "roots")["incomplete"]["cause"],
        "roots-overflow"
    );
}

#[test]
fn over_http_a_stream_that_never_ends_is_cut_at_the_timeout() {
    let fake = HttpFake::start("endless");
    let started = Instant::now();
    let output = witness(&[
        "guidance",
        "--server",
        "fake",
        "--format",
        "json",
        "--profile",
        "none",
        "--timeout-ms",
        "1500",
        "--settle-ms",
        "0",
        "--url",
        &fake.url,
    ]);
    let elapsed = started.elapsed();
    let code = output.status.code().unwrap_or(-1);
    let report = parse(&output);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["passed"], Value::Null);
    let cause = profile(&report, "none")["incomplete"]["cause"].clone();
    assert!(cause == "timeout" || cause == "transport-lost", "{cause}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn over_http_a_hostile_server_leaks_nothing() {
    let fake = HttpFake::start("hostile");
    for format in ["json", "text"] {
        let output = witness(&[
            "guidance",
            "--server",
            "hostile",
            "--format",
            format,
            "--settle-ms",
            "0",
            "--url",
            &fake.url,
        ]);
        assert_eq!(output.status.code(), Some(0), "{format}: {output:?}");
        assert_no_leak(&output);
    }
}

#[test]
fn the_guidance_schema_is_printed() {
    let output = witness(&["schema", "guidance"]);
    assert_eq!(output.status.code(), Some(0));
    let schema: Value = serde_json::from_slice(&output.stdout).expect("a JSON schema");
    assert_eq!(schema["title"], "GuidanceReport");
    assert!(schema["properties"]["passed"].is_object());
}
