//! Attribution with controls, through the binary, on the testbed in busy
//! mode (`testbed serve --busy`): a background indexer that rewrites its
//! table every 20 ms and `save_note` recording a revision just after it
//! answers. With the default settle, the same audit gives the same
//! verdicts every time, the planted lie is caught and confirmed, no honest
//! tool fails, and an after-answer write is never charged to the next call.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-witness");

/// How many audits must agree.
const RUNS: usize = 10;

fn audit(dir: &Path, variant: &str, extra: &[&str]) -> (i32, Value) {
    let store = dir.join("notes.db");
    if !store.exists() {
        let seeded = Command::new(BIN)
            .args(["testbed", "seed", "--store"])
            .arg(&store)
            .status()
            .expect("seed runs");
        assert!(seeded.success());
    }
    let output = Command::new(BIN)
        .args(["audit", "--format", "json"])
        .args(extra)
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .args([
            "--",
            BIN,
            "testbed",
            "serve",
            "--busy",
            "--variant",
            variant,
        ])
        .args(["--store", "{db}"])
        .output()
        .expect("mcp-witness runs");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report)
}

/// Every verdict of both lanes, by check and tool.
fn verdicts(report: &Value) -> BTreeMap<(String, String), String> {
    ["checks", "response"]
        .iter()
        .flat_map(|lane| report[*lane].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                (
                    c["id"].as_str().unwrap_or_default().to_owned(),
                    c["tool"].as_str().unwrap_or_default().to_owned(),
                ),
                c["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn objects(call: &Value, list: &str) -> Vec<String> {
    call[list]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str().map(str::to_owned))
        .collect()
}

fn calls(report: &Value) -> Vec<Value> {
    report["calls"].as_array().cloned().unwrap_or_default()
}

#[test]
fn ten_audits_of_a_busy_server_agree_catch_the_lie_and_fail_no_honest_tool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut seen: Vec<BTreeMap<(String, String), String>> = Vec::new();
    for run in 0..RUNS {
        let (code, report) = audit(dir.path(), "phantom-write", &[]);
        assert_eq!(code, 1, "run {run}: {}", report["incomplete_reason"]);
        let verdicts = verdicts(&report);
        assert_eq!(
            verdicts
                .get(&("EFF-01".into(), "ping".into()))
                .map(String::as_str),
            Some("fail"),
            "run {run}: the planted lie"
        );
        let honest_failures: Vec<&Value> = report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["verdict"] == "fail" && c["tool"] != "ping")
            .collect();
        assert!(
            honest_failures.is_empty(),
            // The calls first: a log that keeps only its end keeps the failures.
            "run {run}: calls: {:#}\nbackground: {}\nhonest tools failed: {honest_failures:#?}",
            report["calls"],
            report["background"]
        );
        // The indexer's table is the server's background, listed apart.
        assert_eq!(
            report["background"][0]["objects"][0], "note_index",
            "run {run}"
        );
        for call in calls(&report) {
            assert!(
                !objects(&call, "effects")
                    .iter()
                    .any(|o| o.starts_with("note_index/")),
                "run {run}: the indexer charged to call {}",
                call["id"]
            );
        }
        // The failure was confirmed by a call that repeated it.
        let confirmation = calls(&report)
            .into_iter()
            .find(|c| c["confirms"].is_u64())
            .expect("a confirmation call");
        assert_eq!(confirmation["tool"], "ping", "run {run}");
        let reason = report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == "EFF-01" && c["tool"] == "ping")
            .and_then(|c| c["reason"].as_str())
            .unwrap_or_default()
            .to_owned();
        assert!(reason.contains("confirmed by call"), "run {run}: {reason}");
        seen.push(verdicts);
    }
    for (run, verdicts) in seen.iter().enumerate().skip(1) {
        assert_eq!(
            verdicts, &seen[0],
            "run {run} gave other verdicts than run 0"
        );
    }
}

#[test]
fn a_write_after_the_answer_is_charged_to_its_call_or_to_none_never_to_the_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    for run in 0..3 {
        let (code, report) = audit(dir.path(), "honest", &[]);
        assert_eq!(code, 0, "run {run}: {:?}", verdicts(&report));
        let calls = calls(&report);
        let first_save = calls
            .iter()
            .position(|c| c["tool"] == "save_note")
            .expect("save_note was called");
        let mut revisions = 0;
        for (at, call) in calls.iter().enumerate() {
            let own = objects(call, "effects")
                .into_iter()
                .filter(|o| o.starts_with("note_revisions/"))
                .count();
            let late = objects(call, "late_effects")
                .into_iter()
                .filter(|o| o.starts_with("note_revisions/"))
                .count();
            revisions += own + late;
            if call["tool"] != "save_note" {
                assert_eq!(
                    own, 0,
                    "run {run}: the revision charged to {}",
                    call["tool"]
                );
            }
            if at < first_save {
                assert_eq!(own + late, 0, "run {run}: before any save");
            }
        }
        assert!(revisions > 0, "run {run}: the revision was never seen");
        let background = report["background"][0]["objects"].clone();
        assert_eq!(background, serde_json::json!(["note_index"]), "run {run}");
    }
}

#[test]
fn without_confirmation_the_report_says_so_and_makes_no_confirmation_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, report) = audit(dir.path(), "phantom-write", &["--no-confirm"]);
    assert_eq!(code, 1);
    assert_eq!(report["unconfirmed"], true);
    assert!(calls(&report).iter().all(|c| c["confirms"].is_null()));
    let (_, confirmed) = audit(dir.path(), "phantom-write", &[]);
    assert!(confirmed.get("unconfirmed").is_none());
}
