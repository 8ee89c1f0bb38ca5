//! End-to-end audits of the built-in testbed through the binary, in every era.

use std::process::Command;

use serde_json::Value;

fn audit(era: &str, variant: &str, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("never-created.db");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--settle-ms",
            "0",
            "--era",
            era,
        ])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .args(extra)
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            variant,
            "--store",
            "{db}",
        ])
        .output()
        .expect("mcp-witness runs");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(!store.exists(), "the user's store path is never touched");
    (output.status.code().unwrap_or(-1), report)
}

fn verdict<'a>(report: &'a Value, id: &str, tool: &str) -> &'a str {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["id"] == id && c["tool"] == tool))
        .and_then(|c| c["verdict"].as_str())
        .unwrap_or("missing")
}

fn ops(report: &Value, tool: &str) -> Vec<(String, String)> {
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

#[test]
fn honest_testbed_passes_in_every_era_with_writes_on_the_right_objects() {
    for (era, expected, version) in [
        ("auto", "modern", "2026-07-28"),
        ("modern", "modern", "2026-07-28"),
        ("legacy", "legacy", "2025-11-25"),
    ] {
        let (code, report) = audit(era, "honest", &[]);
        assert_eq!(code, 0, "era {era}: {:#}", report["checks"]);
        assert_eq!(report["schema"], "mcp-witness.audit/v1");
        assert_eq!(report["era"]["era"], expected, "era {era}");
        assert_eq!(report["era"]["protocol_version"], version);
        assert!(report["isolation"]["level"].is_string());
        assert_eq!(report["complete"], true);
        let tools = report["tools"].as_array().cloned().unwrap_or_default();
        assert_eq!(tools.len(), 11);
        for tool in &tools {
            assert!(tool["annotations"]["readOnlyHint"].is_boolean(), "{tool:#}");
        }
        for check in report["checks"].as_array().into_iter().flatten() {
            if ["EFF-01", "EFF-02", "EFF-03"].contains(&check["id"].as_str().unwrap_or("")) {
                let v = check["verdict"].as_str().unwrap_or("");
                assert!(v == "pass" || v == "skip", "{check:#}");
                assert!(!check["reason"].as_str().unwrap_or("").is_empty());
            }
        }
        // The note save_note names for itself is the one delete_note removes.
        let note = || "notes/witness-save_note".to_owned();
        assert!(ops(&report, "save_note").contains(&(note(), "create".into())));
        assert!(ops(&report, "delete_note").contains(&(note(), "delete".into())));
        assert!(
            ops(&report, "create_webhook").contains(&("webhooks/wh_0001".into(), "create".into()))
        );
        assert!(ops(&report, "list_notes").is_empty());
        assert_eq!(verdict(&report, "EFF-01", "get_note"), "pass");
        assert_eq!(verdict(&report, "EFF-03", "delete_note"), "pass");
    }
}

#[test]
fn a_read_only_lie_fails_eff01_with_the_write_as_evidence() {
    let (code, report) = audit("auto", "lie-readonly", &[]);
    assert_eq!(code, 1);
    assert_eq!(verdict(&report, "EFF-01", "save_note"), "fail");
    let check = report["checks"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["id"] == "EFF-01" && c["tool"] == "save_note")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        check["evidence"]["effects"][0]["object"],
        "db:notes/witness-save_note"
    );
    assert_eq!(check["evidence"]["effects"][0]["op"], "create");
}

#[test]
fn silent_writes_are_caught_although_the_response_is_honest() {
    for (variant, tool) in [
        ("silent-keymint", "get_note"),
        ("shadow-webhook", "list_notes"),
        ("phantom-write", "ping"),
    ] {
        let (code, report) = audit("auto", variant, &[]);
        assert_eq!(code, 1, "{variant}");
        assert_eq!(verdict(&report, "EFF-01", tool), "fail", "{variant}");
    }
}

#[test]
fn secrets_never_reach_the_report() {
    let (_, report) = audit("legacy", "honest", &[]);
    let text = report.to_string();
    // mint_api_key answers with its secret; the report shows only a digest.
    assert!(!text.contains("wk_"), "a key secret leaked");
    assert!(text.contains("[secret blake3:"));
}

#[test]
fn deterministic_runs_write_identical_json() {
    let (_, mut a) = audit("auto", "honest", &["--deterministic"]);
    let (_, mut b) = audit("auto", "honest", &["--deterministic"]);
    // Each run got its own temporary source path; everything else must agree.
    a["stores"][0]["path"] = Value::Null;
    b["stores"][0]["path"] = Value::Null;
    assert!(a == b, "two deterministic runs differ");
    assert!(a["volatile"].as_object().is_some_and(|v| v.is_empty()));
}

#[test]
fn modern_era_on_a_legacy_only_server_is_incomplete() {
    let fake =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_server.py");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit", "--format", "json", "--era", "modern", "--", "python3",
        ])
        .arg(&fake)
        .arg("garbage")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&output.stdout).expect("a report");
    assert!(
        report["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("-32601"))
    );
}

#[test]
fn invalid_invocations_exit_2_before_launching() {
    for args in [
        vec!["audit", "--store", "nonsense", "--", "true"],
        vec!["audit", "--store", "db=oracle:/x", "--", "true"],
        vec!["audit", "--env", "NOEQUALS", "--", "true"],
        vec!["audit", "--plan", "/nonexistent/plan.toml", "--", "true"],
        vec!["audit", "--era", "future", "--", "true"],
        vec!["audit"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn an_existing_store_is_copied_and_never_touched() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("seeded.db");
    let status = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["testbed", "seed", "--store"])
        .arg(&store)
        .status()
        .expect("runs");
    assert!(status.success());
    let before = std::fs::read(&store).expect("read");
    let inode = std::fs::metadata(&store).expect("meta").ino();
    let listing = |d: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let files = listing(dir.path());
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            "phantom-write",
            "--store",
            "{db}",
        ])
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(1),
        "phantom-write writes, so the audit fails"
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("report");
    assert_eq!(report["stores"][0]["existed"], true);
    assert_eq!(
        std::fs::read(&store).expect("read"),
        before,
        "the source store changed"
    );
    assert_eq!(std::fs::metadata(&store).expect("meta").ino(), inode);
    assert_eq!(
        listing(dir.path()),
        files,
        "files appeared beside the source store"
    );
}
