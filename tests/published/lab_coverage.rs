//! The coverage experiment, rerun: every published server audited with no
//! plan file gives the numbers committed in `experiments/results/coverage.json`
//! — tools exercised and on what kind of values, what was not exercised,
//! failing checks and which are real, restarts, the audit's exit — and
//! meets the targets with no false failure.
//!
//! It needs the pinned servers (`bash experiments/cases/install.sh`: npm and
//! the pip venv); without them it says so and skips, and under `CI=true` it
//! fails instead. A rerun does not write the same bytes (commit ids, the
//! servers' clocks and environment), which is why the gate is on numbers and
//! lab all carries the documents over rather than rerunning them.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// What must be the same on every run, per server.
fn numbers(document: &Value) -> Vec<Value> {
    document["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let not_exercised: Vec<&Value> = s["not_exercised"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| &t["tool"])
                .collect();
            let failures: Vec<Value> = s["failures"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| json!([f["check"], f["tool"], f["real"].is_string()]))
                .collect();
            json!({
                "name": s["name"],
                "version": s["version"],
                "tools": s["tools"],
                "exercised": s["exercised"],
                "met": s["met"],
                "on_real_values": s["on_real_values"],
                "values": s["values"],
                "not_exercised": not_exercised,
                "failures": failures,
                "false_failures": s["false_failures"],
                "value_rejections": s["value_rejections"],
                "restarts": s["restarts"],
                "exit_code": s["exit_code"],
                "concluded": s["concluded"],
            })
        })
        .collect()
}

#[test]
fn a_rerun_gives_the_committed_numbers_and_meets_every_target() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = repo.join("experiments/cases");
    if let Err(e) = witness_lab::coverage::check_installed(&dir) {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true, and the coverage experiment's servers are missing: {e}"
        );
        eprintln!("SKIPPED: the coverage experiment needs its servers installed. {e}");
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "coverage", "--out"])
        .arg(scratch.path())
        .arg("--cases-dir")
        .arg(&dir)
        .output()
        .expect("mcp-witness runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "a target missed, a false failure, or an audit that could not finish: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
    };
    let produced = read(&scratch.path().join("coverage.json"));
    let committed = read(&repo.join("experiments/results/coverage.json"));
    assert_eq!(
        numbers(&produced),
        numbers(&committed),
        "the coverage experiment moved; if the change is meant, rerun\n  \
         cargo run --release -- lab coverage --out experiments/results --pages reports\n\
         and explain the new numbers in docs/coverage.md"
    );
    for server in produced["servers"].as_array().into_iter().flatten() {
        assert_eq!(server["met"], true, "{server:#}");
        assert_eq!(server["false_failures"], 0, "{server:#}");
    }
    assert_eq!(produced["servers"].as_array().map(Vec::len), Some(6));
    let page = std::fs::read_to_string(scratch.path().join("index.html")).expect("index.html");
    assert!(
        page.contains("id=\"coverage-git\""),
        "the page shows every server"
    );
}
